//go:build large

package post

import (
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/c2flow/c2flow/filecoin/circuit"
	"github.com/c2flow/c2flow/filecoin/r1cs"
)

// TestGoldenWindowPartition32GiB: curio's post.vproof, padded to 2349
// sectors as upstream pads a short partition, is a real 32GiB window
// partition: its witness satisfies all 125,279,217 constraints of the
// circuit, and its inputs are those of postpub.json's public data. It
// reports the synthesis time (checking every constraint, as the witness
// builder's check mode does) and the process's peak RSS.
//
// Measured once (2026-12-05, this shared 2-core machine at load 20-30):
// satisfied, inputs equal; 41m21s wall at 27% of a core, 641.7 s user +
// 49.9 s system CPU (/usr/bin/time -v), peak RSS 8,075,716 kB: the 4.06 GB
// of aux (126,902,376 elements, preallocated) and the garbage the GC
// lets grow to about its size before collecting.
//
//	go test -tags large -timeout 60m -run TestGoldenWindowPartition32GiB -v ./filecoin/post/
func TestGoldenWindowPartition32GiB(t *testing.T) {
	g := loadGolden(t)
	p, err := NewPartition(g.info, g.randomness, 0, []*VanillaProof{g.vp})
	if err != nil {
		t.Fatal(err)
	}
	s := p.Shape()
	if s.Sectors != 2349 || len(p.Proofs) != 2349 {
		t.Fatalf("%v, %d sector proofs", s, len(p.Proofs))
	}
	const sectorAux, sectorConstraints = 54_024, 53_333 // one 32GiB sector (TestPoStCountWindowPartitions)
	w, err := p.Witness()
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	cs := r1cs.NewWitness(r1cs.WitnessOptions{Check: true, InputsHint: s.NumInputs(), AuxHint: s.Sectors * sectorAux})
	if err := circuit.SynthesizePoSt(cs, s, w); err != nil {
		t.Fatal(err)
	}
	took := time.Since(start)
	if err := cs.Err(); err != nil {
		t.Fatal(err)
	}
	if cs.NumConstraints() != 125_279_217 || len(cs.Aux) != s.Sectors*sectorAux || s.Sectors*sectorConstraints != 125_279_217 {
		t.Fatalf("%d constraints, %d aux", cs.NumConstraints(), len(cs.Aux))
	}
	want, err := PublicInputs(g.info, g.randomness, []PublicSector{g.sector}, 0)
	if err != nil {
		t.Fatal(err)
	}
	equalInputs(t, "32GiB window partition", cs.Inputs[1:], want)
	b, _ := os.ReadFile("/proc/self/status")
	var hwm string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "VmHWM:") {
			hwm = strings.TrimSpace(strings.TrimPrefix(l, "VmHWM:"))
		}
	}
	t.Logf("32GiB window partition (post.vproof x 2349): %d constraints, %d inputs, %d aux, satisfied, synthesized and checked in %v; peak RSS %s",
		cs.NumConstraints(), len(cs.Inputs), len(cs.Aux), took.Round(time.Millisecond), hwm)
	runtime.KeepAlive(cs)
}
