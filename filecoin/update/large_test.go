//go:build large

// The tests of this file need what a test run cannot spare (minutes and
// gigabytes for one 32GiB update partition's witness) and run on demand:
//
//	go test -tags large -run TestSparseZero32GiBSatisfies -v ./filecoin/update/

package update

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/c2flow/c2flow/filecoin/circuit"
	"github.com/c2flow/c2flow/filecoin/proofs"
	"github.com/c2flow/c2flow/filecoin/r1cs"
	"github.com/c2flow/c2flow/filecoin/seal"
	"github.com/c2flow/c2flow/metrics"
)

// TestSparseZero32GiBSatisfies makes partition 0 of a real 32GiB update
// (a sparsely sealed CC sector updated with zero data: 16 partitions of
// 86 challenges, 128 apex leaves, h 10), verifies its vanilla proof and
// synthesizes its witness with the checking builder: every one of the
// 81,049,499 constraints satisfied, the inputs the public data's.
func TestSparseZero32GiBSatisfies(t *testing.T) {
	start := time.Now()
	sealed, err := seal.SealSparse(context.Background(), seal.TestParams(proofs.StackedDrg32GiBV1_1, [32]byte{1}, 7))
	if err != nil {
		t.Fatal(err)
	}
	sealTook := time.Since(start)
	s, err := circuit.UpdateShapeOf(32 << 30)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	u, err := UpdateSparseZero(s, s.HDefault(), sealed)
	if err != nil {
		t.Fatal(err)
	}
	const k = 0
	w, err := u.Witness(k) // its vanilla proof verified first
	if err != nil {
		t.Fatal(err)
	}
	witTook := time.Since(t0)
	t1 := time.Now()
	const inputs, aux = 5, 80_978_488
	cs := r1cs.NewWitness(r1cs.WitnessOptions{Check: true, InputsHint: inputs, AuxHint: aux})
	if err := circuit.SynthesizeUpdate(cs, s, w); err != nil {
		t.Fatal(err)
	}
	if err := cs.Err(); err != nil {
		t.Fatal(err)
	}
	synthTook := time.Since(t1)
	want, err := u.PublicInputs(k)
	if err != nil {
		t.Fatal(err)
	}
	if len(cs.Inputs) != len(want)+1 {
		t.Fatalf("%d inputs, want %d", len(cs.Inputs)-1, len(want))
	}
	for i := range want {
		if !want[i].Equal(&cs.Inputs[i+1]) {
			t.Fatalf("input %d is not the public data's", i+1)
		}
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	t.Logf("32GiB update partition %d: sparse seal %v, update and verified vanilla proof %v, checked synthesis %v (%d constraints, %d aux); heap %d MiB, peak RSS %d MiB",
		k, sealTook.Round(time.Millisecond), witTook.Round(time.Millisecond), synthTook.Round(time.Millisecond),
		cs.NumConstraints(), len(cs.Aux), ms.HeapAlloc>>20, metrics.PeakRSS()>>20)
	runtime.KeepAlive(cs)
}
