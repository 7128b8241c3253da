package proofs

import (
	"encoding/hex"
	"testing"
)

// The vectors of cuzk's test_make_prover_id (curio
// e0294b0f948132d41e8f42f59fa949495d5fd3af,
// extern/cuzk/cuzk-core/src/prover.rs) and the largest actor id, whose
// varint is 10 bytes.
func TestProverID(t *testing.T) {
	for _, c := range []struct {
		miner uint64
		want  string // the leading bytes; the rest are zero
	}{
		{1000, "e807"},
		{0, ""},
		{1, "01"},
		{127, "7f"},
		{128, "8001"},
		{1<<64 - 1, "ffffffffffffffffff01"},
	} {
		id := ProverID(c.miner)
		want := make([]byte, 32)
		b, _ := hex.DecodeString(c.want)
		copy(want, b)
		if got := hex.EncodeToString(id[:]); got != hex.EncodeToString(want) {
			t.Errorf("ProverID(%d) = %s, want %x", c.miner, got, want)
		}
	}
}
