package r1cs

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"

	"golang.org/x/crypto/blake2s"
)

// BellpersonHash returns the fingerprint bellperson's TestConstraintSystem
// computes with hash() (src/gadgets/test/mod.rs): BLAKE2s-256 over the
// big-endian u64 counts of inputs (One included), aux variables and
// constraints, then for each constraint's A, B and C the u64 number of
// terms and each term as 'I' or 'A', the u64 index and the 32-byte
// big-endian coefficient, terms sorted inputs first and by index, repeated
// variables merged and zero coefficients dropped. Only the synthesized
// constraints are covered (TestConstraintSystem never appends the
// per-input ones). Synthesizing the same circuit into bellperson's
// TestConstraintSystem must give the same hex string.
func (s *Shape) BellpersonHash() (string, error) {
	h, err := blake2s.New256(nil)
	if err != nil {
		return "", fmt.Errorf("hashing shape: %w", err)
	}
	var buf [9 + 32]byte
	binary.BigEndian.PutUint64(buf[0:8], uint64(s.NumInputs))
	h.Write(buf[:8])
	binary.BigEndian.PutUint64(buf[0:8], uint64(s.NumAux))
	h.Write(buf[:8])
	binary.BigEndian.PutUint64(buf[0:8], uint64(s.NumSynthesized))
	h.Write(buf[:8])
	for r := 0; r < s.NumSynthesized; r++ {
		for _, m := range []*Matrix{&s.A, &s.B, &s.C} {
			lo, hi := m.RowStart[r], m.RowStart[r+1]
			binary.BigEndian.PutUint64(buf[0:8], uint64(hi-lo))
			h.Write(buf[:8])
			for k := lo; k < hi; k++ {
				v := m.Vars[k]
				buf[0] = 'I'
				if v.IsAux() {
					buf[0] = 'A'
				}
				binary.BigEndian.PutUint64(buf[1:9], uint64(v.Index()))
				c := s.Coeffs[m.Coeffs[k]].Bytes() // canonical big-endian
				copy(buf[9:], c[:])
				h.Write(buf[:])
			}
		}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
