package update

import (
	"fmt"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/c2flow/c2flow/filecoin/circuit"
	"github.com/c2flow/c2flow/filecoin/hash"
	"github.com/c2flow/c2flow/filecoin/merkle"
	"github.com/c2flow/c2flow/filecoin/proofs"
	"github.com/c2flow/c2flow/filecoin/seal"
)

// SparseUpdate is a committed-capacity sector sealed sparsely
// (seal.SealSparse) and updated with all-zero new data: an update of any
// sector size, 32GiB and 64GiB included, with no tree held whole. Zero
// data leaves every label as it was (label_r_new = label_r_old + 0·rho),
// so tree R new is the sealed tree R and comm_r_new is comm_r_old, and
// tree D new is the all-zero tree, whose root is the sector's CC comm_d.
// Every opening is a real opening of those trees, so each partition's
// vanilla proof verifies and its witness satisfies the circuit.
type SparseUpdate struct {
	Shape                               circuit.UpdateShape
	H                                   int // the high bits rho takes of a node index
	CommC, CommROld, CommDNew, CommRNew fr.Element
	sealed                              *seal.Sealed     // opens tree R, old and new alike
	dNew                                *seal.SparseTree // the all-zero tree D
}

// UpdateSparseZero updates a sparsely sealed sector of shape s's size
// with all-zero data at h high bits.
func UpdateSparseZero(s circuit.UpdateShape, h int, sealed *seal.Sealed) (*SparseUpdate, error) {
	id := sealed.Public.SectorID
	info, err := proofs.Lookup(sealed.Public.Proof)
	if err != nil {
		return nil, fmt.Errorf("update sector %d: %w", id, err)
	}
	if info.Nodes != uint64(s.SectorNodes) || info.TreeR != (proofs.TreeShape{Base: s.Tree.Base, Sub: s.Tree.Sub, Top: s.Tree.Top}) {
		return nil, fmt.Errorf("update sector %d: a %s sector (%d nodes, tree R %s) is not the update's (%d nodes, tree R %d-%d-%d)",
			id, info.Name, info.Nodes, info.TreeR, s.SectorNodes, s.Tree.Base, s.Tree.Sub, s.Tree.Top)
	}
	if _, err := HSelect(s, h); err != nil {
		return nil, fmt.Errorf("update sector %d: %w", id, err)
	}
	// Tree R must be openable (a sparsely sealed sector) and be the one
	// comm_r commits to.
	p, err := sealed.ProveR(0)
	if err != nil {
		return nil, fmt.Errorf("update sector %d: %w", id, err)
	}
	if [32]byte(p.Root) != sealed.CommRLast {
		return nil, fmt.Errorf("update sector %d: tree R root %x is not comm_r_last %x", id, p.Root, sealed.CommRLast)
	}
	dNew, err := seal.BuildSparse(merkle.SHA254Hasher{}, merkle.TreeDShape(), info.Nodes, merkle.Node{}, nil, 1)
	if err != nil {
		return nil, fmt.Errorf("update sector %d: tree D new: %w", id, err)
	}
	// An update is of a committed-capacity sector, whose comm_d is the
	// all-zero tree's root (comm_d_new here).
	if [32]byte(dNew.Root()) != sealed.Public.CommD {
		return nil, fmt.Errorf("update sector %d: comm_d %x is not the all-zero sector's %x: not a committed-capacity sector", id, sealed.Public.CommD, dNew.Root())
	}
	u := &SparseUpdate{Shape: s, H: h, sealed: sealed, dNew: dNew}
	for _, c := range []struct {
		name string
		dst  *fr.Element
		v    [32]byte
	}{{"comm_c", &u.CommC, sealed.CommC}, {"comm_r_old", &u.CommROld, sealed.Public.CommR}, {"comm_d_new", &u.CommDNew, [32]byte(dNew.Root())}} {
		if *c.dst, err = hash.ElementFromLE(c.v); err != nil {
			return nil, fmt.Errorf("update sector %d: %s: %w", id, c.name, err)
		}
	}
	u.CommRNew = u.CommROld
	return u, nil
}

// PublicInputs are partition k's public inputs.
func (u *SparseUpdate) PublicInputs(k int) ([]fr.Element, error) {
	return PublicInputs(u.Shape, k, u.H, u.CommROld, u.CommDNew, u.CommRNew)
}

// Public is the update's public data.
func (u *SparseUpdate) Public() Public {
	return Public{CommROld: u.CommROld, CommDNew: u.CommDNew, CommRNew: u.CommRNew, H: u.H}
}

// PartitionProof is partition k's vanilla proof, as Replica's: the
// partition's apex leaves (the zero tree D's row apex-leaf-bits below the
// partition's root) and, per challenge, tree R opened as old and as new
// replica and the zero tree D opened.
func (u *SparseUpdate) PartitionProof(k int) (*PartitionProof, error) {
	s := u.Shape
	id := u.sealed.Public.SectorID
	cs, err := Challenges(s, u.CommRNew, k)
	if err != nil {
		return nil, fmt.Errorf("update sector %d: %w", id, err)
	}
	p := &PartitionProof{CommC: merkle.Node(u.sealed.CommC), ApexLeaves: make([]merkle.Node, s.ApexLeaves())}
	apexAt := s.ChallengeBits() - bitLen(s.Partitions()) - bitLen(s.ApexLeaves())
	for j := range p.ApexLeaves {
		if p.ApexLeaves[j], err = u.dNew.Node(apexAt, uint64(k*s.ApexLeaves()+j)); err != nil {
			return nil, fmt.Errorf("update sector %d partition %d: apex leaf %d: %w", id, k, j, err)
		}
	}
	p.Challenges = make([]ChallengeProof, len(cs))
	for i, c := range cs {
		ch := &p.Challenges[i]
		for _, t := range []struct {
			name  string
			prove func(uint64) (*merkle.Proof, error)
			dst   **merkle.Proof
		}{{"tree R old", u.sealed.ProveR, &ch.ROld}, {"tree D new", u.dNew.Prove, &ch.DNew}, {"tree R new", u.sealed.ProveR, &ch.RNew}} {
			if *t.dst, err = t.prove(uint64(c)); err != nil {
				return nil, fmt.Errorf("update sector %d partition %d challenge %d (node %d): %s: %w", id, k, i, c, t.name, err)
			}
		}
	}
	return p, nil
}

// Witness is partition k's circuit witness, from its vanilla proof
// checked natively first (Verify).
func (u *SparseUpdate) Witness(k int) (*circuit.UpdateWitness, error) {
	p, err := u.PartitionProof(k)
	if err != nil {
		return nil, err
	}
	if err := p.Verify(u.Shape, k, u.Public()); err != nil {
		return nil, fmt.Errorf("update sector %d: %w", u.sealed.Public.SectorID, err)
	}
	return p.Witness(u.Shape, k, u.Public())
}
