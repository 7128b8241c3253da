package post

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"

	"github.com/c2flow/c2flow/filecoin/hash"
	"github.com/c2flow/c2flow/filecoin/proofs"
)

// MaskRandomness makes 32 bytes of chain randomness a field element as
// Lotus and Curio do before proving or verifying a PoSt (randomness[31]
// &= 0x3f): rust-fil-proofs refuses a non-canonical one
// (as_safe_commitment).
func MaskRandomness(r [32]byte) [32]byte {
	r[31] &= 0x3f
	return r
}

// checkCanonical is as_safe_commitment: the 32 bytes must be a field
// element, little endian.
func checkCanonical(what string, b [32]byte) error {
	if _, err := hash.ElementFromLE(b); err != nil {
		return fmt.Errorf("%s %x is not a field element (mask byte 31 with 0x3f): %w", what, b, err)
	}
	return nil
}

// SectorChallenge is vanilla.rs generate_sector_challenge: the first 8
// bytes, little endian, of SHA-256(prover_id ‖ randomness ‖ n as u64
// LE), modulo the number of sectors: which sector of the set the n-th
// winning challenge picks.
func SectorChallenge(randomness, proverID [32]byte, n uint64, sectorSetLen uint64) (uint64, error) {
	if sectorSetLen == 0 {
		return 0, fmt.Errorf("post: sector challenge %d of an empty sector set", n)
	}
	var buf [72]byte
	copy(buf[:32], proverID[:])
	copy(buf[32:64], randomness[:])
	binary.LittleEndian.PutUint64(buf[64:], n)
	h := sha256.Sum256(buf[:])
	return binary.LittleEndian.Uint64(h[:8]) % sectorSetLen, nil
}

// WinningSectors is winning_post.rs generate_winning_post_sector_challenge:
// the positions, in the provider's sorted sector set of sectorSetLen
// sectors, of the sectors a winning PoSt proves (WINNING_POST_SECTOR_COUNT,
// one).
func WinningSectors(info proofs.PoStProofInfo, randomness, proverID [32]byte, sectorSetLen uint64) ([]uint64, error) {
	if info.Type != proofs.PoStWinning {
		return nil, fmt.Errorf("post: winning sector challenges of %s, a %s proof", info.Name, info.Type)
	}
	if err := checkCanonical("randomness", randomness); err != nil {
		return nil, fmt.Errorf("post: winning sectors: %w", err)
	}
	if err := checkCanonical("prover id", proverID); err != nil {
		return nil, fmt.Errorf("post: winning sectors: %w", err)
	}
	out := make([]uint64, info.SectorCount)
	for n := range out {
		var err error
		if out[n], err = SectorChallenge(randomness, proverID, uint64(n), sectorSetLen); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// ChallengeIndex is utils.rs get_challenge_index: the index the n-th
// challenge of the sector at sectorIndex (its position among all the
// proof's sectors, k·sector_count + i) hashes. API 1.0.0 and 1.1.0 number
// the challenges of all sectors in one sequence; 1.2.0 (window V1_2)
// restarts at 0 for every sector, so a sector's challenges no longer
// depend on its position.
func ChallengeIndex(v proofs.APIVersion, sectorIndex, challengeCount, n int) uint64 {
	if v == proofs.APIVersion1_2_0 {
		return uint64(n)
	}
	return uint64(sectorIndex)*uint64(challengeCount) + uint64(n)
}

// LeafChallenge is vanilla.rs generate_leaf_challenge: the first 8 bytes,
// little endian, of SHA-256(randomness ‖ sector_id LE ‖ index LE), modulo
// the sector's node count.
func LeafChallenge(randomness [32]byte, sectorID, index, nodes uint64) uint64 {
	var buf [48]byte
	copy(buf[:32], randomness[:])
	binary.LittleEndian.PutUint64(buf[32:], sectorID)
	binary.LittleEndian.PutUint64(buf[40:], index)
	h := sha256.Sum256(buf[:])
	return binary.LittleEndian.Uint64(h[:8]) % nodes
}

// SectorChallenges is post_util.rs generate_fallback_sector_challenges for
// one sector: the ChallengeCount leaves a vanilla proof of sector sectorID
// at position sectorIndex opens (the index matters for API 1.0.0 window
// proofs only; a winning proof's one sector is at 0).
func SectorChallenges(info proofs.PoStProofInfo, randomness [32]byte, sectorID uint64, sectorIndex int) []uint64 {
	out := make([]uint64, info.ChallengeCount)
	for n := range out {
		out[n] = LeafChallenge(randomness, sectorID, ChallengeIndex(info.APIVersion, sectorIndex, info.ChallengeCount, n), info.Nodes)
	}
	return out
}
