//go:build cuda

package direct

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	curve "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/c2flow/c2flow/gpu"
	"github.com/c2flow/c2flow/registry"
	"github.com/c2flow/c2flow/scheme"
	"github.com/c2flow/c2flow/scheme/testscheme/params/paramstest"
)

// c2flow prove --backend cuda logs, at info, the device's memory when it
// opens (type, limit) and, once per base set, whether the bases are
// resident or streamed, and still proves (its C2 is verified before it is
// written). The device is $C2FLOW_ICICLE_DEVICE's (make test-icicle: CPU,
// ICICLE's CPU backend). --device-memory holds the A bases and their
// scalars only: A is resident, the larger B, K and H sets are streamed.
func TestCUDAProveLogsDeviceMemory(t *testing.T) {
	ctx := context.Background()
	typ, err := gpu.ParseDeviceType(os.Getenv(gpu.DeviceTypeEnv))
	if err != nil {
		t.Fatal(err)
	}
	keys := paramstest.Keys(t, "2KiB") // made once, under the lock the test packages share
	pk := keys.PK
	// On the device an affine point is two 48-byte coordinates.
	const pointBytes, scalarBytes = 2 * 48, fr.Bytes
	// Room for A and its scalars beside the NTT domain's twiddles (the
	// backend counts them: a root of unity per element).
	twiddles := int64(pk.Domain.Cardinality) * scalarBytes
	limit := int64(len(pk.G1.A))*(pointBytes+scalarBytes) + twiddles
	for _, set := range [][]curve.G1Affine{pk.G1.B, pk.G1.K, pk.G1.Z} {
		if int64(len(set))*(pointBytes+scalarBytes) <= limit-twiddles-int64(len(pk.G1.A))*pointBytes {
			t.Fatalf("a base set of %d points would fit beside A's %d: the limit streams nothing", len(set), len(pk.G1.A))
		}
	}

	dir := t.TempDir()
	sc, err := registry.Schemes(registry.Options{}).For("2KiB")
	if err != nil {
		t.Fatal(err)
	}
	sealer, err := scheme.As[scheme.TestSealer](sc, "test sealer")
	if err != nil {
		t.Fatal(err)
	}
	c1s, err := sealer.SealTest(ctx, scheme.SealRequest{Proof: "2KiB", Prover: scheme.TestProver(), First: 1, N: 1, Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	c1, out := c1s[0], filepath.Join(dir, "1.c2")
	logged, err := runProveLogged(t, "--c1", c1, "--out", out, "--params", paramstest.Dir(), "--backend", "cuda", "--devices", "0",
		"--device-memory", fmt.Sprint(limit), "--log-level", "info")
	t.Logf("c2flow prove's stderr:\n%s", logged)
	if err != nil {
		t.Fatalf("prove --backend cuda on %s: %v", typ, err)
	}
	if _, err := os.Stat(out); err != nil {
		t.Fatalf("no verified C2 written: %v", err)
	}
	log := logged
	for _, want := range []string{
		fmt.Sprintf(`msg="device memory" device=\S+/0 type=%s limit_bytes=%d `, typ, limit),
		fmt.Sprintf(`msg="msm bases resident on the device" device=\S+/0 points=%d `, len(pk.G1.A)),
	} {
		if !regexp.MustCompile(want).MatchString(log) {
			t.Errorf("the log lacks %q", want)
		}
	}
	streamed := regexp.MustCompile(`msg="msm bases streamed in chunks \(they do not fit the device memory limit\)" device=\S+/0 points=(\d+) `).FindAllStringSubmatch(log, -1)
	got := map[string]bool{}
	for _, m := range streamed {
		got[m[1]] = true
	}
	for _, set := range [][]curve.G1Affine{pk.G1.B, pk.G1.K, pk.G1.Z} {
		if !got[fmt.Sprint(len(set))] {
			t.Errorf("no streamed line for the base set of %d points (streamed: %v)", len(set), streamed)
		}
	}
}

// runProveLogged runs c2flow prove with args and returns what it logged
// (it logs to os.Stderr) and its error.
func runProveLogged(t *testing.T, args ...string) (string, error) {
	t.Helper()
	stderr, err := os.Create(filepath.Join(t.TempDir(), "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	saved := os.Stderr
	os.Stderr = stderr
	err = RunProve(context.Background(), args)
	os.Stderr = saved
	stderr.Close()
	logged, rerr := os.ReadFile(stderr.Name())
	if rerr != nil {
		t.Fatal(rerr)
	}
	return string(logged), err
}
