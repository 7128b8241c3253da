package circuit

import (
	"fmt"
	"strconv"

	"github.com/c2flow/c2flow/filecoin/gadgets"
	"github.com/c2flow/c2flow/filecoin/proofs"
	"github.com/c2flow/c2flow/filecoin/r1cs"
)

// Synthesize synthesizes one partition's StackedCircuit of shape s into cs,
// variable for variable and constraint for constraint as rust-fil-proofs'
// StackedCircuit::synthesize (storage-proofs-porep stacked/circuit/proof.rs
// and params.rs Proof::synthesize) does with bellperson, so that the R1CS
// cs sees is the one Filecoin's Groth16 parameters were generated for.
//
// w is the assignment; nil synthesizes the blank circuit
// (StackedCompound::blank_circuit) with zero values, for systems that
// record or count the shape. A w that does not fit s is an error wrapping
// ErrWitness; a w whose values are wrong synthesizes, and a checking
// witness builder names the first unsatisfied constraint.
//
// The order: replica_id (aux, then its input), its 255 bits, comm_d and
// comm_r (each aux then input), comm_r_last, comm_c, comm_r =
// Poseidon(comm_c, comm_r_last); then per challenge ("challenge_i"): the
// data leaf and its tree D inclusion, the DRG then expander parents'
// columns, column hashes and tree C inclusions, the challenge's 64 bits and
// its input, the labels of every layer, the encoding of the replica node
// and its tree R inclusion, and the challenged column's hash and tree C
// inclusion. Every inclusion adds one public input (its path bits).
func Synthesize(cs r1cs.System, s Shape, w *Witness) error {
	c, err := newStacked(s)
	if err != nil {
		return err
	}
	if w == nil {
		w = BlankWitness(s)
	} else if err := c.check(w); err != nil {
		return fmt.Errorf("circuit: synthesize %v: %w", s, err)
	}
	if err := c.synthesize(cs, w); err != nil {
		return fmt.Errorf("circuit: synthesize %v: %w", s, err)
	}
	return nil
}

// stacked holds what synthesis needs besides the values.
type stacked struct {
	s        Shape
	treeD    treeShape
	treeRC   treeShape
	poseidon poseidonTree
	column   *gadgets.PoseidonConstants
	hash2    *gadgets.PoseidonConstants
}

func newStacked(s Shape) (*stacked, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	b, su, t := s.TreePathLens()
	c := &stacked{
		s:        s,
		treeD:    treeShape{arity: [3]int{2, 0, 0}, lens: [3]int{s.CommDPathLen(), 0, 0}},
		treeRC:   treeShape{arity: [3]int{s.Tree.Base, s.Tree.Sub, s.Tree.Top}, lens: [3]int{b, su, t}},
		poseidon: poseidonTree{consts: map[int]*gadgets.PoseidonConstants{}},
	}
	for _, a := range []int{2, s.Tree.Base, s.Tree.Sub, s.Tree.Top, s.Layers} {
		if a == 0 || c.poseidon.consts[a] != nil {
			continue
		}
		pc, err := gadgets.PoseidonConstantsFor(a)
		if err != nil {
			return nil, fmt.Errorf("circuit: Poseidon constants of arity %d: %w", a, err)
		}
		c.poseidon.consts[a] = pc
	}
	c.column = c.poseidon.consts[s.Layers]
	c.hash2 = c.poseidon.consts[2]
	return c, nil
}

// check verifies that w has the layout of the circuit's shape.
func (c *stacked) check(w *Witness) error {
	if len(w.Proofs) != c.s.Challenges {
		return fmt.Errorf("%d challenge proofs, want %d: %w", len(w.Proofs), c.s.Challenges, ErrWitness)
	}
	for i := range w.Proofs {
		p := &w.Proofs[i]
		if err := c.treeD.checkPath(p.CommDPath); err != nil {
			return fmt.Errorf("challenge %d: tree D path: %w", i, err)
		}
		if err := c.treeRC.checkPath(p.CommRLastPath); err != nil {
			return fmt.Errorf("challenge %d: tree R path: %w", i, err)
		}
		if err := c.treeRC.checkPath(p.CommCPath); err != nil {
			return fmt.Errorf("challenge %d: tree C path: %w", i, err)
		}
		if len(p.DRGParents) != DRGParents || len(p.ExpParents) != ExpParents {
			return fmt.Errorf("challenge %d: %d drg and %d expander parents, want %d and %d: %w",
				i, len(p.DRGParents), len(p.ExpParents), DRGParents, ExpParents, ErrWitness)
		}
		for j, col := range append(append([]ColumnOpening(nil), p.DRGParents...), p.ExpParents...) {
			if len(col.Rows) != c.s.Layers {
				return fmt.Errorf("challenge %d: parent %d: column of %d rows, want %d: %w", i, j, len(col.Rows), c.s.Layers, ErrWitness)
			}
			if err := c.treeRC.checkPath(col.Path); err != nil {
				return fmt.Errorf("challenge %d: parent %d: tree C path: %w", i, j, err)
			}
		}
	}
	return nil
}

func (c *stacked) synthesize(cs r1cs.System, w *Witness) error {
	cs.Push("replica_id")
	replicaID := gadgets.AllocNum(cs, w.ReplicaID)
	cs.Pop()
	cs.Push("replica_id_input")
	replicaID.Inputize(cs)
	cs.Pop()
	cs.Push("replica_id_bits")
	replicaIDBits := reverseBitNumbering(replicaID.ToBitsLE(cs))
	cs.Pop()

	cs.Push("comm_d")
	commD := gadgets.AllocNum(cs, w.CommD)
	cs.Pop()
	cs.Push("comm_d_input")
	commD.Inputize(cs)
	cs.Pop()

	cs.Push("comm_r")
	commR := gadgets.AllocNum(cs, w.CommR)
	cs.Pop()
	cs.Push("comm_r_input")
	commR.Inputize(cs)
	cs.Pop()

	cs.Push("comm_r_last")
	commRLast := gadgets.AllocNum(cs, w.CommRLast)
	cs.Pop()
	cs.Push("comm_c")
	commC := gadgets.AllocNum(cs, w.CommC)
	cs.Pop()

	cs.Push("H_comm_c_comm_r_last")
	h, err := gadgets.PoseidonHash(cs, []gadgets.AllocatedNum{commC, commRLast}, c.hash2)
	cs.Pop()
	if err != nil {
		return fmt.Errorf("comm_r hash: %w", err)
	}
	equal(cs, "enforce comm_r = H(comm_c || comm_r_last)", commR, h)

	for i := range w.Proofs {
		cs.Push("challenge_" + strconv.Itoa(i))
		err := c.challenge(cs, &w.Proofs[i], commD, commC, commRLast, replicaIDBits)
		cs.Pop()
		if err != nil {
			return fmt.Errorf("challenge %d: %w", i, err)
		}
	}
	return nil
}

// allocColumn allocates a column's rows ("column/column_num_row_i").
func allocColumn(cs r1cs.System, rows []frElement) []gadgets.AllocatedNum {
	out := make([]gadgets.AllocatedNum, len(rows))
	cs.Push("column")
	for i := range rows {
		cs.Push("column_num_row_" + strconv.Itoa(i))
		out[i] = gadgets.AllocNum(cs, rows[i])
		cs.Pop()
	}
	cs.Pop()
	return out
}

// parentColumns allocates the columns of parents (namespace prefix kind:
// "drg_parent" or "exp_parent"), hashes each and enforces the hash's
// inclusion in tree C, as Proof::synthesize does for each parent in turn.
func (c *stacked) parentColumns(cs r1cs.System, kind string, parents []ColumnOpening, commC gadgets.AllocatedNum) ([][]gadgets.AllocatedNum, error) {
	cols := make([][]gadgets.AllocatedNum, len(parents))
	for i := range parents {
		p := kind + "_" + strconv.Itoa(i)
		cs.Push(p + "_num")
		cols[i] = allocColumn(cs, parents[i].Rows)
		cs.Pop()
		cs.Push(p + "_constraint")
		val, err := gadgets.PoseidonHash(cs, cols[i], c.column)
		cs.Pop()
		if err != nil {
			return nil, fmt.Errorf("%s column hash: %w", p, err)
		}
		cs.Push(p + "_inclusion")
		err = enforceInclusion(cs, c.poseidon, c.treeRC, parents[i].Path, commC, val)
		cs.Pop()
		if err != nil {
			return nil, fmt.Errorf("%s inclusion: %w", p, err)
		}
	}
	return cols, nil
}

// challenge is params.rs Proof::synthesize.
func (c *stacked) challenge(cs r1cs.System, p *ChallengeWitness, commD, commC, commRLast gadgets.AllocatedNum, replicaIDBits []gadgets.Boolean) error {
	// Initial data layer.
	cs.Push("data_leaf")
	dataLeaf := gadgets.AllocNum(cs, p.DataLeaf)
	cs.Pop()
	cs.Push("comm_d_inclusion")
	err := enforceInclusion(cs, sha254Tree{}, c.treeD, p.CommDPath, commD, dataLeaf)
	cs.Pop()
	if err != nil {
		return fmt.Errorf("comm_d inclusion: %w", err)
	}

	// Replica column openings.
	drg, err := c.parentColumns(cs, "drg_parent", p.DRGParents, commC)
	if err != nil {
		return err
	}
	exp, err := c.parentColumns(cs, "exp_parent", p.ExpParents, commC)
	if err != nil {
		return err
	}

	// Labeling.
	cs.Push("challenge")
	node := allocUint64(cs, p.Challenge)
	cs.Pop()
	cs.Push("challenge input")
	gadgets.PackIntoInputs(cs, node[:])
	cs.Pop()

	layers := c.s.Layers
	labels := make([]gadgets.AllocatedNum, 0, layers)
	for layer := 1; layer <= layers; layer++ {
		cs.Push("labeling_" + strconv.Itoa(layer))
		label, err := c.label(cs, layer, drg, exp, replicaIDBits, node)
		cs.Pop()
		if err != nil {
			return fmt.Errorf("label of layer %d: %w", layer, err)
		}
		labels = append(labels, label)
	}

	// Encoding: the replica node is the last label plus the data.
	cs.Push("encode_node")
	cs.Push("encode_add")
	encoded := add(cs, labels[layers-1], dataLeaf)
	cs.Pop()
	cs.Pop()
	cs.Push("comm_r_last_data_inclusion")
	err = enforceInclusion(cs, c.poseidon, c.treeRC, p.CommRLastPath, commRLast, encoded)
	cs.Pop()
	if err != nil {
		return fmt.Errorf("comm_r_last inclusion: %w", err)
	}

	// The challenged column's hash in tree C.
	cs.Push("c_x_column_hash")
	colHash, err := gadgets.PoseidonHash(cs, labels, c.column)
	cs.Pop()
	if err != nil {
		return fmt.Errorf("column hash: %w", err)
	}
	cs.Push("c_x_inclusion")
	err = enforceInclusion(cs, c.poseidon, c.treeRC, p.CommCPath, commC, colHash)
	cs.Pop()
	if err != nil {
		return fmt.Errorf("comm_c inclusion: %w", err)
	}
	return nil
}

// label recomputes the challenged node's label of one layer from its
// parents' columns: each parent's label of that layer (the DRG parents'
// row layer, the expander parents' row layer−1, none on layer 1) is
// decomposed into bits ("drg_parent_i_bits", "exp_parent_i_bits", i
// counting all parents), the parents are repeated to TotalParents
// (14, 14, first 9; or 6 six times and the first), and create_label hashes
// them ("create_label").
func (c *stacked) label(cs r1cs.System, layer int, drg, exp [][]gadgets.AllocatedNum, replicaIDBits []gadgets.Boolean, node *uint64Bits) (gadgets.AllocatedNum, error) {
	parents := make([][]gadgets.Boolean, 0, DRGParents+ExpParents)
	for _, col := range drg {
		cs.Push("drg_parent_" + strconv.Itoa(len(parents)) + "_bits")
		parents = append(parents, reverseBitNumbering(col[layer-1].ToBitsLE(cs)))
		cs.Pop()
	}
	if layer > 1 {
		for _, col := range exp {
			cs.Push("exp_parent_" + strconv.Itoa(len(parents)) + "_bits")
			parents = append(parents, reverseBitNumbering(col[layer-2].ToBitsLE(cs)))
			cs.Pop()
		}
	}
	expanded := make([][]gadgets.Boolean, 0, proofs.TotalParents)
	if layer > 1 {
		expanded = append(expanded, parents...)
		expanded = append(expanded, parents...)
		expanded = append(expanded, parents[:9]...)
	} else {
		for range 6 {
			expanded = append(expanded, parents...)
		}
		expanded = append(expanded, parents[0])
	}
	cs.Push("create_label")
	l, err := createLabel(cs, replicaIDBits, expanded, uint32(layer), node)
	cs.Pop()
	return l, err
}

// BlankWitness returns a witness of shape s with every value zero: the
// blank circuit's layout (Proof::empty), for synthesis that only records
// or counts.
func BlankWitness(s Shape) *Witness {
	b, su, t := s.TreePathLens()
	path := func(arity [3]int, lens [3]int) Path {
		var p Path
		for part := range 3 {
			for range lens[part] {
				p = append(p, PathLevel{Siblings: make([]frElement, arity[part]-1)})
			}
		}
		return p
	}
	ar := [3]int{s.Tree.Base, s.Tree.Sub, s.Tree.Top}
	ls := [3]int{b, su, t}
	col := func() ColumnOpening {
		return ColumnOpening{Rows: make([]frElement, s.Layers), Path: path(ar, ls)}
	}
	w := &Witness{Proofs: make([]ChallengeWitness, s.Challenges)}
	for i := range w.Proofs {
		p := &w.Proofs[i]
		p.CommDPath = path([3]int{2, 0, 0}, [3]int{s.CommDPathLen(), 0, 0})
		p.CommRLastPath = path(ar, ls)
		p.CommCPath = path(ar, ls)
		p.DRGParents = make([]ColumnOpening, DRGParents)
		for j := range p.DRGParents {
			p.DRGParents[j] = col()
		}
		p.ExpParents = make([]ColumnOpening, ExpParents)
		for j := range p.ExpParents {
			p.ExpParents[j] = col()
		}
	}
	return w
}
