package circuit

import (
	"fmt"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/c2flow/c2flow/filecoin/gadgets"
	"github.com/c2flow/c2flow/filecoin/r1cs"
)

// This file ports storage-proofs-update src/poseidon/circuit.rs, the
// EmptySectorUpdate-Poseidon circuit: one partition for the whole sector,
// its new data committed in a Poseidon tree of tree R's shape (no apex
// tree), the challenges of every partition of the SHA variant proved
// together.

// PoseidonChallenges is constants.rs challenge_count_poseidon: the
// challenges of the single Poseidon partition.
func (s UpdateShape) PoseidonChallenges() int { return s.Challenges() * s.Partitions() }

// UpdatePoseidonWitness is the assignment of the Poseidon variant:
// h_select (not packed with a partition index: there is one partition),
// the commitments, and each challenge's openings, PathDNew in tree R's
// shape.
type UpdatePoseidonWitness struct {
	HSelect                      fr.Element
	CommROld, CommDNew, CommRNew fr.Element
	CommC, RootROld, RootRNew    fr.Element
	Challenges                   []UpdateChallenge
}

// BlankUpdatePoseidonWitness is the all-zero witness of shape s.
func BlankUpdatePoseidonWitness(s UpdateShape) *UpdatePoseidonWitness {
	b := BlankUpdateWitness(s)
	w := &UpdatePoseidonWitness{Challenges: make([]UpdateChallenge, s.PoseidonChallenges())}
	for i := range w.Challenges {
		c := b.Challenges[0]
		w.Challenges[i] = UpdateChallenge{PathROld: clonePath(c.PathROld), PathRNew: clonePath(c.PathRNew), PathDNew: clonePath(c.PathROld)}
	}
	return w
}

func clonePath(p [][]fr.Element) [][]fr.Element {
	out := make([][]fr.Element, len(p))
	for i := range p {
		out[i] = append([]fr.Element(nil), p[i]...)
	}
	return out
}

// SynthesizeUpdatePoseidon synthesizes the EmptySectorUpdate-Poseidon
// circuit of shape s into cs, as poseidon/circuit.rs synthesize does with
// bellperson; nil w is the blank circuit. The order is the SHA variant's
// without the partition and the apex tree: h_select (aux, input) and its
// bits, the three commitments, phi, comm_c and the roots, comm_r old and
// new, the challenge bits (partition zero, full-width challenges), then
// per challenge rho, the leaves, label_r_new and the tree R old, tree R
// new and tree D new inclusions.
func SynthesizeUpdatePoseidon(cs r1cs.System, s UpdateShape, w *UpdatePoseidonWitness) error {
	u, err := newUpdate(s)
	if err != nil {
		return err
	}
	if w == nil {
		w = BlankUpdatePoseidonWitness(s)
	} else if err := u.checkPoseidon(w); err != nil {
		return fmt.Errorf("circuit: synthesize update (Poseidon) %d nodes: %w", s.SectorNodes, err)
	}
	if err := u.synthesizePoseidon(cs, w); err != nil {
		return fmt.Errorf("circuit: synthesize update (Poseidon) %d nodes: %w", s.SectorNodes, err)
	}
	return nil
}

func (u *update) checkPoseidon(w *UpdatePoseidonWitness) error {
	if len(w.Challenges) != u.s.PoseidonChallenges() {
		return fmt.Errorf("%d challenge proofs, want %d: %w", len(w.Challenges), u.s.PoseidonChallenges(), ErrWitness)
	}
	for i := range w.Challenges {
		c := &w.Challenges[i]
		for _, p := range []struct {
			name string
			path [][]fr.Element
		}{{"path_r_old", c.PathROld}, {"path_r_new", c.PathRNew}, {"path_d_new", c.PathDNew}} {
			if err := u.checkTreeRPath(p.path); err != nil {
				return fmt.Errorf("challenge %d: %s: %w", i, p.name, err)
			}
		}
	}
	return nil
}

// checkTreeRPath reports whether p has tree R's levels and siblings.
func (u *update) checkTreeRPath(p [][]fr.Element) error {
	lvl := 0
	for part := range 3 {
		for range u.treeR.lens[part] {
			if lvl >= len(p) || len(p[lvl]) != u.treeR.arity[part]-1 {
				return fmt.Errorf("level %d does not have %d siblings: %w", lvl, u.treeR.arity[part]-1, ErrWitness)
			}
			lvl++
		}
	}
	if lvl != len(p) {
		return fmt.Errorf("%d levels, want %d: %w", len(p), lvl, ErrWitness)
	}
	return nil
}

func (u *update) synthesizePoseidon(cs r1cs.System, w *UpdatePoseidonWitness) error {
	s := u.s
	hs := s.Hs()

	cs.Push("h_select")
	hsel := gadgets.AllocNum(cs, w.HSelect)
	cs.Pop()
	cs.Push("h_select (public input)")
	hsel.Inputize(cs)
	cs.Pop()
	hb := fieldBits(w.HSelect)
	hSelectBits := make([]gadgets.AllocatedBit, len(hs))
	for i := range hSelectBits {
		cs.PushIndexed("h_select_bit", i)
		hSelectBits[i] = gadgets.AllocBit(cs, hb[i])
		cs.Pop()
	}
	enforceDecomp(cs, "h_select binary decomp", hSelectBits, hsel)

	commROld, commDNew, commRNew, phi, err := u.commitments(cs, w.CommROld, w.CommDNew, w.CommRNew)
	if err != nil {
		return err
	}
	commC := allocNamed(cs, "comm_c", w.CommC)
	rootROld := allocNamed(cs, "root_r_old", w.RootROld)
	rootRNew := allocNamed(cs, "root_r_new", w.RootRNew)
	if err := u.commRs(cs, commC, rootROld, rootRNew, commROld, commRNew); err != nil {
		return err
	}
	partition := allocNamed(cs, "gen_challenge_bits partition zero", fr.Element{})
	cs.Push("gen_challenge_bits")
	gen, err := u.genChallengeBits(cs, commRNew, partition, s.PoseidonChallenges(), s.ChallengeBits())
	cs.Pop()
	if err != nil {
		return err
	}
	for ci, cBits := range gen {
		c := &w.Challenges[ci]
		leafROld, leafDNew, leafRNew, err := u.encodedLeaves(cs, ci, cBits, hSelectBits, phi, c)
		if err != nil {
			return err
		}
		for _, t := range []treeOpening{{"r_old", c.PathROld, leafROld, rootROld}, {"r_new", c.PathRNew, leafRNew, rootRNew}, {"d_new", c.PathDNew, leafDNew, commDNew}} {
			if err := u.openTreeR(cs, ci, cBits, t); err != nil {
				return err
			}
		}
	}
	return nil
}
