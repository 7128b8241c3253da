//go:build large

// The tests of this file need what a test run cannot spare (14 GB for one
// 32GiB partition's witness) and run on demand:
//
//	go test -tags large -run TestSparse32GiBSatisfies -v ./filecoin/circuit/

package circuit

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/c2flow/c2flow/filecoin/proofs"
	"github.com/c2flow/c2flow/filecoin/r1cs"
	"github.com/c2flow/c2flow/filecoin/seal"
)

// TestSparse32GiBSatisfies synthesizes partition 0 of a sparse sealed
// 32GiB C1 (filecoin/seal SealSparse: tree shape 8-8-0, 11 layers, 18
// challenges) with the checking witness builder.
func TestSparse32GiBSatisfies(t *testing.T) {
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
