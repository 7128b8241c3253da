package testscheme_test

import (
	"context"
	"testing"

	"github.com/consensys/gnark-crypto/ecc"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	csbls "github.com/consensys/gnark/constraint/bls12-381"
	"github.com/consensys/gnark/frontend"

	"github.com/c2flow/c2flow/prover"
	"github.com/c2flow/c2flow/prover/packed"
	"github.com/c2flow/c2flow/scheme/testscheme"
	"github.com/c2flow/c2flow/scheme/testscheme/params/paramstest"
	"github.com/c2flow/c2flow/scheme/testscheme/porep/circuit"
	"github.com/c2flow/c2flow/scheme/testscheme/porep/poreptest"
)

// For every partition of a test-scheme sector, the packed assignment
// Synthesize keeps holds gnark's solution's wires, and a, b, c evaluated
// from it by gnark's R1CS recorded as the prover's system equal gnark's
// solution's a, b, c element for element.
func TestPackedMatchesGnarkSolution(t *testing.T) {
	for _, profile := range []string{"2KiB", "32KiB"} {
		packedMatchesGnark(t, profile)
	}
}

func packedMatchesGnark(t *testing.T, profile string) {
	keys := paramstest.Keys(t, profile)
	sys, err := prover.GnarkSystem(keys.CCS)
	if err != nil {
		t.Fatal(err)
	}
	c1 := poreptest.Sector(t, profile, 31).C1()
	for k := range c1.Partitions {
		sol, err := testscheme.Synthesize(context.Background(), keys, c1, k)
		if err != nil {
			t.Fatal(err)
		}
		w, err := frontend.NewWitness(circuit.Assignment(c1.Statement(), c1.CommC, c1.CommRLast, c1.Partitions[k]), ecc.BLS12_381.ScalarField())
		if err != nil {
			t.Fatal(err)
		}
		res, err := keys.CCS.Solve(w)
		if err != nil {
			t.Fatal(err)
		}
		dense := res.(*csbls.R1CSSolution)
		got := make([]fr.Element, sol.W.Len())
		if len(got) != len(dense.W) {
			t.Fatalf("partition %d: %d wires packed, gnark's solution %d", k, len(got), len(dense.W))
		}
		sol.W.Expand(got, 0)
		for i := range got {
			if got[i] != dense.W[i] {
				t.Fatalf("partition %d: wire %d differs", k, i)
			}
		}
		for m, want := range [][]fr.Element{dense.A, dense.B, dense.C} {
			if r, err := packed.FirstDiff(sys, m, sol.W, want); err != nil || r >= 0 {
				t.Fatalf("partition %d: %c of row %d differs from gnark's solution (%v)", k, "abc"[m], r, err)
			}
		}
		zeros, ones, others := sol.W.Counts()
		t.Logf("%s partition %d: %d wires (%d zeros, %d ones, %d field elements), %d rows of a, b, c equal; packed %d B, dense W, a, b, c %d B",
			profile, k, len(got), zeros, ones, others, sys.Rows(), sol.Bytes(), 32*(len(got)+3*len(dense.A)))
	}
}
