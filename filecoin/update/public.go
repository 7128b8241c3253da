package update

import (
	"fmt"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/c2flow/c2flow/filecoin/circuit"
)

// Phi is vanilla.rs phi: H(comm_d_new, comm_r_old) under the randomness
// Poseidon, the seed of every rho of an update.
func Phi(commDNew, commROld fr.Element) (fr.Element, error) {
	r, err := newRandomness()
	if err != nil {
		return fr.Element{}, err
	}
	return r.hash(commDNew, commROld)
}

// Rho is vanilla.rs rho: H(phi, high), high the h high bits of a node
// index; a node's new label is its old label + its new data · rho.
func Rho(phi fr.Element, high uint32) (fr.Element, error) {
	r, err := newRandomness()
	if err != nil {
		return fr.Element{}, err
	}
	var h fr.Element
	h.SetUint64(uint64(high))
	return r.hash(phi, h)
}

// High is the h high bits of node c of a sector of shape s (the value
// rho hashes).
func High(s circuit.UpdateShape, c uint32, h int) uint32 {
	return c >> (s.ChallengeBits() - h)
}

// EncodeNode is the new replica label of one node: labelROld + labelDNew·rho
// (gadgets.rs label_r_new, vanilla.rs encoding).
func EncodeNode(labelROld, labelDNew, rho fr.Element) fr.Element {
	var v fr.Element
	v.Mul(&labelDNew, &rho)
	v.Add(&v, &labelROld)
	return v
}

// HSelect is constants.rs h_select: 2^i for h = Hs()[i], the first such i.
func HSelect(s circuit.UpdateShape, h int) (uint64, error) {
	for i, v := range s.Hs() {
		if v == h {
			return 1 << i, nil
		}
	}
	return 0, fmt.Errorf("update: h %d is not one of %v for a %d-node sector", h, s.Hs(), s.SectorNodes)
}

// PublicInputs are partition k's Groth16 public inputs, from public data
// alone (circuit.rs PublicInputs::new and to_vec): k | h_select <<
// partition bits, comm_r_old, comm_d_new, comm_r_new.
func PublicInputs(s circuit.UpdateShape, k, h int, commROld, commDNew, commRNew fr.Element) ([]fr.Element, error) {
	if k < 0 || k >= s.Partitions() {
		return nil, fmt.Errorf("update: partition %d of %d", k, s.Partitions())
	}
	hs, err := HSelect(s, h)
	if err != nil {
		return nil, err
	}
	pb := 0
	for 1<<pb < s.Partitions() {
		pb++
	}
	var khs fr.Element
	khs.SetUint64(uint64(k) | hs<<pb)
	return []fr.Element{khs, commROld, commDNew, commRNew}, nil
}
