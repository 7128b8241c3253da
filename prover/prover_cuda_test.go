//go:build cuda

package prover_test

import (
	"context"
	"testing"

	"github.com/c2flow/c2flow/gpu"
	"github.com/c2flow/c2flow/scheme/testscheme"
	"github.com/c2flow/c2flow/scheme/testscheme/porep/poreptest"
	"github.com/c2flow/c2flow/scheme/testscheme/schemetest"
)

// Proofs whose device phase ran on the GPU verify with gnark's verifier.
func TestCUDAProofsVerify(t *testing.T) {
	slots, err := gpu.CUDASlots(nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, profile := range []string{"2KiB", "32KiB"} {
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
			t.Logf("%s partition %s: device phase %v on %s", profile, pt.Partition, pt.Device, slots.Devices()[0].Name())
		}
	}
}
