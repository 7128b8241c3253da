package circuit

import (
	"fmt"
	"math/bits"
	"strconv"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/c2flow/c2flow/filecoin/gadgets"
	"github.com/c2flow/c2flow/filecoin/r1cs"
)

// This file ports storage-proofs-core src/gadgets/por.rs (PoRCircuit with
// a private root, as stacked/circuit/params.rs enforce_inclusion uses it)
// and the Merkle node hashes it calls (filecoin-hashers'
// hash_multi_leaf_circuit for Poseidon and SHA-256).

var frOne = fr.One()

// frElement abbreviates the field element type.
type frElement = fr.Element

// treeHasher hashes the children of one Merkle node in the circuit.
type treeHasher interface {
	hashNode(cs r1cs.System, children []gadgets.AllocatedNum) (gadgets.AllocatedNum, error)
}

// poseidonTree is PoseidonFunction::hash_multi_leaf_circuit: the
// MerkleTree-tagged Poseidon hash of the arity children.
type poseidonTree struct {
	consts map[int]*gadgets.PoseidonConstants
}

func (p poseidonTree) hashNode(cs r1cs.System, children []gadgets.AllocatedNum) (gadgets.AllocatedNum, error) {
	c := p.consts[len(children)]
	if c == nil {
		return gadgets.AllocatedNum{}, fmt.Errorf("no Poseidon constants for arity %d: %w", len(children), ErrShape)
	}
	return gadgets.PoseidonHash(cs, children, c)
}

// sha254Tree is Sha256Function::hash_multi_leaf_circuit: each child is
// decomposed into 255 bits (to_bits_le, namespace "i_num_into_bits"), padded
// to 256 and reordered to the byte order of its 32-byte encoding, the
// concatenation is hashed with SHA-256 ("hash"), and the digest's first 254
// bits in little-endian order are packed into the node ("pack_le"): SHA-256
// trimmed to 254 bits.
type sha254Tree struct{}

func (sha254Tree) hashNode(cs r1cs.System, children []gadgets.AllocatedNum) (gadgets.AllocatedNum, error) {
	pre := make([]gadgets.Boolean, 0, 256*len(children))
	for i, ch := range children {
		cs.Push(strconv.Itoa(i) + "_num_into_bits")
		b := ch.ToBitsLE(cs)
		cs.Pop()
		pre = append(pre, reverseBitNumbering(b)...)
	}
	return hashBitsSHA254(cs, pre)
}

// hashBitsSHA254 is Sha256Function::hash_circuit: SHA-256 of bits (most
// significant bit of each byte first) under "hash", then the digest's bits
// reordered least significant first within each byte, the first 254 packed
// under "pack_le".
func hashBitsSHA254(cs r1cs.System, pre []gadgets.Boolean) (gadgets.AllocatedNum, error) {
	cs.Push("hash")
	be, err := gadgets.SHA256(cs, pre)
	cs.Pop()
	if err != nil {
		return gadgets.AllocatedNum{}, err
	}
	le := reverseBitNumbering(be)
	cs.Push("pack_le")
	n := gadgets.PackBits(cs, le[:gadgets.FieldCapacity])
	cs.Pop()
	return n, nil
}

// reverseBitNumbering pads bits with constant zeros to a whole number of
// bytes and reverses the bits within each byte (storage-proofs-core
// util.rs reverse_bit_numbering): it turns little-endian field bits into
// the most-significant-first bit order of the element's byte encoding, and
// back.
func reverseBitNumbering(b []gadgets.Boolean) []gadgets.Boolean {
	n := (len(b) + 7) / 8 * 8
	out := make([]gadgets.Boolean, n)
	for i := range n {
		// out[8k+j] = padded[8k+7-j]
		src := i/8*8 + 7 - i%8
		if src < len(b) {
			out[i] = b[src]
		} else {
			out[i] = gadgets.Constant(false)
		}
	}
	return out
}

// treeShape is the arity and number of path levels of the base, sub and top
// parts of a tree (0 levels where absent).
type treeShape struct {
	arity [3]int
	lens  [3]int
}

var levelNames = [3]string{"base", "sub", "top"}

// checkPath reports whether p has the levels of t.
func (t treeShape) checkPath(p Path) error {
	want := t.lens[0] + t.lens[1] + t.lens[2]
	if len(p) != want {
		return fmt.Errorf("path of %d levels, want %d: %w", len(p), want, ErrWitness)
	}
	i := 0
	for part := range 3 {
		for range t.lens[part] {
			if len(p[i].Siblings) != t.arity[part]-1 || p[i].Index >= uint64(t.arity[part]) {
				return fmt.Errorf("%s level %d: %d siblings at index %d for arity %d: %w",
					levelNames[part], i, len(p[i].Siblings), p[i].Index, t.arity[part], ErrWitness)
			}
			i++
		}
	}
	return nil
}

// enforceInclusion enforces that leaf is opened under root by path, as
// stacked/circuit/params.rs enforce_inclusion (PoRCircuit::synthesize
// with both leaf and root already allocated and the root private): for
// each part (namespaces "base", "sub", "top") and each level ("merkle tree
// hash i") it allocates the index bits ("index bit j") and siblings ("path
// element j"), inserts the current node and hashes ("computation of
// commitment hash"); then it packs all index bits into one public input
// ("path") and enforces computed root · 1 = root ("enforce root is
// correct"). The path must have been checked with checkPath.
func enforceInclusion(cs r1cs.System, h treeHasher, t treeShape, path Path, root, leaf gadgets.AllocatedNum) error {
	cur := leaf
	var pathBits []gadgets.Boolean
	lvl := 0
	for part := range 3 {
		arity := t.arity[part]
		cs.Push(levelNames[part])
		nbits := bits.TrailingZeros(uint(arity))
		for i := range t.lens[part] {
			el := path[lvl]
			lvl++
			cs.PushIndexed("merkle tree hash", i)
			idx := make([]gadgets.Boolean, nbits)
			for j := range nbits {
				cs.PushIndexed("index bit", j)
				idx[j] = gadgets.Is(gadgets.AllocBit(cs, el.Index>>j&1 == 1))
				cs.Pop()
			}
			pathBits = append(pathBits, idx...)
			sib := make([]gadgets.AllocatedNum, len(el.Siblings))
			for j := range el.Siblings {
				cs.PushIndexed("path element", j)
				sib[j] = gadgets.AllocNum(cs, el.Siblings[j])
				cs.Pop()
			}
			ins, err := insert(cs, cur, idx, sib)
			if err != nil {
				cs.Pop()
				cs.Pop()
				return err
			}
			cs.Push("computation of commitment hash")
			cur, err = h.hashNode(cs, ins)
			cs.Pop()
			cs.Pop()
			if err != nil {
				cs.Pop()
				return err
			}
		}
		cs.Pop()
	}
	cs.Push("path")
	gadgets.PackIntoInputs(cs, pathBits)
	cs.Pop()
	equal(cs, "enforce root is correct", cur, root)
	return nil
}

// equal enforces a · 1 = b (storage-proofs-core gadgets/constraint.rs
// equal).
func equal(cs r1cs.System, name string, a, b gadgets.AllocatedNum) {
	la, lb, lc := cs.Scratch()
	cs.Enforce(name, la.Add(a.Var), lb.Add(r1cs.One), lc.Add(b.Var))
}

// add returns a + b, allocated ("add_num"), enforcing (a + b) · 1 = sum
// ("sum constraint"): constraint.rs add, which encode.rs encode is.
func add(cs r1cs.System, a, b gadgets.AllocatedNum) gadgets.AllocatedNum {
	return addNamed(cs, "add_num", "sum constraint", a, b)
}

// addNamed is add with the sum allocated under alloc and the constraint
// named constraint.
func addNamed(cs r1cs.System, alloc, constraint string, a, b gadgets.AllocatedNum) gadgets.AllocatedNum {
	var v fr.Element
	v.Add(&a.Value, &b.Value)
	cs.Push(alloc)
	res := gadgets.AllocNum(cs, v)
	cs.Pop()
	la, lb, lc := cs.Scratch()
	cs.Enforce(constraint, la.Add(a.Var).Add(b.Var), lb.Add(r1cs.One), lc.Add(res.Var))
	return res
}
