package post

import (
	"slices"
	"testing"

	"github.com/c2flow/c2flow/filecoin/merkle"
	"github.com/c2flow/c2flow/filecoin/proofs"
)

// The leaves post.vproof's 10 openings open (the nodes their paths
// spell, written by rust-fil-proofs) are the challenges of sector 1 under
// postpub.json's zero randomness: SHA-256(randomness ‖ 1 LE ‖ n LE), first
// 8 bytes LE, mod 2^30 nodes, n = 0..9.
func TestGoldenLeafChallenges(t *testing.T) {
	g := loadGolden(t)
	shape := merkle.Shape{Base: 8, Sub: 8}
	var opened []uint64
	for n, p := range g.vp.Sectors[0].Openings {
		idx, err := p.PathIndex(shape)
		if err != nil {
			t.Fatalf("opening %d: %v", n, err)
		}
		opened = append(opened, idx)
	}
	if g.randomness != ([32]byte{}) || g.sector.ID != 1 {
		t.Fatalf("postpub.json: randomness %x sector %d", g.randomness, g.sector.ID)
	}
	got := SectorChallenges(g.info, g.randomness, g.sector.ID, 0)
	if !slices.Equal(got, opened) {
		t.Fatalf("challenges %v, post.vproof opens %v", got, opened)
	}
	if want := []uint64{707914199, 439148358, 967788220, 548708700, 1061661429, 6202012, 1055504637, 389535735, 1000069704, 600088878}; !slices.Equal(got, want) {
		t.Errorf("sector 1's leaves %v, want %v", got, want)
	}
	for n, want := range opened {
		if c := LeafChallenge(g.randomness, 1, uint64(n), 1<<30); c != want {
			t.Errorf("LeafChallenge(n=%d) = %d, want %d", n, c, want)
		}
	}
	// A window V1_2 proof's sector opens the same leaves at any position;
	// a V1 proof's sector at position 1 opens those of indices 10..19.
	v12, _ := proofs.LookupPoSt(proofs.StackedDrgWindow32GiBV1_2)
	if at5 := SectorChallenges(v12, g.randomness, 1, 5); !slices.Equal(at5, opened) {
		t.Errorf("V1_2 at position 5: %v", at5)
	}
	at1 := SectorChallenges(g.info, g.randomness, 1, 1)
	for n := range at1 {
		if at1[n] != LeafChallenge(g.randomness, 1, uint64(10+n), 1<<30) {
			t.Errorf("V1 at position 1, challenge %d: %d", n, at1[n])
		}
	}
}

// utils.rs get_challenge_index.
func TestChallengeIndex(t *testing.T) {
	for _, c := range []struct {
		v                proofs.APIVersion
		sector, count, n int
		want             uint64
	}{
		{proofs.APIVersion1_0_0, 0, 10, 3, 3},
		{proofs.APIVersion1_0_0, 3, 10, 4, 34},
		{proofs.APIVersion1_1_0, 2349, 10, 9, 23499},
		{proofs.APIVersion1_0_0, 65, 1, 0, 65}, // winning circuit sector 65
		{proofs.APIVersion1_2_0, 3, 10, 4, 4},
		{proofs.APIVersion1_2_0, 2348, 10, 9, 9},
	} {
		if got := ChallengeIndex(c.v, c.sector, c.count, c.n); got != c.want {
			t.Errorf("ChallengeIndex(%v, %d, %d, %d) = %d, want %d", c.v, c.sector, c.count, c.n, got, c.want)
		}
	}
	if MaskRandomness([32]byte{31: 0xff})[31] != 0x3f {
		t.Error("mask")
	}
}

// Winning sector selection: SHA-256(prover_id ‖ randomness ‖ n as u64
// LE), first 8 bytes LE, mod the sector set's size. The expected values
// were computed apart from this code (Python's hashlib, struct '<Q'),
// for miner 1000's prover id; upstream ships no vector.
func TestWinningSectors(t *testing.T) {
	prover := proofs.ProverID(1000)
	var seq [32]byte
	for i := range seq {
		seq[i] = byte(i)
	}
	seq[31] = 0x1f
	for _, c := range []struct {
		randomness [32]byte
		n, set     uint64
		want       uint64
	}{
		{[32]byte{}, 0, 100, 95}, {[32]byte{}, 1, 100, 53},
		{[32]byte{}, 0, 2349, 996}, {[32]byte{}, 1, 2349, 1969},
		{seq, 0, 100, 6}, {seq, 1, 100, 8}, {seq, 0, 2349, 2315}, {seq, 1, 2349, 2150},
		{[32]byte{}, 0, 1 << 63, 6604285908810928695 % (1 << 63)},
	} {
		got, err := SectorChallenge(c.randomness, prover, c.n, c.set)
		if err != nil || got != c.want {
			t.Errorf("SectorChallenge(%x.., n=%d, %d sectors) = %d, %v; want %d", c.randomness[:2], c.n, c.set, got, err, c.want)
		}
	}
	win, _ := proofs.LookupPoSt(proofs.StackedDrgWinning32GiBV1)
	got, err := WinningSectors(win, seq, prover, 2349)
	if err != nil || !slices.Equal(got, []uint64{2315}) {
		t.Errorf("WinningSectors = %v, %v; want [2315] (one sector)", got, err)
	}
	if _, err := WinningSectors(win, seq, prover, 0); err == nil {
		t.Error("an empty sector set")
	}
	wdw, _ := proofs.LookupPoSt(proofs.StackedDrgWindow32GiBV1_2)
	if _, err := WinningSectors(wdw, seq, prover, 10); err == nil {
		t.Error("winning sectors of a window proof")
	}
	if _, err := WinningSectors(win, [32]byte{31: 0xff}, prover, 10); err == nil {
		t.Error("non-canonical randomness")
	}
}
