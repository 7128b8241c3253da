package circuit

import (
	"testing"

	"github.com/c2flow/c2flow/filecoin/merkle"
	"github.com/c2flow/c2flow/filecoin/r1cs"
)

// TestStackedCircuitCounts checks the constraint and input counts of
// rust-fil-proofs storage-proofs-porep/tests/stacked_circuit.rs
// (rust-fil-proofs commit 87348a749d80447d00c595af834a8ed73c09e4d9):
// 8 x base-tree-count nodes, 2 layers, 1 interactive challenge, Poseidon
// trees. The counts are TestConstraintSystem's num_constraints and
// num_inputs: the enforced constraints without bellperson's per-input
// constraints, and the inputs including ONE. They do not depend on the
// values, so the blank circuit is counted.
func TestStackedCircuitCounts(t *testing.T) {
	for _, tc := range []struct {
		name        string
		tree        merkle.Shape
		inputs      int
		constraints int
	}{
		{"poseidon_base_2", merkle.Shape{Base: 2}, 22, 1_206_212},
		{"poseidon_base_8", merkle.Shape{Base: 8}, 22, 1_199_620},
		{"poseidon_sub_8_4", merkle.Shape{Base: 8, Sub: 4}, 22, 1_296_576},
		{"poseidon_top_8_4_2", merkle.Shape{Base: 8, Sub: 4, Top: 2}, 22, 1_346_982},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := Shape{Nodes: 8 * uint64(tc.tree.BaseTrees()), Layers: 2, Tree: tc.tree, Challenges: 1}
			cs := r1cs.NewCounter()
			if err := Synthesize(cs, s, nil); err != nil {
				t.Fatal(err)
			}
			if err := cs.Err(); err != nil {
				t.Fatal(err)
			}
			st := cs.Stats()
			t.Logf("%v: %v", s, st)
			if st.Inputs != tc.inputs || s.NumInputs() != tc.inputs {
				t.Errorf("inputs = %d (NumInputs %d), want %d", st.Inputs, s.NumInputs(), tc.inputs)
			}
			if st.Constraints != tc.constraints {
				t.Errorf("constraints = %d, want %d (off by %d)", st.Constraints, tc.constraints, st.Constraints-tc.constraints)
			}
		})
	}
}
