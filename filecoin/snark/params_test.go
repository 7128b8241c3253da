package snark_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/c2flow/c2flow/filecoin/circuit"
	"github.com/c2flow/c2flow/filecoin/groth"
	"github.com/c2flow/c2flow/filecoin/paramfiles/paramtest"
	"github.com/c2flow/c2flow/filecoin/proofs"
	"github.com/c2flow/c2flow/filecoin/r1cs"
	"github.com/c2flow/c2flow/filecoin/snark"
	"github.com/c2flow/c2flow/scheme"
)

// A scheme's circuit is its pair as the parameter store finds it
// (filecoin/paramfiles tests the finding): none is scheme.ErrNoKeys, and a
// failed load is not kept, so the same scheme looks again.
func TestCircuitParams(t *testing.T) {
	ctx := context.Background()
	const proof = "StackedDrg2KiBV1_1"
	dir := t.TempDir()
	s := snark.New(snark.Params{Dir: dir, ShapeDir: t.TempDir()}, nil)
	_, err := s.Circuit(ctx, proof)
	paramtest.WantErr(t, "empty directory", err, scheme.ErrNoKeys, dir, "no .params/.vk pair for "+proof)

	paramtest.WriteTrapdoorVK(t, filepath.Join(dir, paramtest.Pair2KiB("cc")+".vk"), 40)
	paramtest.WriteFile(t, filepath.Join(dir, paramtest.Pair2KiB("cc")+".params"), []byte("params"))
	paramtest.WriteFile(t, filepath.Join(dir, snark.DevMarker), []byte("DEVELOPMENT SETUP\n"))
	_, err = s.Circuit(ctx, proof)
	paramtest.WantErr(t, "unlisted development setup", err, groth.ErrFormat, paramtest.Pair2KiB("cc")+".params", "DEVELOPMENT SETUP")
	if errors.Is(err, scheme.ErrNoKeys) {
		t.Fatal("a found development pair is ErrNoKeys")
	}
}

// The known counts that PartitionBytes reserves by are the circuit's.
func TestKnownCounts(t *testing.T) {
	big := os.Getenv("C2FLOW_CIRCUIT_32GIB") != ""
	for _, info := range proofs.All() {
		if info.Proof > proofs.StackedDrg64GiBV1 || (!big && info.SectorSize > 512<<20) {
			continue // one proof per sector size; 32GiB and 64GiB count in ~40 s each
		}
		t.Run(info.Name, func(t *testing.T) {
			cnt := r1cs.NewCounter()
			if err := circuit.Synthesize(cnt, circuit.ShapeOf(info), nil); err != nil {
				t.Fatal(err)
			}
			st := cnt.Stats()
			got := snark.Counts{Inputs: st.Inputs, Aux: st.Aux, Constraints: st.Constraints + st.Inputs}
			for _, p := range []proofs.RegisteredSealProof{info.Proof, info.Proof + 5, info.Proof + 10} {
				want, err := snark.CountsOf(p.String())
				if err != nil {
					t.Fatal(err)
				}
				if got != want {
					t.Fatalf("%v: counted %+v, known %+v", p, got, want)
				}
			}
			b, _ := snark.PartitionBytes(info.Name)
			t.Logf("%s: %+v, PartitionBytes %d (%.2f GiB)", info.Name, got, b, float64(b)/(1<<30))
		})
	}
	if _, err := snark.CountsOf("StackedDrg2KiBV1_2_Feat_NonInteractivePoRep"); err == nil {
		t.Fatal("counts of an unsupported proof")
	}
}
