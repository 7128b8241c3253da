package circuit

import (
	"testing"

	"github.com/c2flow/c2flow/filecoin/proofs"
	"github.com/c2flow/c2flow/filecoin/r1cs"
)

// TestCompiledPathMatches: the R1CS recorded from the blank 2KiB circuit,
// evaluated on a sealed sector's assignment, gives the a, b, c the witness
// builder computes while synthesizing, and is satisfied by it.
func TestCompiledPathMatches(t *testing.T) {
	sealed := sealTest(t, proofs.StackedDrg2KiBV1_1, 9)
	s, w, err := FromC1(sealed.C1, 0)
	if err != nil {
		t.Fatal(err)
	}
	shape := r1cs.NewShape()
	if err := Synthesize(shape, s, nil); err != nil {
		t.Fatal(err)
	}
	if err := shape.Err(); err != nil {
		t.Fatal(err)
	}
	wit := r1cs.NewWitness(r1cs.WitnessOptions{ABC: true})
	if err := Synthesize(wit, s, w); err != nil {
		t.Fatal(err)
	}
	if err := wit.Err(); err != nil {
		t.Fatal(err)
	}
	if err := shape.Check(wit.Inputs, wit.Aux); err != nil {
		t.Fatalf("recorded R1CS not satisfied by the witness: %v", err)
	}
	a, b, c, err := shape.EvalABC(wit.Inputs, wit.Aux)
	if err != nil {
		t.Fatal(err)
	}
	if len(a) != len(wit.A) {
		t.Fatalf("compiled path has %d rows, witness %d", len(a), len(wit.A))
	}
	for i := range a {
		if !a[i].Equal(&wit.A[i]) || !b[i].Equal(&wit.B[i]) || !c[i].Equal(&wit.C[i]) {
			t.Fatalf("row %d differs between the compiled path and the witness builder", i)
		}
	}
}
