//go:build cuda

package prover_test

import (
	"context"
	"os"
	"testing"

	"github.com/c2flow/c2flow/gpu"
	"github.com/c2flow/c2flow/scheme/testscheme"
	"github.com/c2flow/c2flow/scheme/testscheme/porep/poreptest"
	"github.com/c2flow/c2flow/scheme/testscheme/schemetest"
)

// Proofs whose device phase ran on the GPU verify with gnark's verifier.
// Under make test-icicle ($C2FLOW_ICICLE_DEVICE=CPU) the device is
// ICICLE's CPU backend, whose MSMs are several times slower than
// gnark-crypto's: it proves the 2KiB sector (one partition) only, which
// runs every step of the device phase; a GPU proves 32KiB's four
// partitions too, the bases resident across partitions.
func TestCUDAProofsVerify(t *testing.T) {
	typ, err := gpu.ParseDeviceType(os.Getenv(gpu.DeviceTypeEnv))
	if err != nil {
		t.Fatal(err)
	}
	slots, err := gpu.CUDASlots(nil, gpu.WithDeviceType(typ))
	if err != nil {
		t.Fatal(err)
	}
	profiles := []string{"2KiB", "32KiB"}
	if typ != gpu.DeviceCUDA {
		profiles = profiles[:1]
	}
	for _, profile := range profiles {
		p := newProver(t, profile)
		c1 := poreptest.Sector(t, profile, 31).C1()
		c2, times, err := schemetest.ProveSector(context.Background(), p.Prover, p.keys, slots, c1, nil)
		if err != nil {
			t.Fatalf("%s: %v", profile, err)
		}
		if err := testscheme.VerifyC2(p.Keys.VK, c1.Statement(), c2); err != nil {
			t.Fatalf("%s: %v", profile, err)
		}
		for _, pt := range times {
			t.Logf("%s partition %s: device phase %v (NTT %v, MSM %v) on %s", profile, pt.Partition, pt.Device, pt.NTT, pt.MSM, slots.Devices()[0].Name())
		}
	}
}
