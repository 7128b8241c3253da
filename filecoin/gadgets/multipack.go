package gadgets

import (
	"github.com/c2flow/c2flow/filecoin/r1cs"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
)

// packLC appends Σ 2^i·bits[i] to lc and returns it with the value.
func packLC(lc r1cs.LC, bits []Boolean) (r1cs.LC, fr.Element) {
	var v fr.Element
	for i, b := range bits {
		lc = b.AppendLC(lc, pow2[i])
		if b.Value() {
			v.Add(&v, &pow2[i])
		}
	}
	return lc, v
}

// PackIntoInputs exposes bits as public inputs, FieldCapacity (254) bits
// per input, least significant first: for chunk i an input is allocated
// and Σ 2^k·bit_k · 1 = input is enforced ("packing constraint i"), as
// bellperson's multipack::pack_into_inputs.
func PackIntoInputs(cs r1cs.System, bits []Boolean) {
	var buf r1cs.LC
	for i := 0; i*FieldCapacity < len(bits); i++ {
		chunk := bits[i*FieldCapacity : min((i+1)*FieldCapacity, len(bits))]
		var v fr.Element
		buf, v = packLC(buf[:0], chunk)
		in := cs.AllocInput(v)
		cs.PushIndexed("packing constraint", i)
		_, b, c := cs.Scratch()
		cs.Enforce("", buf, b.Add(r1cs.One), c.Add(in))
		cs.Pop()
	}
}

// PackBits packs the first FieldCapacity bits (least significant first)
// into one allocated number ("input") and enforces Σ 2^k·bit_k · 1 = num,
// as bellperson's multipack::pack_bits.
func PackBits(cs r1cs.System, bits []Boolean) AllocatedNum {
	if len(bits) > FieldCapacity {
		bits = bits[:FieldCapacity]
	}
	lc, v := packLC(nil, bits)
	cs.Push("input")
	n := AllocNum(cs, v)
	cs.Pop()
	_, b, c := cs.Scratch()
	cs.Enforce("packing constraint", lc, b.Add(r1cs.One), c.Add(n.Var))
	return n
}

// BytesToBits returns the bits of bytes, most significant bit of each byte
// first (multipack::bytes_to_bits).
func BytesToBits(bytes []byte) []bool {
	out := make([]bool, 0, 8*len(bytes))
	for _, x := range bytes {
		for i := 7; i >= 0; i-- {
			out = append(out, x>>i&1 == 1)
		}
	}
	return out
}

// BytesToBitsLE returns the bits of bytes, least significant bit of each
// byte first (multipack::bytes_to_bits_le).
func BytesToBitsLE(bytes []byte) []bool {
	out := make([]bool, 0, 8*len(bytes))
	for _, x := range bytes {
		for i := 0; i < 8; i++ {
			out = append(out, x>>i&1 == 1)
		}
	}
	return out
}

// ComputeMultipacking returns the public inputs [PackIntoInputs] allocates
// for bits (multipack::compute_multipacking).
func ComputeMultipacking(bits []bool) []fr.Element {
	var out []fr.Element
	for i := 0; i*FieldCapacity < len(bits); i++ {
		chunk := bits[i*FieldCapacity : min((i+1)*FieldCapacity, len(bits))]
		var v fr.Element
		for k, b := range chunk {
			if b {
				v.Add(&v, &pow2[k])
			}
		}
		out = append(out, v)
	}
	return out
}
