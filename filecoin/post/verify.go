package post

import (
	"fmt"

	"github.com/c2flow/c2flow/filecoin/hash"
	"github.com/c2flow/c2flow/filecoin/merkle"
	"github.com/c2flow/c2flow/filecoin/proofs"
)

// PublicSector is fallback::PublicSector: a proved sector's number and
// comm_r.
type PublicSector struct {
	ID    uint64
	CommR merkle.Node
}

// SectorError is a vanilla proof's first failure, named by its sector and
// the challenge (the opening's number in the sector's vanilla proof; -1
// when the sector's proof fails as a whole). It wraps ErrBadVanilla.
type SectorError struct {
	Sector    uint64
	Challenge int
	// Leaf is the challenged leaf when Challenge >= 0.
	Leaf uint64
	Err  error
}

func (e *SectorError) Error() string {
	if e.Challenge < 0 {
		return fmt.Sprintf("PoSt vanilla proof of sector %d: %v", e.Sector, e.Err)
	}
	return fmt.Sprintf("PoSt vanilla proof of sector %d: challenge %d (leaf %d): %v", e.Sector, e.Challenge, e.Leaf, e.Err)
}

// Unwrap gives ErrBadVanilla and the cause.
func (e *SectorError) Unwrap() []error { return []error{ErrBadVanilla, e.Err} }

// treeShape is the merkle shape of info's tree R.
func treeShape(info proofs.PoStProofInfo) merkle.Shape {
	return merkle.Shape{Base: info.TreeR.Base, Sub: info.TreeR.Sub, Top: info.TreeR.Top}
}

// checkCommR is the first check of FallbackPoSt::verify:
// comm_r = Poseidon(comm_c, comm_r_last).
func checkCommR(pub PublicSector, sp *SectorProof) error {
	got, err := hash.Hash2(hash.Domain(sp.CommC), hash.Domain(sp.CommRLast))
	if err != nil {
		return &SectorError{Sector: pub.ID, Challenge: -1, Err: fmt.Errorf("comm_c or comm_r_last: %w", err)}
	}
	if merkle.Node(got) != pub.CommR {
		return &SectorError{Sector: pub.ID, Challenge: -1,
			Err: fmt.Errorf("comm_r %x is not H(comm_c %x, comm_r_last %x) = %x", pub.CommR, sp.CommC, sp.CommRLast, merkle.Node(got))}
	}
	return nil
}

// checkOpening checks one opening as FallbackPoSt::verify does: its root
// is comm_r_last, its path has the length of the sector's tree, and it
// opens the challenged leaf. name is the challenge's number for errors.
func checkOpening(info proofs.PoStProofInfo, pub PublicSector, sp *SectorProof, p *merkle.Proof, name int, leaf uint64) error {
	fail := func(err error) error {
		return &SectorError{Sector: pub.ID, Challenge: name, Leaf: leaf, Err: err}
	}
	if p == nil {
		return fail(fmt.Errorf("no opening"))
	}
	if p.Root != sp.CommRLast {
		return fail(fmt.Errorf("opening's root %x is not comm_r_last %x", p.Root, sp.CommRLast))
	}
	if err := p.ValidateInTree(merkle.PoseidonHasher{}, treeShape(info), info.Nodes, leaf); err != nil {
		return fail(err)
	}
	return nil
}

// VerifySector verifies one sector's vanilla proof, as
// GenerateSingleVanillaProof made it for the sector at sectorIndex of the
// proof's sector list (it matters for window V1 only; a winning proof's
// sector is at 0): one sector proof; comm_r = Poseidon(comm_c,
// comm_r_last); ChallengeCount openings, each for its own challenge
// (SectorChallenges). The first failure is a *SectorError.
func VerifySector(info proofs.PoStProofInfo, randomness [32]byte, sectorIndex int, v *VanillaProof) error {
	if v == nil {
		return fmt.Errorf("post: verify: no vanilla proof: %w", ErrBadVanilla)
	}
	if sectorIndex < 0 {
		return fmt.Errorf("post: verify sector %d: position %d: %w", v.SectorID, sectorIndex, ErrBadVanilla)
	}
	if err := checkCanonical("randomness", randomness); err != nil {
		return fmt.Errorf("post: verify sector %d: %w", v.SectorID, err)
	}
	if len(v.Sectors) != 1 {
		return &SectorError{Sector: v.SectorID, Challenge: -1, Err: fmt.Errorf("%d sector proofs, want 1", len(v.Sectors))}
	}
	pub := PublicSector{ID: v.SectorID, CommR: v.CommR}
	sp := &v.Sectors[0]
	if err := checkCommR(pub, sp); err != nil {
		return err
	}
	challenges := SectorChallenges(info, randomness, v.SectorID, sectorIndex)
	if err := checkCount(pub, len(sp.Openings), challenges); err != nil {
		return err
	}
	for n, leaf := range challenges {
		if err := checkOpening(info, pub, sp, sp.Openings[n], n, leaf); err != nil {
			return err
		}
	}
	return nil
}

// checkCount names the first missing opening, or the surplus.
func checkCount(pub PublicSector, have int, challenges []uint64) error {
	switch want := len(challenges); {
	case have < want:
		return &SectorError{Sector: pub.ID, Challenge: have, Leaf: challenges[have], Err: fmt.Errorf("opening missing: %d openings for %d challenges", have, want)}
	case have > want:
		return &SectorError{Sector: pub.ID, Challenge: -1, Err: fmt.Errorf("%d openings for %d challenges", have, want)}
	}
	return nil
}

// TreeR opens a replica's tree R (a *merkle.Tree does).
type TreeR interface {
	Root() merkle.Node
	Prove(node uint64) (*merkle.Proof, error)
}

// GenerateVanilla is post_util.rs generate_single_vanilla_proof: the
// vanilla proof of sector sectorID at sectorIndex (see SectorChallenges)
// from its tree R and comm_c, comm_r = H(comm_c, comm_r_last); it is
// verified before it is returned.
func GenerateVanilla(info proofs.PoStProofInfo, randomness [32]byte, sectorID uint64, sectorIndex int, commC merkle.Node, tree TreeR) (*VanillaProof, error) {
	sp := SectorProof{CommC: commC, CommRLast: tree.Root()}
	commR, err := hash.Hash2(hash.Domain(commC), hash.Domain(sp.CommRLast))
	if err != nil {
		return nil, fmt.Errorf("post: vanilla proof of sector %d: comm_r: %w", sectorID, err)
	}
	for n, c := range SectorChallenges(info, randomness, sectorID, sectorIndex) {
		p, err := tree.Prove(c)
		if err != nil {
			return nil, fmt.Errorf("post: vanilla proof of sector %d: challenge %d (leaf %d): %w", sectorID, n, c, err)
		}
		sp.Openings = append(sp.Openings, p)
	}
	v := &VanillaProof{SectorID: sectorID, CommR: merkle.Node(commR), Sectors: []SectorProof{sp}}
	if err := VerifySector(info, randomness, sectorIndex, v); err != nil {
		return nil, fmt.Errorf("post: generated vanilla proof: %w", err)
	}
	return v, nil
}
