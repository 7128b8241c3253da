package lab

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/c2flow/c2flow/cmd/c2flow/internal/clitest"
	"github.com/c2flow/c2flow/filecoin/circuit"
	"github.com/c2flow/c2flow/filecoin/proofs"
	"github.com/c2flow/c2flow/filecoin/r1cs"
	"github.com/c2flow/c2flow/prover/packed"
	"github.com/c2flow/c2flow/registry"
	"github.com/c2flow/c2flow/scheme"
)

// TestFilecoinCircuitInfo2KiB: circuit info --proof prints exactly one line
// of the key=value pairs constraints, inputs, aux, a_nnz, b_nnz, c_nnz, whose
// values are those of the R1CS the shape recorder records for the same
// circuit (without the per-input constraints), and a witness line with the
// packed bound and the dense W, a, b, c it replaces (a, b, c over the
// constraints and the per-input ones, plus the assignment).
func TestFilecoinCircuitInfo2KiB(t *testing.T) {
	info, err := proofs.ByName("StackedDrg2KiBV1_1")
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	sc, err := registry.Schemes(registry.Options{}).For(info.Name)
	if err != nil {
		t.Fatal(err)
	}
	iw, err := scheme.As[scheme.InfoWriter](sc, "circuit info")
	if err != nil {
		t.Fatal(err)
	}
	if err := iw.WriteInfo(&out, info.Name); err != nil {
		t.Fatal(err)
	}
	t.Logf("circuit info --proof %s:\n%s", info.Name, out.String())

	keys := []string{"constraints", "inputs", "aux", "a_nnz", "b_nnz", "c_nnz"}
	var kv map[string]int
	for _, line := range strings.Split(out.String(), "\n") {
		if !strings.HasPrefix(line, "constraints=") {
			continue
		}
		if kv != nil {
			t.Fatalf("two key=value lines")
		}
		kv = map[string]int{}
		fields := strings.Fields(line)
		for i, f := range fields {
			k, v, ok := strings.Cut(f, "=")
			if !ok || i >= len(keys) || k != keys[i] {
				t.Fatalf("field %d %q of %q: want the keys %v in order", i, f, line, keys)
			}
			n, err := strconv.Atoi(v)
			if err != nil || n <= 0 {
				t.Fatalf("field %q: not a positive count", f)
			}
			kv[k] = n
		}
		if len(fields) != len(keys) {
			t.Fatalf("%q: want exactly the keys %v", line, keys)
		}
	}
	if kv == nil {
		t.Fatalf("no key=value line")
	}

	s := circuit.ShapeOf(info)
	rec := r1cs.NewShape()
	if err := circuit.Synthesize(rec, s, nil); err != nil {
		t.Fatal(err)
	}
	st := rec.Stats()
	want := map[string]int{
		"constraints": st.Constraints, "inputs": st.Inputs, "aux": st.Aux,
		"a_nnz": st.ANNZ, "b_nnz": st.BNNZ, "c_nnz": st.CNNZ,
	}
	for _, k := range keys {
		if kv[k] != want[k] {
			t.Errorf("%s=%d, the recorded R1CS has %d", k, kv[k], want[k])
		}
	}
	// 2KiB: ONE, replica_id, comm_d, comm_r, and 18 per challenge for 2
	// challenges (stacked/circuit/proof.rs generate_public_inputs).
	if kv["inputs"] != 40 || s.NumInputs() != 40 {
		t.Errorf("inputs=%d (NumInputs %d), want 40", kv["inputs"], s.NumInputs())
	}
	rows := kv["constraints"] + kv["inputs"]
	mem := fmt.Sprintf("witness per partition: packed at most %d B", packed.MaxBytes(kv["inputs"]+kv["aux"]))
	dense := fmt.Sprintf("dense W, a, b, c %d B", 3*32*rows+32*(kv["inputs"]+kv["aux"]))
	for _, want := range []string{mem, dense} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("no %q", want)
		}
	}
}

// TestCircuitProofFlag: --proof and --profile are exclusive, --proof is
// for info only, and an unknown proof is an error naming the valid ones.
func TestCircuitProofFlag(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"info", "--proof", "StackedDrg2KiBV1_1", "--profile", "32KiB"}, "exclusive"},
		{[]string{"setup", "--proof", "StackedDrg2KiBV1_1"}, "only for info"},
		{[]string{"info", "--proof", "StackedDrg3KiBV1"}, "StackedDrg32GiBV1_1"},
		{[]string{"info", "--update-proof", "StackedDrg2KiBV1", "--proof", "StackedDrg2KiBV1_1"}, "exclusive"},
		{[]string{"setup", "--update-proof", "StackedDrg2KiBV1"}, "only for info"},
		{[]string{"info", "--update-proof", "StackedDrg2KiBV1_1"}, "StackedDrg32GiBV1"},
		{[]string{"info", "--post-proof", "StackedDrgWindow2KiBV1_2", "--proof", "StackedDrg2KiBV1_1"}, "exclusive"},
		{[]string{"setup", "--post-proof", "StackedDrgWindow2KiBV1_2"}, "only for info"},
		{[]string{"info", "--post-proof", "StackedDrg2KiBV1_1"}, "StackedDrgWindow32GiBV1_2"},
	} {
		err := RunCircuit(ctx, tc.args)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("circuit %v: error %v, want one mentioning %q", tc.args, err, tc.want)
		}
	}
}

// circuit info --update-proof prints the update circuit's counts in the
// key=value form of --proof: for StackedDrg2KiBV1 the 2KiB counts of
// storage-proofs-update/tests/circuit.rs (1,705,039 constraints; the
// 32GiB count is filecoin/circuit's TestUpdateCount32GiB).
func TestCircuitInfoUpdateProof(t *testing.T) {
	out := clitest.CaptureStdout(t, func() {
		if err := RunCircuit(context.Background(), []string{"info", "--update-proof", "StackedDrg2KiBV1"}); err != nil {
			t.Error(err)
		}
	})
	if !strings.Contains(out, "\nconstraints=1705039 inputs=5 aux=1703569 a_nnz=") {
		t.Fatalf("circuit info --update-proof StackedDrg2KiBV1:\n%s", out)
	}
}

// circuit info --post-proof counts a PoSt partition in the same form:
// one sector's circuit times the partition's sectors, which for the 32GiB
// window partition is constants.rs' 125,279,217 constraints (the
// filecoin/circuit tests check the full count), and for the 2KiB window
// partition (2 sectors) tests/fallback_circuit.rs' count.
func TestCircuitInfoPoStProof(t *testing.T) {
	for proof, want := range map[string]string{
		"StackedDrgWindow32GiBV1_2": "\nconstraints=125279217 inputs=",
		"StackedDrgWinning2KiBV1":   "\nconstraints=",
	} {
		out := clitest.CaptureStdout(t, func() {
			if err := RunCircuit(context.Background(), []string{"info", "--post-proof", proof}); err != nil {
				t.Error(err)
			}
		})
		if !strings.Contains(out, want) || !strings.Contains(out, "witness per partition: packed at most") {
			t.Fatalf("circuit info --post-proof %s:\n%s", proof, out)
		}
	}
}
