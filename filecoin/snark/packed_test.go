package snark_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/c2flow/c2flow/filecoin/c1"
	"github.com/c2flow/c2flow/filecoin/fctest"
	"github.com/c2flow/c2flow/filecoin/proofs"
	"github.com/c2flow/c2flow/filecoin/seal"
	"github.com/c2flow/c2flow/filecoin/snark"
	"github.com/c2flow/c2flow/job"
	"github.com/c2flow/c2flow/scheme"
)

// For every partition of every 2KiB kind (PoRep, SnapDeals, WindowPoSt,
// WinningPoSt), the assignment the scheme synthesizes packed holds the
// dense witness builder's values, and a, b, c evaluated from it by the
// circuit's recorded system (the one the device phase uses) equal the
// builder's element for element: the packed path proves exactly what the
// dense one did. (That its proofs verify is the scheme tests'.)
func TestPackedMatchesDense2KiB(t *testing.T) {
	ctx := context.Background()
	set := snark.Schemes(snark.Params{Dir: fctest.DevParams(), ShapeDir: t.TempDir()}, nil)
	type kindJob struct {
		name string
		sc   scheme.Scheme
		ref  job.Ref
		raw  []byte
	}
	var jobs []kindJob

	sealed := seal2KiB(t, proofs.StackedDrg2KiBV1_1, 12)
	raw, err := c1.Marshal(sealed.C1)
	if err != nil {
		t.Fatal(err)
	}
	jobs = append(jobs, kindJob{"PoRep", set[0], job.Ref{ProverID: seal.Hex32(testProver), SectorID: 12, Proof: "StackedDrg2KiBV1_1"}, raw})

	up := updateInputs(t, 40, 1)[0]
	sc, ref, canon, err := set.Identify(ctx, "40.update.json", up, scheme.Hints{})
	if err != nil {
		t.Fatal(err)
	}
	jobs = append(jobs, kindJob{"SnapDeals", sc, ref, canon})

	var randomness [32]byte
	randomness[3] = 9
	for _, p := range postCases() {
		a, err := set.Admit(ctx, postRequest(t, p.kind, p.proof, randomness, p.ids...))
		if err != nil {
			t.Fatal(err)
		}
		ref, raw := a.Ref, a.Input
		sc, err := set.For(ref.Proof)
		if err != nil {
			t.Fatal(err)
		}
		jobs = append(jobs, kindJob{ref.Proof, sc, ref, raw})
	}

	for _, j := range jobs {
		if err := set.EnsureKeys(ctx, []string{j.ref.Proof}, true, &bytes.Buffer{}); err != nil {
			t.Fatal(err)
		}
		sec, err := j.sc.Decode(j.raw, j.ref)
		if err != nil {
			t.Fatalf("%s: %v", j.name, err)
		}
		circ, err := j.sc.Circuit(ctx, j.ref.Proof)
		if err != nil {
			t.Fatal(err)
		}
		sys := circ.Prover().Keys.System
		for k := range sec.Partitions() {
			sol, err := circ.Synthesize(ctx, sec, k)
			if err != nil {
				t.Fatalf("%s partition %d: %v", j.name, k, err)
			}
			wb, err := snark.DenseABC(sec, k)
			if err != nil {
				t.Fatalf("%s partition %d dense: %v", j.name, k, err)
			}
			dense := append(append([]fr.Element(nil), wb.Inputs...), wb.Aux...)
			if sol.W.Len() != len(dense) {
				t.Fatalf("%s partition %d: %d wires packed, %d dense", j.name, k, sol.W.Len(), len(dense))
			}
			got := make([]fr.Element, len(dense))
			sol.W.Expand(got, 0)
			for i := range dense {
				if got[i] != dense[i] {
					t.Fatalf("%s partition %d: wire %d differs", j.name, k, i)
				}
			}
			fctest.SameABC(t, sys, sol.W, wb)
			zeros, ones, others := sol.W.Counts()
			t.Logf("%s partition %d: %d wires (%.1f%% 0 or 1, %d field elements), %d rows of a, b, c equal; packed %d B, dense W, a, b, c %d B",
				j.name, k, len(dense), 100*float64(zeros+ones)/float64(len(dense)), others, sys.Rows(), sol.Bytes(), 32*(len(dense)+3*len(wb.A)))
		}
	}
}
