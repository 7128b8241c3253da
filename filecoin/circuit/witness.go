package circuit

import (
	"errors"
	"fmt"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/c2flow/c2flow/filecoin/c1"
	"github.com/c2flow/c2flow/filecoin/hash"
	"github.com/c2flow/c2flow/filecoin/merkle"
	"github.com/c2flow/c2flow/filecoin/proofs"
)

// ErrWitness is returned (wrapped) when a C1 cannot be turned into a
// circuit assignment: a partition out of range, a proof whose layout does
// not fit the shape, inconsistent roots or a non-canonical field element.
var ErrWitness = errors.New("invalid circuit witness")

// PathLevel is one level of a Merkle inclusion path as the circuit takes
// it (storage-proofs-core gadgets/por.rs PathElement): the siblings of the
// path's node, in tree order with the node left out, and the node's
// position among its arity siblings.
type PathLevel struct {
	Siblings []fr.Element
	Index    uint64
}

// Path is an inclusion path from the leaf up: the base-tree levels, then
// the sub-tree level and the top-tree level when the shape has them (the
// order of MerkleProofTrait::as_options, which AuthPath splits into base,
// sub and top).
type Path []PathLevel

// ColumnOpening is a column of tree C and its inclusion path
// (stacked/circuit/column_proof.rs ColumnProof).
type ColumnOpening struct {
	// Rows are the node's labels, layer 1 first.
	Rows []fr.Element
	// Path opens the column's hash in tree C.
	Path Path
}

// ChallengeWitness is the private data of one challenge
// (stacked/circuit/params.rs Proof).
type ChallengeWitness struct {
	// Challenge is the challenged node (labeling_proofs[0].node).
	Challenge uint64
	// DataLeaf is the challenged node's data, the tree D leaf.
	DataLeaf fr.Element
	// CommDPath opens DataLeaf in tree D.
	CommDPath Path
	// CommRLastPath opens the replica node in tree R.
	CommRLastPath Path
	// CommCPath opens the challenged node's column hash in tree C.
	CommCPath Path
	// DRGParents and ExpParents are the parents' column openings (6 and 8).
	DRGParents []ColumnOpening
	ExpParents []ColumnOpening
}

// Witness is the assignment of one partition's StackedCircuit: its public
// commitments, the private roots behind comm_r, and one ChallengeWitness per
// challenge (StackedCircuit's fields).
type Witness struct {
	ReplicaID fr.Element
	CommD     fr.Element
	CommR     fr.Element
	CommRLast fr.Element
	CommC     fr.Element
	Proofs    []ChallengeWitness
}

// FromC1 returns the circuit shape and witness of partition k of a decoded
// C1, as StackedCompound::circuit builds the circuit from the vanilla
// proofs (comm_r_last and comm_c from the first proof, which every proof
// must agree with; replica_id, comm_d and comm_r from the C1's public
// fields). It checks the layout against the proof's shape and that every
// value is a canonical field element; it does not verify the proofs (a
// wrong value makes the circuit unsatisfied).
func FromC1(c *c1.SealCommitPhase1Output, k int) (Shape, *Witness, error) {
	info, err := proofs.Lookup(c.RegisteredProof)
	if err != nil {
		return Shape{}, nil, fmt.Errorf("circuit: witness from C1: %w", err)
	}
	s := ShapeOf(info)
	parts := c.VanillaProofs.Partitions
	if k < 0 || k >= len(parts) {
		return Shape{}, nil, fmt.Errorf("circuit: witness from C1: partition %d of %d: %w", k, len(parts), ErrWitness)
	}
	w, err := witnessOf(s, c.ReplicaID, c.CommD, c.CommR, parts[k])
	if err != nil {
		return Shape{}, nil, fmt.Errorf("circuit: witness of partition %d: %w", k, err)
	}
	return s, w, nil
}

// WitnessOf is FromC1 for vanilla proofs of a given shape (one partition's
// proofs, one per challenge), for circuits of shapes no registered proof
// has.
func WitnessOf(s Shape, replicaID, commD, commR [32]byte, vanilla []c1.Proof) (*Witness, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	w, err := witnessOf(s, replicaID, commD, commR, vanilla)
	if err != nil {
		return nil, fmt.Errorf("circuit: witness: %w", err)
	}
	return w, nil
}

func witnessOf(s Shape, replicaID, commD, commR [32]byte, vanilla []c1.Proof) (*Witness, error) {
	if len(vanilla) != s.Challenges {
		return nil, fmt.Errorf("%d proofs for %d challenges: %w", len(vanilla), s.Challenges, ErrWitness)
	}
	var w Witness
	var err error
	for _, f := range []struct {
		name string
		b    [32]byte
		dst  *fr.Element
	}{
		{"replica_id", replicaID, &w.ReplicaID},
		{"comm_d", commD, &w.CommD},
		{"comm_r", commR, &w.CommR},
		{"comm_r_last", vanilla[0].CommRLastProof.Root(), &w.CommRLast},
		{"comm_c", vanilla[0].ReplicaColumnProofs.CX.InclusionProof.Root(), &w.CommC},
	} {
		if *f.dst, err = element(f.b); err != nil {
			return nil, fmt.Errorf("%s: %w", f.name, err)
		}
	}
	commRLast, commC := vanilla[0].CommRLastProof.Root(), vanilla[0].ReplicaColumnProofs.CX.InclusionProof.Root()
	w.Proofs = make([]ChallengeWitness, len(vanilla))
	for i := range vanilla {
		p := &vanilla[i]
		if p.CommRLastProof.Root() != commRLast {
			return nil, fmt.Errorf("challenge %d: inconsistent comm_r_last: %w", i, ErrWitness)
		}
		if p.ReplicaColumnProofs.CX.InclusionProof.Root() != commC {
			return nil, fmt.Errorf("challenge %d: inconsistent comm_c: %w", i, ErrWitness)
		}
		if err := challengeWitness(s, p, &w.Proofs[i]); err != nil {
			return nil, fmt.Errorf("challenge %d: %w", i, err)
		}
	}
	return &w, nil
}

func challengeWitness(s Shape, p *c1.Proof, cw *ChallengeWitness) error {
	var err error
	if len(p.LabelingProofs) == 0 {
		return fmt.Errorf("no labeling proofs: %w", ErrWitness)
	}
	cw.Challenge = p.LabelingProofs[0].Node
	if cw.DataLeaf, err = element(p.CommDProofs.Leaf()); err != nil {
		return fmt.Errorf("data leaf: %w", err)
	}
	dShape := [3]int{2, 0, 0}
	if cw.CommDPath, err = pathOf(&p.CommDProofs, dShape, [3]int{s.CommDPathLen(), 0, 0}); err != nil {
		return fmt.Errorf("tree D path: %w", err)
	}
	b, su, t := s.TreePathLens()
	tShape, tLens := [3]int{s.Tree.Base, s.Tree.Sub, s.Tree.Top}, [3]int{b, su, t}
	if cw.CommRLastPath, err = pathOf(&p.CommRLastProof, tShape, tLens); err != nil {
		return fmt.Errorf("tree R path: %w", err)
	}
	rc := &p.ReplicaColumnProofs
	if cw.CommCPath, err = pathOf(&rc.CX.InclusionProof, tShape, tLens); err != nil {
		return fmt.Errorf("tree C path of the challenged column: %w", err)
	}
	if len(rc.DrgParents) != DRGParents || len(rc.ExpParents) != ExpParents {
		return fmt.Errorf("%d drg and %d expander parent columns, want %d and %d: %w",
			len(rc.DrgParents), len(rc.ExpParents), DRGParents, ExpParents, ErrWitness)
	}
	cw.DRGParents = make([]ColumnOpening, DRGParents)
	for j := range rc.DrgParents {
		if err := columnOf(s, &rc.DrgParents[j], tShape, tLens, &cw.DRGParents[j]); err != nil {
			return fmt.Errorf("drg parent %d: %w", j, err)
		}
	}
	cw.ExpParents = make([]ColumnOpening, ExpParents)
	for j := range rc.ExpParents {
		if err := columnOf(s, &rc.ExpParents[j], tShape, tLens, &cw.ExpParents[j]); err != nil {
			return fmt.Errorf("expander parent %d: %w", j, err)
		}
	}
	return nil
}

func columnOf(s Shape, cp *c1.ColumnProof, arity, lens [3]int, out *ColumnOpening) error {
	if len(cp.Column.Rows) != s.Layers {
		return fmt.Errorf("column of %d rows, want %d: %w", len(cp.Column.Rows), s.Layers, ErrWitness)
	}
	out.Rows = make([]fr.Element, s.Layers)
	var err error
	for l, r := range cp.Column.Rows {
		if out.Rows[l], err = element(r); err != nil {
			return fmt.Errorf("row %d: %w", l, err)
		}
	}
	if out.Path, err = pathOf(&cp.InclusionProof, arity, lens); err != nil {
		return fmt.Errorf("tree C path: %w", err)
	}
	return nil
}

// pathOf converts a Merkle proof to a Path, checking that it has lens[i]
// levels of arity[i] (base, sub, top) and the matching ProofData variant.
func pathOf(m *c1.MerkleProof, arity, lens [3]int) (Path, error) {
	var parts [3][]c1.PathElement
	switch {
	case lens[2] > 0:
		if m.Data.Top == nil {
			return nil, fmt.Errorf("not a top-tree proof: %w", ErrWitness)
		}
		parts = [3][]c1.PathElement{m.Data.Top.BaseProof.Path, m.Data.Top.SubProof.Path, m.Data.Top.TopProof.Path}
	case lens[1] > 0:
		if m.Data.Sub == nil {
			return nil, fmt.Errorf("not a sub-tree proof: %w", ErrWitness)
		}
		parts = [3][]c1.PathElement{m.Data.Sub.BaseProof.Path, m.Data.Sub.SubProof.Path, nil}
	default:
		if m.Data.Single == nil {
			return nil, fmt.Errorf("not a single-tree proof: %w", ErrWitness)
		}
		parts = [3][]c1.PathElement{m.Data.Single.Path.Path, nil, nil}
	}
	var out Path
	for lv, part := range parts {
		if len(part) != lens[lv] {
			return nil, fmt.Errorf("%d %s path elements, want %d: %w", len(part), levelNames[lv], lens[lv], ErrWitness)
		}
		for i, e := range part {
			if len(e.Hashes) != arity[lv]-1 || e.Index >= uint64(arity[lv]) {
				return nil, fmt.Errorf("path element %d: %d siblings at index %d for arity %d: %w",
					len(out), len(e.Hashes), e.Index, arity[lv], ErrWitness)
			}
			pl := PathLevel{Siblings: make([]fr.Element, len(e.Hashes)), Index: e.Index}
			for j, h := range e.Hashes {
				var err error
				if pl.Siblings[j], err = element(h); err != nil {
					return nil, fmt.Errorf("path element %d sibling %d: %w", i, j, err)
				}
			}
			out = append(out, pl)
		}
	}
	return out, nil
}

func element(b [32]byte) (fr.Element, error) {
	e, err := hash.ElementFromLE(b)
	if err != nil {
		return fr.Element{}, fmt.Errorf("%w: %w", ErrWitness, err)
	}
	return e, nil
}

// PathOf converts a native inclusion proof (filecoin/merkle) to a circuit
// Path: its base, sub and top elements in order, siblings as field
// elements.
func PathOf(p *merkle.Proof) (Path, error) {
	els := p.Path()
	out := make(Path, len(els))
	for i, e := range els {
		out[i] = PathLevel{Siblings: make([]fr.Element, len(e.Hashes)), Index: e.Index}
		for j, h := range e.Hashes {
			var err error
			if out[i].Siblings[j], err = element(h); err != nil {
				return nil, fmt.Errorf("circuit: path element %d sibling %d: %w", i, j, err)
			}
		}
	}
	return out, nil
}
