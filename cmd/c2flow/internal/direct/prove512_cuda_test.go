//go:build cuda

package direct

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/c2flow/c2flow/filecoin/fctest"
	"github.com/c2flow/c2flow/filecoin/groth"
	"github.com/c2flow/c2flow/filecoin/paramfiles"
	"github.com/c2flow/c2flow/filecoin/proofs"
	"github.com/c2flow/c2flow/gpu"
	"github.com/c2flow/c2flow/registry"
	"github.com/c2flow/c2flow/scheme"
)

// A 512MiB Filecoin PoRep sector (two partitions of 4.4 million
// constraints, an NTT domain of 2^23) proved by c2flow prove --backend
// cuda on $C2FLOW_ICICLE_DEVICE's device (make test-icicle: ICICLE's CPU
// backend) under a 384 MiB device limit: the quotient's two vectors (512
// MiB at 2^23) do not fit, so it runs on the host, and the A, K and H base
// sets (420 MB, 424 MB and 805 MB of points) do not either, so their MSMs
// stream the bases in chunks. The C2 is verified before it is written;
// the test checks its size and that the log says both paths were taken.
// The development setup is cached by circuit digest (2 m 23 s to make on 2
// cores); the sector is sealed sparsely.
func TestCUDAProve512MiBPoRepStreamsUnderADeviceLimit(t *testing.T) {
	ctx := context.Background()
	typ, err := gpu.ParseDeviceType(os.Getenv(gpu.DeviceTypeEnv))
	if err != nil {
		t.Fatal(err)
	}
	info, err := proofs.Lookup(proofs.StackedDrg512MiBV1_1)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	cached, err := registry.FilecoinDevSetup(ctx, info.Name, fctest.DevParams())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("development setup of %s: %v", info.Name, time.Since(t0).Round(time.Second))
	dir := t.TempDir()
	for _, p := range []string{cached.Params, cached.VK, filepath.Join(fctest.DevParams(), paramfiles.ParametersJSON),
		filepath.Join(fctest.DevParams(), paramfiles.DevMarker)} {
		if err := os.Symlink(p, filepath.Join(dir, filepath.Base(p))); err != nil {
			t.Fatal(err)
		}
	}
	// Sealed sparsely (a committed-capacity sector whose opened nodes
	// alone hold real labels: seconds; a full seal is 5 minutes here): the
	// C1 is checked natively before it is proved.
	sc, err := registry.Schemes(registry.Options{}).For(info.Name)
	if err != nil {
		t.Fatal(err)
	}
	sealer, err := scheme.As[scheme.TestSealer](sc, "test sealer")
	if err != nil {
		t.Fatal(err)
	}
	t0 = time.Now()
	c1s, err := sealer.SealTest(ctx, scheme.SealRequest{Proof: info.Name, Prover: scheme.TestProver(), First: 7, N: 1, Dir: t.TempDir(), Sparse: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("sealed a %s sector sparsely: %v", info.Name, time.Since(t0).Round(time.Second))

	const limit = 384 << 20
	out := filepath.Join(t.TempDir(), "7.proof")
	t0 = time.Now()
	log, err := runProveLogged(t, "--c1", c1s[0], "--filecoin-params", dir, "--shape-cache", t.TempDir(),
		"--out", out, "--backend", "cuda", "--devices", "0", "--device-memory", fmt.Sprint(limit), "--log-level", "info")
	took := time.Since(t0)
	for _, l := range regexp.MustCompile(`(?m)^.*msg=(GPU_END|FINALIZE_END|"quotient|"msm bases|"ntt|"device memory).*$`).FindAllString(log, -1) {
		t.Log(l)
	}
	if err != nil {
		t.Fatalf("prove --backend cuda on %s under a %d-byte limit: %v\n%s", typ, limit, err, log)
	}
	t.Logf("c2flow prove of a %s sector on %s under a %d MiB device limit: %v", info.Name, typ, limit>>20, took.Round(time.Second))
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatalf("no verified C2 written: %v", err)
	}
	if len(b) != groth.ProofSize*info.Partitions {
		t.Fatalf("a C2 of %d bytes, want %d", len(b), groth.ProofSize*info.Partitions)
	}
	for _, want := range []string{
		`msg="quotient on the host[^"]*" device=\S+/0 domain=8388608 `,
	} {
		if !regexp.MustCompile(want).MatchString(log) {
			t.Errorf("the log lacks %q", want)
		}
	}
	for _, points := range []string{"4385080", "4420837", "8388607"} { // A, K, H
		if !regexp.MustCompile(`msg="msm bases streamed in chunks \(they do not fit the device memory limit\)" device=\S+/0 points=` + points + ` `).MatchString(log) {
			t.Errorf("the base set of %s points was not streamed", points)
		}
	}
	if n := len(regexp.MustCompile(`msg=GPU_END `).FindAllString(log, -1)); n != info.Partitions {
		t.Errorf("%d GPU_END lines, want one per partition (%d)", n, info.Partitions)
	}
}
