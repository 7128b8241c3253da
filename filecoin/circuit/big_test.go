package circuit

import (
	"context"
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/c2flow/c2flow/filecoin/proofs"
	"github.com/c2flow/c2flow/filecoin/r1cs"
	"github.com/c2flow/c2flow/filecoin/seal"
)

// bigEnv enables the tests that synthesize 32GiB partitions (minutes, GBs).
const bigEnv = "C2FLOW_CIRCUIT_32GIB"

func skipUnlessBig(t *testing.T) {
	t.Helper()
	if os.Getenv(bigEnv) == "" {
		t.Skipf("synthesizes a 32GiB partition (~130M constraints, minutes); set %s=1 to run", bigEnv)
	}
}

// TestCount32GiB counts one 32GiB partition's circuit and compares it with
// curio's measurement of the circuit rust-fil-proofs synthesizes
// (filecoin-project/curio extern/cuzk/cuzk-project.md, "PCE Extraction",
// commit e0294b0f948132d41e8f42f59fa949495d5fd3af): num_inputs 328,
// num_aux 130,169,893, num_constraints 130,278,869 and A nnz 309,405,051
// (both with bellperson's 328 per-input constraints input·0 = 0, which add
// one A entry each), B nnz 130,327,340, C nnz 282,656,500, densities
// a_aux 129,753,292, b_input 1, b_aux 33,112,281.
func TestCount32GiB(t *testing.T) {
	skipUnlessBig(t)
	s, err := ShapeFor(proofs.StackedDrg32GiBV1_1)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	cs := r1cs.NewCounter()
	if err := Synthesize(cs, s, nil); err != nil {
		t.Fatal(err)
	}
	st := cs.Stats()
	t.Logf("%v: %v in %v", s, st, time.Since(start))
	const perInput = 328
	want := r1cs.Stats{
		Constraints: 130_278_869 - perInput, Inputs: 328, Aux: 130_169_893,
		ANNZ: 309_405_051 - perInput, BNNZ: 130_327_340, CNNZ: 282_656_500,
		AAuxDensity: 129_753_292, BInputDensity: 1, BAuxDensity: 33_112_281,
	}
	if st != want {
		t.Errorf("got  %v\nwant %v", st, want)
	}
}

// TestSparse32GiBSatisfies synthesizes partition 0 of a sparse sealed
// 32GiB C1 (filecoin/seal SealSparse: tree shape 8-8-0, 11 layers, 18
// challenges) with the checking witness builder.
func TestSparse32GiBSatisfies(t *testing.T) {
	skipUnlessBig(t)
	var prover [32]byte
	prover[0] = 7
	sealed, err := seal.SealSparse(context.Background(), seal.TestParams(proofs.StackedDrg32GiBV1_1, prover, 1))
	if err != nil {
		t.Fatal(err)
	}
	k := 3
	s, w, err := FromC1(sealed.C1, k)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	cs := r1cs.NewWitness(r1cs.WitnessOptions{Check: true})
	if err := Synthesize(cs, s, w); err != nil {
		t.Fatal(err)
	}
	if err := cs.Err(); err != nil {
		t.Fatal(err)
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	t.Logf("partition %d: %d constraints, %d inputs, %d aux in %v (heap %d MiB)",
		k, cs.NumConstraints(), len(cs.Inputs), len(cs.Aux), time.Since(start), ms.HeapAlloc>>20)
	replicaID, err := sealed.Public.ReplicaID()
	if err != nil {
		t.Fatal(err)
	}
	info, _ := proofs.Lookup(proofs.StackedDrg32GiBV1_1)
	pub, err := PublicInputsOf(info, replicaID, sealed.Public.CommD, sealed.Public.CommR, sealed.Public.Seed, k)
	if err != nil {
		t.Fatal(err)
	}
	if len(pub) != len(cs.Inputs)-1 {
		t.Fatalf("%d public inputs, circuit %d", len(pub), len(cs.Inputs)-1)
	}
	for i := range pub {
		if !pub[i].Equal(&cs.Inputs[i+1]) {
			t.Fatalf("public input %d differs", i)
		}
	}
}
