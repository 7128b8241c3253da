package circuit

import (
	"fmt"
	"math/bits"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/c2flow/c2flow/filecoin/gadgets"
	"github.com/c2flow/c2flow/filecoin/merkle"
	"github.com/c2flow/c2flow/filecoin/proofs"
	"github.com/c2flow/c2flow/filecoin/r1cs"
	"github.com/c2flow/c2flow/prover/packed"
)

// This file ports storage-proofs-post's FallbackPoStCircuit
// (src/fallback/circuit.rs) with the PoRCircuit it calls per challenge
// (storage-proofs-core gadgets/por.rs, private root): the window and
// winning PoSt partition circuit, variable for variable and constraint for
// constraint in bellperson's order.

// PoStShape is one FallbackPoSt circuit: fallback::PublicParams.
type PoStShape struct {
	// SectorNodes is the sector size in 32-byte nodes (a power of two).
	SectorNodes uint64
	// Tree is tree R's shape.
	Tree merkle.Shape
	// Sectors is the partition's sector count (sector_count) and
	// Challenges each sector's openings (challenge_count).
	Sectors, Challenges int
}

// PoStShapeOf is the circuit of a registered PoSt proof (its
// CircuitSectors and CircuitChallenges: a window partition, or the 66
// one-challenge sectors of a winning proof).
func PoStShapeOf(info proofs.PoStProofInfo) PoStShape {
	return PoStShape{
		SectorNodes: info.Nodes,
		Tree:        merkle.Shape{Base: info.TreeR.Base, Sub: info.TreeR.Sub, Top: info.TreeR.Top},
		Sectors:     info.CircuitSectors,
		Challenges:  info.CircuitChallenges,
	}
}

// String describes s.
func (s PoStShape) String() string {
	return fmt.Sprintf("nodes=%d tree=%s sectors=%d challenges=%d", s.SectorNodes, s.Tree, s.Sectors, s.Challenges)
}

// NumInputs is the number of public inputs, ONE included: per sector
// comm_r and one packed path a challenge.
func (s PoStShape) NumInputs() int { return 1 + s.Sectors*(1+s.Challenges) }

// treeR is tree R's levels.
func (s PoStShape) treeR() (treeShape, error) {
	if err := s.Tree.Validate(); err != nil {
		return treeShape{}, fmt.Errorf("circuit: PoSt shape %v: %w: %w", s, ErrShape, err)
	}
	for _, a := range []int{s.Tree.Base, s.Tree.Sub, s.Tree.Top} {
		if a != 0 && bits.OnesCount(uint(a)) != 1 {
			return treeShape{}, fmt.Errorf("circuit: PoSt shape %v: %w: arity %d is not a power of two", s, ErrShape, a)
		}
	}
	if s.Sectors < 1 || s.Challenges < 1 {
		return treeShape{}, fmt.Errorf("circuit: PoSt shape %v: %w: no sectors or no challenges", s, ErrShape)
	}
	n, err := merkle.ExpectedPathLength(s.Tree, s.SectorNodes)
	if err != nil {
		return treeShape{}, fmt.Errorf("circuit: PoSt shape %v: %w: %w", s, ErrShape, err)
	}
	t := treeShape{arity: [3]int{s.Tree.Base, s.Tree.Sub, s.Tree.Top}}
	if s.Tree.Sub > 0 {
		t.lens[1] = 1
	}
	if s.Tree.Top > 0 {
		t.lens[2] = 1
	}
	t.lens[0] = n - t.lens[1] - t.lens[2]
	leaves := uint64(1)
	for range t.lens[0] {
		leaves *= uint64(s.Tree.Base)
	}
	if leaves*uint64(s.Tree.BaseTrees()) != s.SectorNodes {
		return treeShape{}, fmt.Errorf("circuit: PoSt shape %v: %w: %d nodes do not fill base trees of arity %d", s, ErrShape, s.SectorNodes, s.Tree.Base)
	}
	return t, nil
}

// PoStSector is one circuit sector's assignment (circuit.rs Sector):
// comm_r (public), comm_c, comm_r_last, and per challenge the opened leaf
// and its path in tree R.
type PoStSector struct {
	CommR, CommC, CommRLast fr.Element
	Leaves                  []fr.Element
	Paths                   []Path
}

// PoStWitness is a partition's assignment: exactly Sectors sectors (a
// short partition repeats its last sector, which may be the same pointer).
type PoStWitness struct {
	Sectors []*PoStSector
}

// BlankPoStWitness is the all-zero witness of s
// (FallbackPoStCompound::blank_circuit), for counting and recording.
func BlankPoStWitness(s PoStShape) (*PoStWitness, error) {
	t, err := s.treeR()
	if err != nil {
		return nil, err
	}
	path := make(Path, 0, t.lens[0]+t.lens[1]+t.lens[2])
	for part := range 3 {
		for range t.lens[part] {
			path = append(path, PathLevel{Siblings: make([]fr.Element, t.arity[part]-1)})
		}
	}
	sec := &PoStSector{Leaves: make([]fr.Element, s.Challenges), Paths: make([]Path, s.Challenges)}
	for i := range sec.Paths {
		sec.Paths[i] = path
	}
	w := &PoStWitness{Sectors: make([]*PoStSector, s.Sectors)}
	for i := range w.Sectors {
		w.Sectors[i] = sec
	}
	return w, nil
}

// SynthesizePoSt synthesizes one partition's FallbackPoStCircuit of shape
// s into cs, as circuit.rs synthesize does with bellperson (the
// extendable path, which parallel provers take, yields the same system).
// w nil synthesizes the blank circuit. A w that does not fit s is an error
// wrapping ErrWitness.
//
// Per sector (namespace "sector_i"): comm_r_last, comm_c, comm_r
// allocated; comm_r made an input; H(comm_c, comm_r_last) (Poseidon,
// arity 2) enforced equal to comm_r; then per challenge
// ("challenge_inclusion_i") the leaf allocated ("value") and its tree R
// path enforced up to comm_r_last, its index bits packed into one input.
func SynthesizePoSt(cs r1cs.System, s PoStShape, w *PoStWitness) error {
	t, err := s.treeR()
	if err != nil {
		return err
	}
	if w == nil {
		if w, err = BlankPoStWitness(s); err != nil {
			return err
		}
	} else if err := checkPoSt(s, t, w); err != nil {
		return fmt.Errorf("circuit: synthesize PoSt %v: %w", s, err)
	}
	h := poseidonTree{consts: map[int]*gadgets.PoseidonConstants{}}
	for _, a := range []int{2, s.Tree.Base, s.Tree.Sub, s.Tree.Top} {
		if a == 0 || h.consts[a] != nil {
			continue
		}
		if h.consts[a], err = gadgets.PoseidonConstantsFor(a); err != nil {
			return fmt.Errorf("circuit: Poseidon constants of arity %d: %w", a, err)
		}
	}
	cs.Push("outer namespace")
	defer cs.Pop()
	for i, sec := range w.Sectors {
		cs.PushIndexed("sector", i)
		err := synthesizePoStSector(cs, h, t, sec)
		cs.Pop()
		if err != nil {
			return fmt.Errorf("circuit: synthesize PoSt sector %d: %w", i, err)
		}
	}
	return nil
}

func checkPoSt(s PoStShape, t treeShape, w *PoStWitness) error {
	if len(w.Sectors) != s.Sectors {
		return fmt.Errorf("%d sectors, want %d: %w", len(w.Sectors), s.Sectors, ErrWitness)
	}
	for i, sec := range w.Sectors {
		if sec == nil || len(sec.Leaves) != s.Challenges || len(sec.Paths) != s.Challenges {
			return fmt.Errorf("sector %d: not %d leaves and paths: %w", i, s.Challenges, ErrWitness)
		}
		for j, p := range sec.Paths {
			if err := t.checkPath(p); err != nil {
				return fmt.Errorf("sector %d challenge %d: %w", i, j, err)
			}
		}
	}
	return nil
}

// synthesizePoStSector is circuit.rs Sector::synthesize.
func synthesizePoStSector(cs r1cs.System, h poseidonTree, t treeShape, sec *PoStSector) error {
	commRLast := allocNamed(cs, "comm_r_last", sec.CommRLast)
	commC := allocNamed(cs, "comm_c", sec.CommC)
	commR := allocNamed(cs, "comm_r", sec.CommR)
	cs.Push("comm_r_input")
	commR.Inputize(cs)
	cs.Pop()
	cs.Push("H_comm_c_comm_r_last")
	hashNum, err := gadgets.PoseidonHash(cs, []gadgets.AllocatedNum{commC, commRLast}, h.consts[2])
	cs.Pop()
	if err != nil {
		return err
	}
	equal(cs, "enforce_comm_c_comm_r_last_hash_comm_r", commR, hashNum)
	for i := range sec.Leaves {
		cs.PushIndexed("challenge_inclusion", i)
		leaf := allocNamed(cs, "value", sec.Leaves[i])
		err := enforceInclusion(cs, h, t, sec.Paths[i], commRLast, leaf)
		cs.Pop()
		if err != nil {
			return fmt.Errorf("challenge %d: %w", i, err)
		}
	}
	return nil
}

// PoStCounts are the sizes of one PoSt partition's circuit: inputs (ONE
// included), aux variables and constraints (without bellperson's
// per-input ones).
type PoStCounts struct {
	Inputs, Aux, Constraints int
}

// CountPoSt counts the circuit of s without synthesizing every sector: a
// partition is Sectors copies of one sector's circuit and nothing else
// (circuit.rs synthesize_default), so one sector is counted (r1cs.Counter)
// and multiplied. A 32GiB window partition costs a 32GiB sector's count,
// a fraction of a second.
func CountPoSt(s PoStShape) (PoStCounts, error) {
	one := s
	one.Sectors = 1
	cs := r1cs.NewCounter()
	if err := SynthesizePoSt(cs, one, nil); err != nil {
		return PoStCounts{}, err
	}
	if err := cs.Err(); err != nil {
		return PoStCounts{}, fmt.Errorf("circuit: count PoSt %v: %w", s, err)
	}
	st := cs.Stats()
	return PoStCounts{Inputs: 1 + s.Sectors*(st.Inputs-1), Aux: s.Sectors * st.Aux, Constraints: s.Sectors * st.Constraints}, nil
}

// PoStSystem is the prover's constraint system of s, per-input
// constraints included, as one sector's circuit repeated: a partition is
// Sectors copies of it and nothing else (circuit.rs synthesize_default),
// each sector's inputs (comm_r, one packed path a challenge) and aux
// allocated in turn. One sector is recorded; a 32GiB window partition's
// system is 2349 times smaller than the partition's recorded whole
// (about 3.6 MB, not 8.4 GB).
func PoStSystem(s PoStShape) (*packed.Repeated, error) {
	one := s
	one.Sectors = 1
	sh := r1cs.NewShape()
	if err := SynthesizePoSt(sh, one, nil); err != nil {
		return nil, err
	}
	if err := sh.Err(); err != nil {
		return nil, fmt.Errorf("circuit: PoSt system %v: %w", s, err)
	}
	block, err := sh.System()
	if err != nil {
		return nil, fmt.Errorf("circuit: PoSt system %v: %w", s, err)
	}
	return packed.NewRepeated(block, s.Sectors, sh.NumInputs-1, true)
}
