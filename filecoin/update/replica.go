package update

import (
	"fmt"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/c2flow/c2flow/filecoin/circuit"
	"github.com/c2flow/c2flow/filecoin/hash"
	"github.com/c2flow/c2flow/filecoin/merkle"
	"github.com/c2flow/c2flow/filecoin/seal"
)

// Replica is an updated sector in memory: the old replica's tree R, the
// new data's tree D and the new replica's tree R built from the encoding,
// with the commitments (what the vanilla prover reads, vanilla.rs).
// Sectors of test sizes: every tree is held whole.
type Replica struct {
	Shape                                    circuit.UpdateShape
	H                                        int // the high bits rho takes of a node index
	CommC, CommROld, CommDNew, CommRNew, Phi fr.Element
	ROld, DNew, RNew                         *merkle.Tree
	dRows                                    [][]merkle.Node // tree D, leaves first: the apex leaves
}

// Encode encodes dataNew into the old replica labelsROld (whose tree C
// root is commC) with h high bits: each node's new label is old + data·rho
// (rho = H(phi, high bits of its index), phi = H(comm_d_new, comm_r_old)),
// as vanilla.rs encode_into and tests/common encode_new_replica do.
func Encode(s circuit.UpdateShape, h int, labelsROld []merkle.Node, commC merkle.Node, dataNew []merkle.Node) (*Replica, error) {
	n := s.SectorNodes
	if len(labelsROld) != n || len(dataNew) != n {
		return nil, fmt.Errorf("update: %d old labels and %d data nodes for a %d-node sector", len(labelsROld), len(dataNew), n)
	}
	if _, err := HSelect(s, h); err != nil {
		return nil, err
	}
	r := &Replica{Shape: s, H: h}
	treeR := merkle.Shape{Base: s.Tree.Base, Sub: s.Tree.Sub, Top: s.Tree.Top}
	var err error
	if r.ROld, err = merkle.Build(merkle.PoseidonHasher{}, treeR, labelsROld); err != nil {
		return nil, fmt.Errorf("update: tree R old: %w", err)
	}
	if r.DNew, err = merkle.Build(merkle.SHA254Hasher{}, merkle.TreeDShape(), dataNew); err != nil {
		return nil, fmt.Errorf("update: tree D new: %w", err)
	}
	r.dRows = [][]merkle.Node{dataNew}
	for row := dataNew; len(row) > 1; {
		next := make([]merkle.Node, len(row)/2)
		for i := range next {
			next[i] = merkle.Node(hash.Sha254Node(row[2*i], row[2*i+1]))
		}
		r.dRows = append(r.dRows, next)
		row = next
	}
	if r.CommC, err = hash.ElementFromLE(commC); err != nil {
		return nil, fmt.Errorf("update: comm_c: %w", err)
	}
	commROld, err := hash.Hash2(hash.Domain(commC), hash.Domain(r.ROld.Root()))
	if err != nil {
		return nil, err
	}
	if r.CommROld, err = commROld.Element(); err != nil {
		return nil, err
	}
	if r.CommDNew, err = hash.ElementFromLE(r.DNew.Root()); err != nil {
		return nil, fmt.Errorf("update: comm_d_new: %w", err)
	}
	if r.Phi, err = Phi(r.CommDNew, r.CommROld); err != nil {
		return nil, err
	}
	rhos := map[uint32]fr.Element{}
	labelsRNew := make([]merkle.Node, n)
	for i := range n {
		old, err := hash.ElementFromLE(labelsROld[i])
		if err != nil {
			return nil, fmt.Errorf("update: old label %d: %w", i, err)
		}
		d, err := hash.ElementFromLE(dataNew[i])
		if err != nil {
			return nil, fmt.Errorf("update: data node %d: %w", i, err)
		}
		high := High(s, uint32(i), h)
		rho, ok := rhos[high]
		if !ok {
			if rho, err = Rho(r.Phi, high); err != nil {
				return nil, err
			}
			rhos[high] = rho
		}
		labelsRNew[i] = merkle.Node(hash.ElementToLE(EncodeNode(old, d, rho)))
	}
	if r.RNew, err = merkle.Build(merkle.PoseidonHasher{}, treeR, labelsRNew); err != nil {
		return nil, fmt.Errorf("update: tree R new: %w", err)
	}
	commRNew, err := hash.Hash2(hash.Domain(commC), hash.Domain(r.RNew.Root()))
	if err != nil {
		return nil, err
	}
	if r.CommRNew, err = commRNew.Element(); err != nil {
		return nil, err
	}
	return r, nil
}

// PublicInputs are partition k's public inputs.
func (r *Replica) PublicInputs(k int) ([]fr.Element, error) {
	return PublicInputs(r.Shape, k, r.H, r.CommROld, r.CommDNew, r.CommRNew)
}

// Public is the update's public data.
func (r *Replica) Public() Public {
	return Public{CommROld: r.CommROld, CommDNew: r.CommDNew, CommRNew: r.CommRNew, H: r.H}
}

// PartitionProof is partition k's vanilla proof (vanilla.rs
// prove): its apex leaves (tree D's row apex-leaf-bits below the
// partition's root) and, per challenge, the three openings.
func (r *Replica) PartitionProof(k int) (*PartitionProof, error) {
	s := r.Shape
	cs, err := Challenges(s, r.CommRNew, k)
	if err != nil {
		return nil, err
	}
	commC := merkle.Node(hash.ElementToLE(r.CommC))
	row := r.dRows[s.ChallengeBits()-bitLen(s.Partitions())-bitLen(s.ApexLeaves())]
	p := &PartitionProof{CommC: commC, ApexLeaves: append([]merkle.Node(nil), row[k*s.ApexLeaves():(k+1)*s.ApexLeaves()]...)}
	for _, c := range cs {
		var ch ChallengeProof
		for _, t := range []struct {
			tree *merkle.Tree
			dst  **merkle.Proof
		}{{r.ROld, &ch.ROld}, {r.DNew, &ch.DNew}, {r.RNew, &ch.RNew}} {
			if *t.dst, err = t.tree.Prove(uint64(c)); err != nil {
				return nil, err
			}
		}
		p.Challenges = append(p.Challenges, ch)
	}
	return p, nil
}

// Witness is partition k's circuit witness, from its vanilla proof.
func (r *Replica) Witness(k int) (*circuit.UpdateWitness, error) {
	p, err := r.PartitionProof(k)
	if err != nil {
		return nil, err
	}
	return p.Witness(r.Shape, k, r.Public())
}

// UpdateSealed encodes dataNew into a sealed sector's replica (sealed
// with seal.SealParams.KeepReplica): the test updater over a real
// committed-capacity replica, whose comm_r_old is the sector's comm_r.
func UpdateSealed(s circuit.UpdateShape, h int, sealed *seal.Sealed, dataNew []merkle.Node) (*Replica, error) {
	if sealed.Replica == nil {
		return nil, fmt.Errorf("update sector %d: the sealed replica was not kept", sealed.Public.SectorID)
	}
	r, err := Encode(s, h, sealed.Replica, merkle.Node(sealed.CommC), dataNew)
	if err != nil {
		return nil, fmt.Errorf("update sector %d: %w", sealed.Public.SectorID, err)
	}
	if merkle.Node(hash.ElementToLE(r.CommROld)) != merkle.Node(sealed.Public.CommR) {
		return nil, fmt.Errorf("update sector %d: comm_r_old %x is not the sector's comm_r %x", sealed.Public.SectorID, hash.ElementToLE(r.CommROld), sealed.Public.CommR)
	}
	return r, nil
}
