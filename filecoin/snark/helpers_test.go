package snark_test

import (
	"context"
	"testing"

	"github.com/c2flow/c2flow/filecoin/proofs"
	"github.com/c2flow/c2flow/filecoin/seal"
	"github.com/c2flow/c2flow/gpu"
	"github.com/c2flow/c2flow/scheme"
)

// testProver is the prover id of the test sectors.
var testProver = [32]byte{'c', '2', 'f', 'l', 'o', 'w', ' ', 't', 'e', 's', 't'}

// seal2KiB seals 2KiB sector id of testProver (a fraction of a second).
func seal2KiB(t *testing.T, p proofs.RegisteredSealProof, id uint64) *seal.Sealed {
	t.Helper()
	s, err := seal.Seal(context.Background(), seal.TestParams(p, testProver, id))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// proveOnCPU loads sec's circuit from sc, checks that its partition's
// bytes are what the counts say, and proves sec on the CPU.
func proveOnCPU(ctx context.Context, t *testing.T, sc scheme.Scheme, sec scheme.Sector) ([]byte, []scheme.PartitionTimes) {
	t.Helper()
	circ, err := sc.Circuit(ctx, sec.Proof())
	if err != nil {
		t.Fatal(err)
	}
	if want, _ := sc.PartitionBytes(ctx, sec.Proof()); circ.PartitionBytes() != want {
		t.Errorf("the loaded circuit's partition is %d bytes, the counts say %d", circ.PartitionBytes(), want)
	}
	slots, err := gpu.CPUSlots(1, 0)
	if err != nil {
		t.Fatal(err)
	}
	proof, times, err := scheme.ProveDirect(ctx, circ, sec, slots, nil)
	if err != nil {
		t.Fatal(err)
	}
	return proof, times
}
