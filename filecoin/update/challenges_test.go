package update

import (
	"encoding/binary"
	"fmt"
	"math/big"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/c2flow/c2flow/filecoin/circuit"
)

// xorShift is rand_xorshift 0.3's XorShiftRng, as rust-fil-proofs' tests
// seed it (from_seed of 16 bytes, little-endian words; next_u64 = low
// word then high word).
type xorShift struct{ x, y, z, w uint32 }

func newXorShift(seed [16]byte) *xorShift {
	return &xorShift{binary.LittleEndian.Uint32(seed[0:]), binary.LittleEndian.Uint32(seed[4:]),
		binary.LittleEndian.Uint32(seed[8:]), binary.LittleEndian.Uint32(seed[12:])}
}

func (r *xorShift) nextU32() uint32 {
	t := r.x ^ r.x<<11
	r.x, r.y, r.z = r.y, r.z, r.w
	r.w = r.w ^ r.w>>19 ^ (t ^ t>>8)
	return r.w
}

func (r *xorShift) nextU64() uint64 {
	lo := uint64(r.nextU32())
	return uint64(r.nextU32())<<32 | lo
}

// randomFr is blstrs' Scalar::random: four little-endian words, the top
// bit masked, drawn again until below the modulus.
func randomFr(r *xorShift) fr.Element {
	for {
		var words [4]uint64
		for i := range words {
			words[i] = r.nextU64()
		}
		words[3] &= ^uint64(0) >> 1
		var b [32]byte
		for i, w := range words {
			binary.BigEndian.PutUint64(b[24-8*i:], w)
		}
		v := new(big.Int).SetBytes(b[:])
		if v.Cmp(fr.Modulus()) < 0 {
			var e fr.Element
			e.SetBigInt(v)
			return e
		}
	}
}

// storage-proofs-core's TEST_SEED.
var testSeed = [16]byte{0x59, 0x62, 0xbe, 0x5d, 0x76, 0x3d, 0x31, 0x8d, 0x17, 0xdb, 0x37, 0x32, 0x54, 0x06, 0xbc, 0xe5}

// TestChallengesAgainstHardcoded is challenges.rs
// test_challenges_against_hardcoded (rust-fil-proofs 87348a74): comm_r_new
// drawn from XorShiftRng(TEST_SEED), the first five challenges of
// partitions of every allowed sector size.
func TestChallengesAgainstHardcoded(t *testing.T) {
	commRNew := randomFr(newXorShift(testSeed))
	const (
		kib = 1 << 10
		mib = 1 << 20
		gib = 1 << 30
	)
	for _, tc := range []struct {
		bytes uint64
		k     int
		want  [5]uint32
	}{
		{1 * kib, 0, [5]uint32{21, 7, 3, 31, 0}},
		{2 * kib, 0, [5]uint32{53, 51, 56, 3, 0}},
		{4 * kib, 0, [5]uint32{117, 25, 62, 0, 72}},
		{8 * kib, 0, [5]uint32{245, 140, 15, 128, 28}},
		{16 * kib, 0, [5]uint32{245, 140, 15, 128, 28}},
		{16 * kib, 1, [5]uint32{286, 308, 493, 510, 508}},
		{32 * kib, 0, [5]uint32{245, 454, 3, 400, 193}},
		{32 * kib, 1, [5]uint32{542, 666, 955, 927, 911}},
		{8 * mib, 0, [5]uint32{36085, 32783, 44060, 10950, 3731}},
		{8 * mib, 1, [5]uint32{78878, 130797, 112892, 93994, 78379}},
		{16 * mib, 0, [5]uint32{101621, 16391, 109319, 25944, 41193}},
		{16 * mib, 1, [5]uint32{209950, 163702, 175679, 224741, 197410}},
		{512 * mib, 0, [5]uint32{1019125, 116736, 706220, 59698, 799498}},
		{512 * mib, 1, [5]uint32{2092548, 1213276, 1185483, 1164598, 1095197}},
		{512 * mib, 14, [5]uint32{15212432, 15665918, 15015423, 15012912, 15495223}},
		{512 * mib, 15, [5]uint32{16388544, 15794686, 16637142, 16319148, 16328348}},
		{32 * gib, 0, [5]uint32{1019125, 27985696, 15282860, 11586600, 44651330}},
		{32 * gib, 1, [5]uint32{109168525, 127316247, 80331041, 97065716, 72310052}},
		{32 * gib, 14, [5]uint32{990420169, 955146989, 968005601, 976863263, 944650706}},
		{32 * gib, 15, [5]uint32{1038629497, 1053983614, 1030421316, 1027373887, 1068685433}},
		{64 * gib, 0, [5]uint32{1019125, 13992848, 3820715, 18225541, 57316660}},
		{64 * gib, 1, [5]uint32{243386253, 197875851, 204632136, 171516766, 247789010}},
		{64 * gib, 14, [5]uint32{1997053129, 1920414070, 2003609080, 1900492803, 1963254685}},
		{64 * gib, 15, [5]uint32{2045262457, 2036941247, 2136653521, 2091356007, 2147167623}},
	} {
		s, err := circuit.UpdateShapeOf(tc.bytes)
		if err != nil {
			t.Fatal(err)
		}
		cs, err := Challenges(s, commRNew, tc.k)
		if err != nil {
			t.Fatal(err)
		}
		if len(cs) != s.Challenges() {
			t.Fatalf("%d bytes, partition %d: %d challenges, want %d", tc.bytes, tc.k, len(cs), s.Challenges())
		}
		if fmt.Sprint(cs[:5]) != fmt.Sprint(tc.want[:]) {
			t.Errorf("%d bytes, partition %d: %v, want %v", tc.bytes, tc.k, cs[:5], tc.want)
		}
	}
}

// challenges.rs test_challenge_bucketing: every challenge of partition k
// lies in the k-th chunk of the sector's nodes.
func TestChallengeBucketing(t *testing.T) {
	r := newXorShift(testSeed)
	for _, b := range []uint64{1 << 10, 2 << 10, 4 << 10, 8 << 10, 16 << 10, 32 << 10, 8 << 20, 16 << 20, 512 << 20, 32 << 30, 64 << 30} {
		s, err := circuit.UpdateShapeOf(b)
		if err != nil {
			t.Fatal(err)
		}
		commRNew := randomFr(r)
		per := uint32(s.SectorNodes / s.Partitions())
		for k := range s.Partitions() {
			cs, err := Challenges(s, commRNew, k)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range cs {
				if c/per != uint32(k) {
					t.Fatalf("%d bytes, partition %d: challenge %d outside its chunk", b, k, c)
				}
			}
		}
	}
}
