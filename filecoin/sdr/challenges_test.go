package sdr

import (
	"crypto/sha256"
	"encoding/binary"
	"math/big"
	"slices"
	"testing"
)

func frU64(v uint64) [32]byte {
	var b [32]byte
	binary.LittleEndian.PutUint64(b[:], v)
	return b
}

// TestSynthChallengesUpstream checks challenges.rs
// test_synth_challenges_against_hardcoded (rust-fil-proofs
// 87348a749d80447d00c595af834a8ed73c09e4d9): sector_nodes 2^10,
// replica_id Fr(55), comm_r Fr(101), 21 synthetic challenges, 10 PoRep
// challenges for rand [1; 32].
func TestSynthChallengesUpstream(t *testing.T) {
	wantSynth := []uint64{178, 297, 869, 211, 875, 477, 94, 781, 124, 332, 856, 801, 176, 692, 429, 691, 290, 204, 986, 210, 973}
	wantPoRep := []uint64{176, 781, 801, 986, 290, 211, 692, 856, 986, 332}
	var rnd [32]byte
	for i := range rnd {
		rnd[i] = 1
	}
	s, err := NewSynthGenerator(1<<10, frU64(55), frU64(101), 21)
	if err != nil {
		t.Fatal(err)
	}
	if got := s.All(); !slices.Equal(got, wantSynth) {
		t.Errorf("synthetic challenges %v, want %v", got, wantSynth)
	}
	for i := len(wantSynth) - 1; i >= 0; i-- {
		c, err := s.Challenge(uint64(i))
		if err != nil || c != wantSynth[i] {
			t.Errorf("Challenge(%d) = %d, %v; want %d", i, c, err, wantSynth[i])
		}
	}
	if _, err := s.Challenge(21); err == nil {
		t.Error("Challenge(21): no error")
	}
	got, err := s.PoRepChallenges(rnd, 10, 0)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, wantPoRep) {
		t.Errorf("porep challenges %v, want %v", got, wantPoRep)
	}
}

// TestSynthPartitions ports test_synth_challenges_32gib: partition k's
// challenges are the k-th chunk of one long selection.
func TestSynthPartitions(t *testing.T) {
	s, err := NewDefaultSynthGenerator(1<<30, frU64(12345), frU64(678))
	if err != nil {
		t.Fatal(err)
	}
	if s.NumSynth() != DefaultSynthChallengeCount {
		t.Fatalf("NumSynth %d", s.NumSynth())
	}
	var rnd [32]byte
	rnd[0] = 1
	all, err := s.PoRepChallenges(rnd, 180, 0)
	if err != nil {
		t.Fatal(err)
	}
	for k := range 10 {
		part, err := s.PoRepChallenges(rnd, 18, k)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(part, all[18*k:18*k+18]) {
			t.Errorf("partition %d differs from the single-partition chunk", k)
		}
		viaParams, err := Challenges(ChallengeParams{Mode: Synthetic, SectorNodes: 1 << 30, ChallengesPerPartition: 18, ReplicaID: frU64(12345), CommR: frU64(678), Seed: rnd}, k)
		if err != nil || !slices.Equal(viaParams, part) {
			t.Errorf("Challenges(Synthetic, %d) = %v, %v", k, viaParams, err)
		}
	}
	for _, c := range all {
		if c == 0 || c >= 1<<30 {
			t.Errorf("challenge %d out of range", c)
		}
	}
	if _, err := NewSynthGenerator(1<<10, [32]byte{0: 1, 31: 0xff}, frU64(1), 21); err == nil {
		t.Error("non-canonical replica id: no error")
	}
}

// referenceChallenge recomputes a challenge with math/big, following
// challenges.rs literally.
func referenceChallenge(h [32]byte, sectorNodes uint64) uint64 {
	be := slices.Clone(h[:])
	slices.Reverse(be) // BigUint::from_bytes_le
	x := new(big.Int).SetBytes(be)
	x.Mod(x, new(big.Int).SetUint64(sectorNodes-1))
	x.Add(x, big.NewInt(1))
	return x.Uint64() & 0xffffffff // to_u32_digits()[0]
}

// TestInteractiveChallenges checks the derivation structurally (no
// upstream vector exists) and ports challenge_partition_equivalence.
func TestInteractiveChallenges(t *testing.T) {
	var replicaID, seed [32]byte
	replicaID[5], seed[7] = 3, 9
	for _, nodes := range []uint64{64, 1 << 18, 1 << 30, 1 << 31} {
		got, err := InteractiveChallenges(nodes, replicaID, seed, 18, 3)
		if err != nil {
			t.Fatal(err)
		}
		for i, c := range got {
			var buf []byte
			buf = append(buf, replicaID[:]...)
			buf = append(buf, seed[:]...)
			buf = binary.LittleEndian.AppendUint32(buf, uint32(18*3+i))
			if want := referenceChallenge(sha256.Sum256(buf), nodes); c != want {
				t.Errorf("nodes %d challenge %d = %d, want %d", nodes, i, c, want)
			}
		}
	}
	one, _ := InteractiveChallenges(1<<30, replicaID, seed, 200, 0)
	var many []uint64
	for k := range 5 {
		part, _ := InteractiveChallenges(1<<30, replicaID, seed, 40, k)
		many = append(many, part...)
	}
	if !slices.Equal(one, many) {
		t.Error("partitioned challenges differ from one partition")
	}
	viaParams, err := Challenges(ChallengeParams{Mode: Interactive, SectorNodes: 1 << 30, ChallengesPerPartition: 40, ReplicaID: replicaID, Seed: seed}, 2)
	if err != nil || !slices.Equal(viaParams, many[80:120]) {
		t.Errorf("Challenges(Interactive) = %v, %v", viaParams, err)
	}
	for _, bad := range []struct {
		nodes uint64
		k     int
	}{{1, 0}, {1<<32 + 1, 0}, {64, -1}, {64, 256}} {
		if _, err := InteractiveChallenges(bad.nodes, replicaID, seed, 2, bad.k); err == nil {
			t.Errorf("nodes %d, k %d: no error", bad.nodes, bad.k)
		}
	}
}

func TestNonInteractiveChallenges(t *testing.T) {
	var replicaID, commR [32]byte
	replicaID[1], commR[2] = 4, 8
	got, err := NonInteractiveChallenges(1<<30, replicaID, commR, 18, 125)
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range got {
		var buf []byte
		buf = append(buf, "filecoin.io|PoRep|1|NonInteractive|1"...)
		buf = append(buf, replicaID[:]...)
		buf = append(buf, commR[:]...)
		buf = binary.LittleEndian.AppendUint32(buf, uint32(18*125+i))
		if want := referenceChallenge(sha256.Sum256(buf), 1<<30); c != want {
			t.Errorf("challenge %d = %d, want %d", i, c, want)
		}
	}
	viaParams, err := Challenges(ChallengeParams{Mode: NonInteractive, SectorNodes: 1 << 30, ChallengesPerPartition: 18, ReplicaID: replicaID, CommR: commR}, 125)
	if err != nil || !slices.Equal(viaParams, got) {
		t.Errorf("Challenges(NonInteractive) = %v, %v", viaParams, err)
	}
	if _, err := Challenges(ChallengeParams{Mode: ChallengeMode(7), SectorNodes: 64}, 0); err == nil {
		t.Error("unknown mode: no error")
	}
}

func TestBigintToChallenge(t *testing.T) {
	cases := [][32]byte{{}, {0: 1}, {31: 0xff}, {0: 0xff, 8: 0xff, 16: 0xff, 24: 0xff, 31: 0xff}}
	var all [32]byte
	for i := range all {
		all[i] = 0xff
	}
	cases = append(cases, all)
	for _, x := range cases {
		for _, n := range []uint64{2, 3, 64, 1 << 18, 1<<32 - 1, 1 << 32} {
			if got, want := bigintToChallenge(&x, n), referenceChallenge(x, n); got != want {
				t.Errorf("bigintToChallenge(%x, %d) = %d, want %d", x, n, got, want)
			}
		}
	}
}
