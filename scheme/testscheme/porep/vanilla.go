package porep

import (
	"errors"
	"fmt"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
)

// ParentOpening opens a parent's column in comm_c.
type ParentOpening struct {
	Node   uint64
	Column []fr.Element // labels of every layer
	Path   []fr.Element
}

// ChallengeProof is the vanilla proof of one challenged node: openings of
// comm_d, comm_c (the node's column and its parents' columns) and
// comm_r_last, enough to recompute every layer's label of the node.
type ChallengeProof struct {
	Node        uint64
	DataLeaf    fr.Element
	DataPath    []fr.Element
	Column      []fr.Element
	ColumnPath  []fr.Element
	DRG         [DRGParents]ParentOpening
	Exp         [ExpanderParents]ParentOpening
	ReplicaPath []fr.Element
}

// PartitionProof is the vanilla proof of one partition.
type PartitionProof struct {
	Partition  int
	Challenges []ChallengeProof
}

// Statement is what a verifier knows of a sector.
type Statement struct {
	Profile   Profile
	ReplicaID fr.Element
	CommD     fr.Element
	CommR     fr.Element
	Seed      [32]byte
}

// Errors of vanilla verification, wrapped in a *ProofError.
var (
	ErrCommR     = errors.New("comm_r != H(comm_c, comm_r_last)")
	ErrChallenge = errors.New("challenge is not the one derived from replica_id and seed")
	ErrParent    = errors.New("parent is not the graph's parent")
	ErrShape     = errors.New("wrong number of elements")
	ErrCommD     = errors.New("data opening does not match comm_d")
	ErrCommC     = errors.New("column opening does not match comm_c")
	ErrLabel     = errors.New("label does not match its parents")
	ErrCommRLast = errors.New("replica opening does not match comm_r_last")
)

// ProofError names the partition, challenge and field of a failed check.
type ProofError struct {
	Partition int
	Challenge int // -1 when the error is not about one challenge
	Field     string
	Err       error
}

func (e *ProofError) Error() string {
	if e.Challenge < 0 {
		return fmt.Sprintf("partition %d: %s: %v", e.Partition, e.Field, e.Err)
	}
	return fmt.Sprintf("partition %d challenge %d: %s: %v", e.Partition, e.Challenge, e.Field, e.Err)
}

func (e *ProofError) Unwrap() error { return e.Err }

// VerifyPartition checks one partition's vanilla proof natively: the same
// relations the circuit enforces, plus the derivation of challenges and
// parents that the circuit takes as public inputs.
func VerifyPartition(h *Hasher, st Statement, commC, commRLast fr.Element, pp PartitionProof) error {
	p := st.Profile
	perr := func(ci int, field string, err error) error {
		return &ProofError{Partition: pp.Partition, Challenge: ci, Field: field, Err: err}
	}
	if got := h.CommR(commC, commRLast); !got.Equal(&st.CommR) {
		return perr(-1, "comm_r", ErrCommR)
	}
	if len(pp.Challenges) != p.Challenges {
		return perr(-1, "challenges", fmt.Errorf("%w: want %d, got %d", ErrShape, p.Challenges, len(pp.Challenges)))
	}
	want := p.PartitionChallenges(st.ReplicaID, SeedElement(st.Seed), pp.Partition)
	for ci := range pp.Challenges {
		c := &pp.Challenges[ci]
		if c.Node != want[ci] {
			return perr(ci, "node", fmt.Errorf("%w: want %d, got %d", ErrChallenge, want[ci], c.Node))
		}
		if err := verifyChallenge(h, st, commC, commRLast, c); err != nil {
			var pe *ProofError
			if errors.As(err, &pe) {
				pe.Partition, pe.Challenge = pp.Partition, ci
			}
			return err
		}
	}
	return nil
}

func verifyChallenge(h *Hasher, st Statement, commC, commRLast fr.Element, c *ChallengeProof) error {
	p := st.Profile
	perr := func(field string, err error) error { return &ProofError{Field: field, Err: err} }
	shape := func(field string, v []fr.Element, n int) error {
		if len(v) != n {
			return perr(field, fmt.Errorf("%w: want %d, got %d", ErrShape, n, len(v)))
		}
		return nil
	}
	for _, chk := range []error{
		shape("data_path", c.DataPath, p.Depth),
		shape("column", c.Column, p.Layers),
		shape("column_path", c.ColumnPath, p.Depth),
		shape("replica_path", c.ReplicaPath, p.Depth),
	} {
		if chk != nil {
			return chk
		}
	}
	if r := h.RootFromPath(c.DataLeaf, c.Node, c.DataPath); !r.Equal(&st.CommD) {
		return perr("data_path", ErrCommD)
	}
	if r := h.RootFromPath(h.Fold(c.Column...), c.Node, c.ColumnPath); !r.Equal(&commC) {
		return perr("column_path", ErrCommC)
	}
	drg, exp := p.Parents(c.Node)
	openings := func(kind string, want []uint64, got []ParentOpening) error {
		for k := range got {
			o := &got[k]
			field := fmt.Sprintf("%s_parents[%d]", kind, k)
			if o.Node != want[k] {
				return perr(field+".node", fmt.Errorf("%w: want %d, got %d", ErrParent, want[k], o.Node))
			}
			if err := shape(field+".column", o.Column, p.Layers); err != nil {
				return err
			}
			if err := shape(field+".path", o.Path, p.Depth); err != nil {
				return err
			}
			if r := h.RootFromPath(h.Fold(o.Column...), o.Node, o.Path); !r.Equal(&commC) {
				return perr(field+".path", ErrCommC)
			}
		}
		return nil
	}
	if err := openings("drg", drg[:], c.DRG[:]); err != nil {
		return err
	}
	if err := openings("exp", exp[:], c.Exp[:]); err != nil {
		return err
	}
	drgL := make([]fr.Element, DRGParents)
	expL := make([]fr.Element, ExpanderParents)
	for l := 1; l <= p.Layers; l++ {
		for k := range c.DRG {
			drgL[k] = c.DRG[k].Column[l-1]
		}
		var e []fr.Element
		if l > 1 {
			for k := range c.Exp {
				expL[k] = c.Exp[k].Column[l-2]
			}
			e = expL
		}
		if got := h.Label(st.ReplicaID, l, c.Node, drgL, e); !got.Equal(&c.Column[l-1]) {
			return perr(fmt.Sprintf("column[%d]", l-1), ErrLabel)
		}
	}
	var rep fr.Element
	rep.Add(&c.Column[p.Layers-1], &c.DataLeaf)
	if r := h.RootFromPath(rep, c.Node, c.ReplicaPath); !r.Equal(&commRLast) {
		return perr("replica_path", ErrCommRLast)
	}
	return nil
}
