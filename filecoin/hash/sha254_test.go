package hash

import (
	"encoding/hex"
	"testing"
)

func hex32(t *testing.T, s string) [32]byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil || len(b) != 32 {
		t.Fatalf("bad hex %q: %v", s, err)
	}
	return [32]byte(b)
}

func TestTrim(t *testing.T) {
	var d [32]byte
	for i := range d {
		d[i] = 0xff
	}
	got := Trim(d)
	if got[31] != 0x3f || got[30] != 0xff || got[0] != 0xff {
		t.Errorf("Trim = %x", got)
	}
}

// TestSha254Vectors checks tree-D node hashes against upstream values.
func TestSha254Vectors(t *testing.T) {
	var one, zero [32]byte
	one[0] = 1
	// curio lib/proof/treed_build_test.go TestHashChunk / TestHashChunk2L
	// (commit e0294b0f948132d41e8f42f59fa949495d5fd3af).
	h10 := Sha254Node(one, zero)
	if w := hex32(t, "16abab341fb7f370e27e4dadcf81766dd0dfd0ae64469477bb2cf6614938b22f"); h10 != w {
		t.Errorf("H(1, 0) = %x, want %x", h10, w)
	}
	h00 := Sha254Node(zero, zero)
	if w := hex32(t, "f5a5fd42d16a20302798ef6ed309979b43003d2320d9f0e8ea9831a92759fb0b"); h00 != w {
		t.Errorf("H(0, 0) = %x, want %x", h00, w)
	}
	if w := hex32(t, "0dd6dae41c2f75550129594fb644e4a842cfafb316a2d59321e388fe84a1ec2f"); Sha254Node(h10, h00) != w {
		t.Errorf("H(H(1,0), H(0,0)) = %x, want %x", Sha254Node(h10, h00), w)
	}
	if Sha254(one[:], zero[:]) != h10 || Sha254Nodes([][32]byte{one, zero}) != h10 {
		t.Error("Sha254 / Sha254Nodes disagree with Sha254Node")
	}
	// rust-fil-proofs filecoin-proofs/tests/pieces.rs test_compute_comm_d_empty
	// (commit 87348a749d80447d00c595af834a8ed73c09e4d9): comm_d of an empty
	// 128-byte and 2048-byte sector, i.e. the root of 4 and 64 zero leaves.
	z := zero
	roots := map[int][32]byte{}
	for level := 1; level <= 6; level++ {
		z = Sha254Node(z, z)
		roots[level] = z
	}
	if w := hex32(t, "3731bb99ac689f66eef5973e4a94da188f4ddcae580724fc6f3fd60dfd488333"); roots[2] != w {
		t.Errorf("empty 128-byte comm_d = %x, want %x", roots[2], w)
	}
	w2k := [32]byte{252, 126, 146, 130, 150, 229, 22, 250, 173, 233, 134, 178, 143, 146, 212, 74, 79, 36,
		185, 53, 72, 82, 35, 55, 106, 121, 144, 39, 188, 24, 248, 51}
	if roots[6] != w2k {
		t.Errorf("empty 2KiB comm_d = %x, want %x", roots[6], w2k)
	}
}
