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

// BenchmarkWitness compares the two synthesis paths on a partition of a
// sealed 2KiB and 8MiB sector: "recorder" computes the assignment and a, b,
// c while synthesizing (bellperson's ProvingAssignment); "compiled"
// computes only the assignment and then a, b, c from the R1CS recorded
// once (Shape.EvalABC). Both preallocate from the counted sizes, as a
// pipeline that knows its circuit does. Run one size and path per process
// (-bench 'Witness/8MiB/recorder') to measure its peak RSS; the compiled
// path's includes the recorded shape.
func BenchmarkWitness(b *testing.B) {
	for _, tc := range []struct {
		name string
		p    proofs.RegisteredSealProof
	}{
		{"2KiB", proofs.StackedDrg2KiBV1_1},
		{"8MiB", proofs.StackedDrg8MiBV1_1},
	} {
		b.Run(tc.name, func(b *testing.B) {
			s, w, err := FromC1(sealBench(b, tc.p), 0)
			if err != nil {
				b.Fatal(err)
			}
			cnt := r1cs.NewCounter()
			if err := Synthesize(cnt, s, nil); err != nil {
				b.Fatal(err)
			}
			st := cnt.Stats()
			hints := r1cs.WitnessOptions{InputsHint: st.Inputs, AuxHint: st.Aux, ConstraintsHint: st.Constraints}
			b.Run("recorder", func(b *testing.B) {
				opts := hints
				opts.ABC = true
				for b.Loop() {
					cs := r1cs.NewWitness(opts)
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
					cs := r1cs.NewWitness(hints)
					if err := Synthesize(cs, s, w); err != nil {
						b.Fatal(err)
					}
					if _, _, _, err := shape.EvalABC(cs.Inputs, cs.Aux); err != nil {
						b.Fatal(err)
					}
				}
			})
		})
	}
}
