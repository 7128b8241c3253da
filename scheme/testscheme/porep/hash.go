package porep

import (
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr/poseidon2"
)

// Poseidon2 parameters: gnark-crypto's BLS12-381 defaults. The circuit uses
// the same numbers with gnark's NewPoseidon2FromParameters.
const (
	HashWidth         = 2
	HashFullRounds    = 6
	HashPartialRounds = 50
)

// Hasher is the native 2-to-1 compression function. It holds the
// precomputed round keys; it is safe for concurrent use.
type Hasher struct {
	perm *poseidon2.Permutation
}

// NewHasher returns the Poseidon2 compression function used by the scheme.
func NewHasher() *Hasher {
	return &Hasher{perm: poseidon2.NewPermutation(HashWidth, HashFullRounds, HashPartialRounds)}
}

// Compress returns P(l, r)[1] + r, gnark's Poseidon2 Compress.
func (h *Hasher) Compress(l, r fr.Element) fr.Element {
	x := [2]fr.Element{l, r}
	if err := h.perm.Permutation(x[:]); err != nil {
		panic(err) // width is fixed to 2 above: cannot happen
	}
	var out fr.Element
	out.Add(&x[1], &r)
	return out
}

// Fold hashes a sequence left to right: H(...H(H(v0, v1), v2)..., vn).
// A single element folds to itself.
func (h *Hasher) Fold(v ...fr.Element) fr.Element {
	acc := v[0]
	for i := 1; i < len(v); i++ {
		acc = h.Compress(acc, v[i])
	}
	return acc
}

// NodeTag is the domain separator of a label: layer and node index packed
// into one field element, so labels of different positions never collide.
func NodeTag(layer int, node uint64) fr.Element {
	var t fr.Element
	t.SetUint64(uint64(layer)<<40 | node)
	return t
}

// Label computes a node's label in a layer from the labels of its parents:
// Fold(H(replica_id, tag), drg parents..., expander parents...). Layer 1 has
// no expander parents.
func (h *Hasher) Label(replicaID fr.Element, layer int, node uint64, drg, exp []fr.Element) fr.Element {
	acc := h.Compress(replicaID, NodeTag(layer, node))
	for i := range drg {
		acc = h.Compress(acc, drg[i])
	}
	for i := range exp {
		acc = h.Compress(acc, exp[i])
	}
	return acc
}

// CommR binds the column commitment and the replica tree root.
func (h *Hasher) CommR(commC, commRLast fr.Element) fr.Element {
	return h.Compress(commC, commRLast)
}
