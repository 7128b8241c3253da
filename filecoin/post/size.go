package post

import (
	"fmt"

	"github.com/c2flow/c2flow/filecoin/proofs"
)

// VanillaBytes is the exact length of one sector's vanilla proof
// (FallbackPoStSectorProof's bincode, what GenerateSingleVanillaProof
// returns) of info: sector_id, comm_r, one SectorProof of ChallengeCount
// openings of tree R (its shape fixes every path's length), comm_c and
// comm_r_last. A request's entries are bounded by it before they are
// decoded: a 32GiB sector's is 24,960 bytes, curio's post.vproof.
func VanillaBytes(info proofs.PoStProofInfo) (int64, error) {
	t := info.TreeR
	if t.Base < 2 {
		return 0, fmt.Errorf("%s: tree R of base arity %d", info.Name, t.Base)
	}
	// path is an InclusionPath's bincode: a Vec of levels, each a Vec of
	// arity-1 siblings and an index.
	path := func(arity, levels int64) int64 {
		if levels == 0 {
			return 8
		}
		return 8 + levels*(8+(arity-1)*32+8)
	}
	leaves := info.Nodes / uint64(t.BaseTreeCount())
	levels := int64(0)
	for n := uint64(1); n < leaves; n *= uint64(t.Base) {
		levels++
	}
	opening := int64(4) + path(int64(t.Base), levels) + 32 + 32 // variant, base path, root, leaf
	if t.Sub > 0 || t.Top > 0 {
		opening += path(int64(t.Sub), 1)
		if t.Top > 0 {
			opening += path(int64(t.Top), 1)
		}
	}
	sector := 8 + int64(info.ChallengeCount)*opening + 32 + 32 // openings, comm_c, comm_r_last
	return 8 + 32 + 8 + sector, nil                            // sector_id, comm_r, one SectorProof
}
