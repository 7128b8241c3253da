//go:build large

package circuit

import (
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/c2flow/c2flow/filecoin/r1cs"
)

// TestUpdate32GiBWitness measures one 32GiB update partition's witness as
// a worker synthesizes it (the assignment and a, b, c, exact capacities):
// its time and the process's peak RSS. The witness is the blank one (every
// value zero: no 32GiB updated replica can be made here), whose synthesis
// does the same field operations on the same 81,049,499 constraints; the
// builder does not check, as a worker's does not.
//
//	go test -tags large -run TestUpdate32GiBWitness -v ./filecoin/circuit/
func TestUpdate32GiBWitness(t *testing.T) {
	s, err := UpdateShapeOf(32 << 30)
	if err != nil {
		t.Fatal(err)
	}
	const inputs, aux, constraints = 5, 80_978_488, 81_049_499 + 5
	start := time.Now()
	wit := r1cs.NewWitness(r1cs.WitnessOptions{ABC: true, InputsHint: inputs, AuxHint: aux, ConstraintsHint: constraints})
	if err := SynthesizeUpdate(wit, s, BlankUpdateWitness(s)); err != nil {
		t.Fatal(err)
	}
	wit.AppendInputConstraints()
	took := time.Since(start)
	if len(wit.Inputs) != inputs || len(wit.Aux) != aux || len(wit.A) != constraints {
		t.Fatalf("%d inputs, %d aux, %d constraints", len(wit.Inputs), len(wit.Aux), len(wit.A))
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	before := ms.HeapAlloc
	runtime.GC() // what stays live: the witness, not the builder's garbage
	runtime.ReadMemStats(&ms)
	b, _ := os.ReadFile("/proc/self/status")
	var hwm string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "VmHWM:") {
			hwm = strings.TrimSpace(strings.TrimPrefix(l, "VmHWM:"))
		}
	}
	t.Logf("32GiB update partition witness: %d constraints, %d aux in %v; heap %d MiB at the end, %d MiB live after a GC; peak RSS %s",
		len(wit.A), len(wit.Aux), took.Round(time.Millisecond), before>>20, ms.HeapAlloc>>20, hwm)
	runtime.KeepAlive(wit)
}
