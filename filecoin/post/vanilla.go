// Package post is Filecoin's proof of spacetime below the SNARK: the
// vanilla proofs a storage provider's node computes (filecoin-ffi's
// GenerateSingleVanillaProof, rust-fil-proofs' FallbackPoStSectorProof),
// their challenges, their native verification, the partitions a window or
// winning PoSt circuit proves and the circuit's public inputs, ported from
// rust-fil-proofs storage-proofs-post src/fallback/ (vanilla.rs, utils.rs,
// compound.rs) and filecoin-proofs src/api/{window_post,winning_post,
// post_util}.rs.
//
// The circuit itself is filecoin/circuit's SynthesizePoSt; the registered
// proofs and their counts are filecoin/proofs' PoStProofInfo.
package post

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/c2flow/c2flow/filecoin/merkle"
)

// ErrBadVanilla is wrapped by every error of a vanilla proof that does not
// decode or does not verify: the proof's fault, not the prover's.
var ErrBadVanilla = errors.New("bad PoSt vanilla proof")

// SectorProof is fallback::SectorProof: a sector's tree R openings
// (inclusion_proofs, one a challenge), comm_c and comm_r_last.
type SectorProof struct {
	Openings  []*merkle.Proof
	CommC     merkle.Node
	CommRLast merkle.Node
}

// VanillaProof is filecoin-proofs' FallbackPoStSectorProof, what
// filecoin-ffi's GenerateSingleVanillaProof returns for one sector: its id,
// comm_r and the vanilla proof (fallback::Proof), whose sectors hold one
// SectorProof.
type VanillaProof struct {
	SectorID uint64
	CommR    merkle.Node
	Sectors  []SectorProof
}

// Smallest encodings, which bound a length before anything is allocated:
// a SectorProof is an empty Vec and two domains; a MerkleProof at least its
// variant index.
const (
	minSectorProofBytes = 8 + 32 + 32
	minMerkleProofBytes = 4
)

// DecodeVanilla decodes a FallbackPoStSectorProof from its bincode bytes
// (sector_id u64, comm_r, then Proof { sectors: Vec<SectorProof {
// inclusion_proofs: Vec<MerkleProof>, comm_c, comm_r_last }> }),
// strictly: every length is bounded by the bytes left before it is
// allocated, and no byte may be left over. The openings' shapes are
// checked by Verify, not here.
func DecodeVanilla(b []byte) (*VanillaProof, error) {
	r := merkle.NewBincodeReader(b)
	v := &VanillaProof{}
	var err error
	bad := func(err error) (*VanillaProof, error) {
		return nil, fmt.Errorf("decode PoSt vanilla proof: %w: %w", ErrBadVanilla, err)
	}
	if v.SectorID, err = r.U64("sector_id"); err != nil {
		return bad(err)
	}
	if v.CommR, err = r.Node("comm_r"); err != nil {
		return bad(err)
	}
	n, err := r.Len("sectors", minSectorProofBytes)
	if err != nil {
		return bad(err)
	}
	v.Sectors = make([]SectorProof, n)
	for i := range v.Sectors {
		s := &v.Sectors[i]
		m, err := r.Len("inclusion_proofs", minMerkleProofBytes)
		if err != nil {
			return bad(fmt.Errorf("sector proof %d: %w", i, err))
		}
		s.Openings = make([]*merkle.Proof, m)
		for j := range s.Openings {
			if s.Openings[j], err = r.Proof("inclusion proof"); err != nil {
				return bad(fmt.Errorf("sector proof %d opening %d: %w", i, j, err))
			}
		}
		if s.CommC, err = r.Node("comm_c"); err != nil {
			return bad(fmt.Errorf("sector proof %d: %w", i, err))
		}
		if s.CommRLast, err = r.Node("comm_r_last"); err != nil {
			return bad(fmt.Errorf("sector proof %d: %w", i, err))
		}
	}
	if r.Rest() != 0 {
		return bad(fmt.Errorf("%d bytes after the proof of sector %d", r.Rest(), v.SectorID))
	}
	return v, nil
}

// Bincode is v's bincode encoding, the bytes GenerateSingleVanillaProof
// returns (the inverse of DecodeVanilla).
func (v *VanillaProof) Bincode() []byte {
	b := binary.LittleEndian.AppendUint64(nil, v.SectorID)
	b = append(b, v.CommR[:]...)
	b = binary.LittleEndian.AppendUint64(b, uint64(len(v.Sectors)))
	for _, s := range v.Sectors {
		b = binary.LittleEndian.AppendUint64(b, uint64(len(s.Openings)))
		for _, p := range s.Openings {
			b = p.AppendBincode(b)
		}
		b = append(b, s.CommC[:]...)
		b = append(b, s.CommRLast[:]...)
	}
	return b
}
