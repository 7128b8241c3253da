package snark_test

import (
	"context"
	"testing"

	"github.com/c2flow/c2flow/filecoin/proofs"
	"github.com/c2flow/c2flow/filecoin/seal"
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
