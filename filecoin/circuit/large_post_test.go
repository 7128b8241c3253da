//go:build large

package circuit

import (
	"testing"
	"time"

	"github.com/c2flow/c2flow/filecoin/proofs"
	"github.com/c2flow/c2flow/filecoin/r1cs"
)

// TestPoStCountWindowPartitionsFull counts the whole 32GiB and 64GiB
// window partitions (2349 and 2300 sectors) with the bounded-memory
// counter: constants.rs's 125,279,217 and 129,887,900. Poseidon-heavy
// circuits count slowly (several minutes each on two shared cores).
// Measured once (2026-12-05, load 10-15 on two cores): 32GiB 125,279,217
// constraints, 25,840 inputs, 126,902,376 aux in 13m56s wall; 64GiB
// 129,887,900, 25,301, 131,500,200 in 13m45s; both 867.6 s user + 112.3 s
// system CPU (/usr/bin/time -v), peak RSS 119 MB.
//
//	go test -tags large -timeout 60m -run TestPoStCountWindowPartitionsFull -v ./filecoin/circuit/
func TestPoStCountWindowPartitionsFull(t *testing.T) {
	for _, tc := range postWindowPartitions {
		info, err := proofs.LookupPoSt(tc.proof)
		if err != nil {
			t.Fatal(err)
		}
		s := PoStShapeOf(info)
		start := time.Now()
		st := countBlank(t, func(cs r1cs.System) error { return SynthesizePoSt(cs, s, nil) })
		t.Logf("%s: %v in %v", info.Name, st, time.Since(start).Round(time.Millisecond))
		if st.Inputs != s.NumInputs() || st.Constraints != tc.constraints {
			t.Errorf("%s: %d inputs (want %d), %d constraints, want %d (off by %d)", info.Name, st.Inputs, s.NumInputs(), st.Constraints, tc.constraints, st.Constraints-tc.constraints)
		}
	}
}
