// Package circuit is the partition circuit of c2flow's PoRep: one R1CS per
// profile proving one partition, like Filecoin's StackedCircuit. It checks,
// for every challenge, the openings of comm_d, comm_c (the node's column and
// its 14 parents' columns) and comm_r_last, the recomputation of the node's
// label in every layer from its parents, and comm_r = H(comm_c, comm_r_last).
package circuit

import (
	"fmt"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/consensys/gnark/frontend"
	"github.com/consensys/gnark/std/permutation/poseidon2"

	"github.com/c2flow/c2flow/scheme/testscheme/porep"
)

// Opening is a parent's column and its comm_c path.
type Opening struct {
	Column []frontend.Variable
	Path   []frontend.Variable
}

// Challenge is one challenged node. The node and parent indices are public:
// the verifier derives them from replica_id, seed and the graph.
type Challenge struct {
	Node     frontend.Variable                        `gnark:",public"`
	DRGNodes [porep.DRGParents]frontend.Variable      `gnark:",public"`
	ExpNodes [porep.ExpanderParents]frontend.Variable `gnark:",public"`

	DataLeaf    frontend.Variable
	DataPath    []frontend.Variable
	Column      []frontend.Variable
	ColumnPath  []frontend.Variable
	DRG         [porep.DRGParents]Opening
	Exp         [porep.ExpanderParents]Opening
	ReplicaPath []frontend.Variable
}

// Partition is the circuit of one partition of a profile.
type Partition struct {
	ReplicaID  frontend.Variable `gnark:",public"`
	CommD      frontend.Variable `gnark:",public"`
	CommR      frontend.Variable `gnark:",public"`
	Challenges []Challenge

	CommC     frontend.Variable
	CommRLast frontend.Variable

	depth, layers int
}

// New returns the circuit of a profile with its slices sized, ready for
// frontend.Compile.
func New(p porep.Profile) *Partition {
	c := &Partition{Challenges: make([]Challenge, p.Challenges), depth: p.Depth, layers: p.Layers}
	for i := range c.Challenges {
		ch := &c.Challenges[i]
		ch.DataPath = make([]frontend.Variable, p.Depth)
		ch.Column = make([]frontend.Variable, p.Layers)
		ch.ColumnPath = make([]frontend.Variable, p.Depth)
		ch.ReplicaPath = make([]frontend.Variable, p.Depth)
		for k := range ch.DRG {
			ch.DRG[k] = Opening{Column: make([]frontend.Variable, p.Layers), Path: make([]frontend.Variable, p.Depth)}
		}
		for k := range ch.Exp {
			ch.Exp[k] = Opening{Column: make([]frontend.Variable, p.Layers), Path: make([]frontend.Variable, p.Depth)}
		}
	}
	return c
}

// Define implements frontend.Circuit.
func (c *Partition) Define(api frontend.API) error {
	h, err := poseidon2.NewPoseidon2FromParameters(api, porep.HashWidth, porep.HashFullRounds, porep.HashPartialRounds)
	if err != nil {
		return fmt.Errorf("poseidon2: %w", err)
	}
	api.AssertIsEqual(c.CommR, h.Compress(c.CommC, c.CommRLast))
	fold := func(v []frontend.Variable) frontend.Variable {
		acc := v[0]
		for _, x := range v[1:] {
			acc = h.Compress(acc, x)
		}
		return acc
	}
	root := func(leaf frontend.Variable, bits, path []frontend.Variable) frontend.Variable {
		cur := leaf
		for k, sib := range path {
			// left = bit ? sib : cur, in one constraint; right is linear.
			left := api.Add(cur, api.Mul(bits[k], api.Sub(sib, cur)))
			right := api.Sub(api.Add(cur, sib), left)
			cur = h.Compress(left, right)
		}
		return cur
	}
	for i := range c.Challenges {
		ch := &c.Challenges[i]
		bits := api.ToBinary(ch.Node, c.depth)
		api.AssertIsEqual(root(ch.DataLeaf, bits, ch.DataPath), c.CommD)
		api.AssertIsEqual(root(fold(ch.Column), bits, ch.ColumnPath), c.CommC)
		for k := range ch.DRG {
			pb := api.ToBinary(ch.DRGNodes[k], c.depth)
			api.AssertIsEqual(root(fold(ch.DRG[k].Column), pb, ch.DRG[k].Path), c.CommC)
		}
		for k := range ch.Exp {
			pb := api.ToBinary(ch.ExpNodes[k], c.depth)
			api.AssertIsEqual(root(fold(ch.Exp[k].Column), pb, ch.Exp[k].Path), c.CommC)
		}
		for l := 1; l <= c.layers; l++ {
			tag := api.Add(uint64(l)<<40, ch.Node)
			acc := h.Compress(c.ReplicaID, tag)
			for k := range ch.DRG {
				acc = h.Compress(acc, ch.DRG[k].Column[l-1])
			}
			if l > 1 {
				for k := range ch.Exp {
					acc = h.Compress(acc, ch.Exp[k].Column[l-2])
				}
			}
			api.AssertIsEqual(acc, ch.Column[l-1])
		}
		replica := api.Add(ch.Column[c.layers-1], ch.DataLeaf)
		api.AssertIsEqual(root(replica, bits, ch.ReplicaPath), c.CommRLast)
	}
	return nil
}

// PublicAssignment returns the public part of partition k's assignment,
// derived by the verifier from the statement alone.
func PublicAssignment(st porep.Statement, k int) *Partition {
	p := st.Profile
	a := &Partition{ReplicaID: st.ReplicaID, CommD: st.CommD, CommR: st.CommR,
		Challenges: make([]Challenge, p.Challenges), depth: p.Depth, layers: p.Layers}
	for i, node := range p.PartitionChallenges(st.ReplicaID, porep.SeedElement(st.Seed), k) {
		ch := &a.Challenges[i]
		ch.Node = node
		drg, exp := p.Parents(node)
		for j, q := range drg {
			ch.DRGNodes[j] = q
		}
		for j, q := range exp {
			ch.ExpNodes[j] = q
		}
	}
	return a
}

// Assignment returns the full assignment of a partition from its vanilla
// proof. The public part is derived from the statement, never taken from the
// proof: a proof for other challenges or parents leaves the circuit
// unsatisfiable.
func Assignment(st porep.Statement, commC, commRLast fr.Element, pp porep.PartitionProof) *Partition {
	a := PublicAssignment(st, pp.Partition)
	a.CommC, a.CommRLast = commC, commRLast
	vars := func(v []fr.Element) []frontend.Variable {
		out := make([]frontend.Variable, len(v))
		for i := range v {
			out[i] = v[i]
		}
		return out
	}
	for i := range a.Challenges {
		ch := &a.Challenges[i]
		if i >= len(pp.Challenges) {
			break // the solver reports the missing values
		}
		src := &pp.Challenges[i]
		ch.DataLeaf = src.DataLeaf
		ch.DataPath = vars(src.DataPath)
		ch.Column = vars(src.Column)
		ch.ColumnPath = vars(src.ColumnPath)
		ch.ReplicaPath = vars(src.ReplicaPath)
		for k := range src.DRG {
			ch.DRG[k] = Opening{Column: vars(src.DRG[k].Column), Path: vars(src.DRG[k].Path)}
		}
		for k := range src.Exp {
			ch.Exp[k] = Opening{Column: vars(src.Exp[k].Column), Path: vars(src.Exp[k].Path)}
		}
	}
	return a
}
