package sdr

import (
	"testing"

	"github.com/c2flow/c2flow/filecoin/proofs"
)

// proofGraph returns the graph of registered seal proof p, supported or
// not.
func proofGraph(tb testing.TB, p proofs.RegisteredSealProof) *Graph {
	tb.Helper()
	info, err := proofs.Describe(p)
	if err != nil {
		tb.Fatal(err)
	}
	g, err := GraphFor(info)
	if err != nil {
		tb.Fatalf("graph of %s: %v", p, err)
	}
	return g
}

// TestParamsFor checks the challenge mode each registered proof selects
// (filecoin-proofs src/parameters.rs select_challenges at rust-fil-proofs
// 87348a749d80447d00c595af834a8ed73c09e4d9: synthetic and non-interactive
// by API feature, interactive otherwise) and that GraphFor and
// ChallengeParamsFor carry the registry's values. The registry's values
// themselves are pinned in filecoin/proofs' tests.
func TestParamsFor(t *testing.T) {
	for _, c := range []struct {
		p    proofs.RegisteredSealProof
		mode ChallengeMode
	}{
		{proofs.StackedDrg2KiBV1, Interactive},
		{proofs.StackedDrg32GiBV1, Interactive},
		{proofs.StackedDrg2KiBV1_1, Interactive},
		{proofs.StackedDrg32GiBV1_1, Interactive},
		{proofs.StackedDrg64GiBV1_1, Interactive},
		{proofs.StackedDrg512MiBV1_1_Feat_SyntheticPoRep, Synthetic},
		{proofs.StackedDrg32GiBV1_1_Feat_SyntheticPoRep, Synthetic},
		{proofs.StackedDrg8MiBV1_2_Feat_NonInteractivePoRep, NonInteractive},
		{proofs.StackedDrg32GiBV1_2_Feat_NonInteractivePoRep, NonInteractive},
	} {
		info, err := proofs.Describe(c.p)
		if err != nil {
			t.Fatal(err)
		}
		if got := ModeFor(info); got != c.mode {
			t.Errorf("%s: mode %s, want %s", c.p, got, c.mode)
		}
		g := proofGraph(t, c.p)
		if g.Nodes() != info.Nodes || g.SectorSize() != info.SectorSize || g.PoRepID() != info.PoRepID || g.APIVersion() != info.APIVersion {
			t.Errorf("%s: graph of %d nodes, porep id %x, api %s; want %d, %x, %s", c.p,
				g.Nodes(), g.PoRepID(), g.APIVersion(), info.Nodes, info.PoRepID, info.APIVersion)
		}
		replicaID, commR, seed := [32]byte{1}, [32]byte{2}, [32]byte{3}
		want := ChallengeParams{Mode: c.mode, SectorNodes: info.Nodes, ChallengesPerPartition: info.ChallengesPerPartition,
			ReplicaID: replicaID, CommR: commR, Seed: seed}
		if got := ChallengeParamsFor(info, replicaID, commR, seed); got != want {
			t.Errorf("%s: challenge params %+v, want %+v", c.p, got, want)
		}
	}
	if _, err := GraphFor(proofs.SealProofInfo{}); err == nil {
		t.Error("GraphFor(zero info): no error")
	}
}
