package gadgets

import (
	"fmt"

	"github.com/c2flow/c2flow/filecoin/r1cs"
)

var sha256K = [64]uint32{
	0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
	0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
	0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
	0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
	0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
	0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
	0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
	0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
}

var sha256IV = [8]uint32{
	0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
}

// SHA256IV returns the SHA-256 initial hash value as constants.
func SHA256IV() [8]UInt32 {
	var iv [8]UInt32
	for i, v := range sha256IV {
		iv[i] = UInt32Constant(v)
	}
	return iv
}

// SHA256BlockNoPadding compresses one 512-bit block (bits most significant
// first within each 32-bit word, as bellperson reads them) from the IV and
// returns the 256 state bits, most significant first: bellperson's
// sha256_block_no_padding. No namespace is added.
func SHA256BlockNoPadding(cs r1cs.System, input []Boolean) ([]Boolean, error) {
	if len(input) != 512 {
		return nil, fmt.Errorf("sha256 block of %d bits: %w", len(input), ErrInput)
	}
	st, err := SHA256Compression(cs, input, SHA256IV())
	if err != nil {
		return nil, err
	}
	return stateBitsBE(&st), nil
}

func stateBitsBE(st *[8]UInt32) []Boolean {
	out := make([]Boolean, 0, 256)
	for i := range st {
		out = append(out, st[i].BitsBE()...)
	}
	return out
}

// SHA256 hashes input (a whole number of bytes, bits most significant
// first) with SHA-256's padding as constant bits, block i under namespace
// "block i", and returns the digest bits, most significant first:
// bellperson's sha256.
func SHA256(cs r1cs.System, input []Boolean) ([]Boolean, error) {
	if len(input)%8 != 0 {
		return nil, fmt.Errorf("sha256 of %d bits: not whole bytes: %w", len(input), ErrInput)
	}
	l := uint64(len(input))
	padded := make([]Boolean, 0, len(input)+512+64)
	padded = append(padded, input...)
	padded = append(padded, Constant(true))
	for (len(padded)+64)%512 != 0 {
		padded = append(padded, Constant(false))
	}
	for i := 63; i >= 0; i-- {
		padded = append(padded, Constant(l>>i&1 == 1))
	}
	cur := SHA256IV()
	for i := 0; i < len(padded)/512; i++ {
		cs.PushIndexed("block", i)
		next, err := SHA256Compression(cs, padded[i*512:(i+1)*512], cur)
		cs.Pop()
		if err != nil {
			return nil, err
		}
		cur = next
	}
	return stateBitsBE(&cur), nil
}

// maybe is a word whose additions are deferred until it is used, so they
// can be merged into one addmany (bellperson's Maybe).
type maybe struct {
	deferred []UInt32
	concrete UInt32
	isDef    bool
}

func (x *maybe) compute(m *MultiEq, others ...UInt32) (UInt32, error) {
	if !x.isDef {
		return x.concrete, nil
	}
	ops := append(x.deferred, others...)
	return AddMany(m, ops)
}

// SHA256Compression applies the SHA-256 compression function to one block
// of 512 bits (big-endian words) and the current state, as bellperson's
// sha256_compression_function: the same allocations and constraints in the
// same order, additions batched through a [MultiEq] that is flushed at the
// end. One compression of allocated input costs 25,840 constraints.
func SHA256Compression(cs r1cs.System, input []Boolean, state [8]UInt32) ([8]UInt32, error) {
	var out [8]UInt32
	if len(input) != 512 {
		return out, fmt.Errorf("sha256 compression of %d bits: %w", len(input), ErrInput)
	}
	var w [64]UInt32
	for i := 0; i < 16; i++ {
		w[i], _ = UInt32FromBitsBE(input[i*32 : (i+1)*32])
	}
	m := NewMultiEq(cs)
	var err error
	for i := 16; i < 64; i++ {
		m.PushIndexed("w extension", i)
		m.Push("first xor for s0")
		s0 := w[i-15].Rotr(7).Xor(m, w[i-15].Rotr(18))
		m.Pop()
		m.Push("second xor for s0")
		s0 = s0.Xor(m, w[i-15].Shr(3))
		m.Pop()
		m.Push("first xor for s1")
		s1 := w[i-2].Rotr(17).Xor(m, w[i-2].Rotr(19))
		m.Pop()
		m.Push("second xor for s1")
		s1 = s1.Xor(m, w[i-2].Shr(10))
		m.Pop()
		m.Push("computation of w[i]")
		w[i], err = AddMany(m, []UInt32{w[i-16], s0, w[i-7], s1})
		m.Pop()
		m.Pop()
		if err != nil {
			return out, err
		}
	}

	a := maybe{concrete: state[0]}
	b, c, d := state[1], state[2], state[3]
	e := maybe{concrete: state[4]}
	f, g, h := state[5], state[6], state[7]
	for i := 0; i < 64; i++ {
		m.PushIndexed("compression round", i)
		m.Push("deferred e computation")
		newE, err := e.compute(m)
		m.Pop()
		if err != nil {
			return out, err
		}
		m.Push("first xor for s1")
		s1 := newE.Rotr(6).Xor(m, newE.Rotr(11))
		m.Pop()
		m.Push("second xor for s1")
		s1 = s1.Xor(m, newE.Rotr(25))
		m.Pop()
		m.Push("ch")
		ch := UInt32SHA256Ch(m, newE, f, g)
		m.Pop()
		temp1 := [5]UInt32{h, s1, ch, UInt32Constant(sha256K[i]), w[i]}

		m.Push("deferred a computation")
		newA, err := a.compute(m)
		m.Pop()
		if err != nil {
			return out, err
		}
		m.Push("first xor for s0")
		s0 := newA.Rotr(2).Xor(m, newA.Rotr(13))
		m.Pop()
		m.Push("second xor for s0")
		s0 = s0.Xor(m, newA.Rotr(22))
		m.Pop()
		m.Push("maj")
		maj := UInt32SHA256Maj(m, newA, b, c)
		m.Pop()
		m.Pop()

		h = g
		g = f
		f = newE
		e = maybe{isDef: true, deferred: append(append(make([]UInt32, 0, 7), temp1[:]...), d)}
		d = c
		c = b
		b = newA
		a = maybe{isDef: true, deferred: append(append(make([]UInt32, 0, 8), temp1[:]...), s0, maj)}
	}

	steps := []struct {
		name string
		run  func() (UInt32, error)
	}{
		{"deferred h0 computation", func() (UInt32, error) { return a.compute(m, state[0]) }},
		{"new h1", func() (UInt32, error) { return AddMany(m, []UInt32{state[1], b}) }},
		{"new h2", func() (UInt32, error) { return AddMany(m, []UInt32{state[2], c}) }},
		{"new h3", func() (UInt32, error) { return AddMany(m, []UInt32{state[3], d}) }},
		{"deferred h4 computation", func() (UInt32, error) { return e.compute(m, state[4]) }},
		{"new h5", func() (UInt32, error) { return AddMany(m, []UInt32{state[5], f}) }},
		{"new h6", func() (UInt32, error) { return AddMany(m, []UInt32{state[6], g}) }},
		{"new h7", func() (UInt32, error) { return AddMany(m, []UInt32{state[7], h}) }},
	}
	for k, s := range steps {
		m.Push(s.name)
		out[k], err = s.run()
		m.Pop()
		if err != nil {
			return out, err
		}
	}
	m.Close()
	return out, nil
}
