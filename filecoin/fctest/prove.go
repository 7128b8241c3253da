package fctest

import (
	"context"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/c2flow/c2flow/filecoin/groth"
	"github.com/c2flow/c2flow/filecoin/r1cs"
	"github.com/c2flow/c2flow/gpu"
	"github.com/c2flow/c2flow/prover"
	"github.com/c2flow/c2flow/prover/packed"
)

// Prove proves a synthesized witness (r1cs.WitnessOptions ABC, its input
// constraints appended) with the split prover on one CPU slot, as the
// pipeline's device and finalize phases do, and returns the proof in
// Filecoin's form; partition names it in the prover's log. The prover
// proves the assignment packed, evaluating a, b, c from its system:
// first those are checked equal to the builder's, element for element.
func Prove(tb testing.TB, pr *prover.Prover, partition string, wb *r1cs.Witness) groth.Proof {
	tb.Helper()
	ctx := context.Background()
	if err := wb.Err(); err != nil {
		tb.Fatal(err)
	}
	slots, err := gpu.CPUSlots(1, 0)
	if err != nil {
		tb.Fatal(err)
	}
	w := packed.Pack(append(append([]fr.Element(nil), wb.Inputs...), wb.Aux...))
	SameABC(tb, pr.Keys.System, w, wb)
	sol := &prover.Solution{Partition: partition, W: w}
	partial, err := pr.Start(ctx, slots, sol)
	if err != nil {
		tb.Fatal(err)
	}
	gp, _, err := pr.Finalize(ctx, partial)
	if err != nil {
		tb.Fatal(err)
	}
	p, err := groth.ProofFromGnark(gp)
	if err != nil {
		tb.Fatal(err)
	}
	return p
}

// SameABC checks that a, b, c evaluated from the packed assignment w by
// sys equal the witness builder's (ABC) element for element.
func SameABC(tb testing.TB, sys packed.Evaluator, w *packed.Vector, wb *r1cs.Witness) {
	tb.Helper()
	if len(wb.A) != sys.Rows() {
		tb.Fatalf("the witness has %d constraints, the system %d rows", len(wb.A), sys.Rows())
	}
	for m, want := range [][]fr.Element{wb.A, wb.B, wb.C} {
		if r, err := packed.FirstDiff(sys, m, w, want); err != nil || r >= 0 {
			tb.Fatalf("%c of row %d evaluated from the packed assignment differs from the witness builder's (%v)", "abc"[m], r, err)
		}
	}
}
