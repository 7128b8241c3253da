package fctest

import (
	"context"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/c2flow/c2flow/filecoin/groth"
	"github.com/c2flow/c2flow/filecoin/r1cs"
	"github.com/c2flow/c2flow/gpu"
	"github.com/c2flow/c2flow/prover"
)

// Prove proves a synthesized witness (r1cs.WitnessOptions ABC, its input
// constraints appended) with the split prover on one CPU slot, as the
// pipeline's device and finalize phases do, and returns the proof in
// Filecoin's form; partition names it in the prover's log.
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
	sol := &prover.Solution{Partition: partition, W: append(append([]fr.Element(nil), wb.Inputs...), wb.Aux...), A: wb.A, B: wb.B, C: wb.C}
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
