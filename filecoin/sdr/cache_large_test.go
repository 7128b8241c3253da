//go:build large

package sdr

import (
	"testing"

	"github.com/c2flow/c2flow/filecoin/proofs"
)

// TestParentCacheDigestProduction covers the 32GiB and 64GiB graphs (60 and
// 120 GiB of cache hashed; minutes even on many cores). It runs on demand:
// go test -tags large -run TestParentCacheDigestProduction ./filecoin/sdr/. The 64GiB API 1.0.0 graph is the only
// one where the legacy 32-bit truncation of expander indexes changes parents.
func TestParentCacheDigestProduction(t *testing.T) {
	for _, p := range []proofs.RegisteredSealProof{proofs.StackedDrg32GiBV1, proofs.StackedDrg32GiBV1_1, proofs.StackedDrg64GiBV1, proofs.StackedDrg64GiBV1_1} {
		testParentCacheDigest(t, p)
	}
}
