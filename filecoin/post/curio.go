package post

import (
	"encoding/base64"
	"encoding/json"
	"fmt"

	"github.com/c2flow/c2flow/filecoin/commcid"
	"github.com/c2flow/c2flow/filecoin/merkle"
	"github.com/c2flow/c2flow/filecoin/proofs"
)

// VerifyInfo is lotus's WindowPoStVerifyInfo, as Curio's testgolden
// postpub.json holds it: the proof's type, its randomness (masked as
// Curio masks it), the prover and the challenged sectors with their
// comm_r.
type VerifyInfo struct {
	Info       proofs.PoStProofInfo
	Randomness [32]byte
	ProverID   [32]byte
	Sectors    []PublicSector
}

// ParseVerifyInfo parses a WindowPoStVerifyInfo in JSON (Randomness in
// base64, Proofs[].PoStProof, Prover, ChallengedSectors[] with their
// SealedCID) of exactly one proof.
func ParseVerifyInfo(b []byte) (*VerifyInfo, error) {
	var pub struct {
		Randomness string
		Proofs     []struct{ PoStProof int64 }
		Prover     uint64
		Sectors    []struct {
			SectorNumber uint64
			SealedCID    map[string]string
		} `json:"ChallengedSectors"`
	}
	if err := json.Unmarshal(b, &pub); err != nil {
		return nil, fmt.Errorf("post verify info: %w", err)
	}
	if len(pub.Proofs) != 1 || len(pub.Sectors) == 0 {
		return nil, fmt.Errorf("post verify info: %d proofs and %d sectors, want one proof and a sector", len(pub.Proofs), len(pub.Sectors))
	}
	v := &VerifyInfo{ProverID: proofs.ProverID(pub.Prover)}
	var err error
	if v.Info, err = proofs.LookupPoSt(proofs.RegisteredPoStProof(pub.Proofs[0].PoStProof)); err != nil {
		return nil, fmt.Errorf("post verify info: %w", err)
	}
	rnd, err := base64.StdEncoding.DecodeString(pub.Randomness)
	if err != nil || len(rnd) != 32 {
		return nil, fmt.Errorf("post verify info: randomness %q: not 32 bytes of base64 (%v)", pub.Randomness, err)
	}
	v.Randomness = MaskRandomness([32]byte(rnd))
	for _, s := range pub.Sectors {
		cr, err := commcid.ParseString(s.SealedCID["/"], commcid.Sealed)
		if err != nil {
			return nil, fmt.Errorf("post verify info: sector %d: %w", s.SectorNumber, err)
		}
		v.Sectors = append(v.Sectors, PublicSector{ID: s.SectorNumber, CommR: merkle.Node(cr)})
	}
	return v, nil
}
