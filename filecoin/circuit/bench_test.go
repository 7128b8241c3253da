package circuit

import (
	"context"
	"testing"

	"github.com/c2flow/c2flow/filecoin/c1"
	"github.com/c2flow/c2flow/filecoin/proofs"
	"github.com/c2flow/c2flow/filecoin/r1cs"
	"github.com/c2flow/c2flow/filecoin/seal"
)

func sealBench(b *testing.B, p proofs.RegisteredSealProof) *c1.SealCommitPhase1Output {
	b.Helper()
	var prover [32]byte
	prover[0] = 7
	s, err := seal.Seal(context.Background(), seal.TestParams(p, prover, 1))
	if err != nil {
		b.Fatal(err)
	}
	return s.C1
}

// BenchmarkCount2KiB counts the blank 2KiB circuit.
func BenchmarkCount2KiB(b *testing.B) {
	s, err := ShapeFor(proofs.StackedDrg2KiBV1_1)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if err := Synthesize(r1cs.NewCounter(), s, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkWitness2KiB compares the two synthesis paths on a sealed 2KiB
// sector: "recorder" computes the assignment and a, b, c while
// synthesizing (bellperson's ProvingAssignment); "compiled" computes only
// the assignment and then a, b, c from the recorded R1CS.
func BenchmarkWitness2KiB(b *testing.B) {
	s, w, err := FromC1(sealBench(b, proofs.StackedDrg2KiBV1_1), 0)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("recorder", func(b *testing.B) {
		for b.Loop() {
			cs := r1cs.NewWitness(r1cs.WitnessOptions{ABC: true})
			if err := Synthesize(cs, s, w); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("compiled", func(b *testing.B) {
		shape := r1cs.NewShape()
		if err := Synthesize(shape, s, nil); err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			cs := r1cs.NewWitness(r1cs.WitnessOptions{})
			if err := Synthesize(cs, s, w); err != nil {
				b.Fatal(err)
			}
			if _, _, _, err := shape.EvalABC(cs.Inputs, cs.Aux); err != nil {
				b.Fatal(err)
			}
		}
	})
}
