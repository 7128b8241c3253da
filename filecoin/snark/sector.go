package snark

import (
	"context"
	"encoding/hex"
	"fmt"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/c2flow/c2flow/filecoin/c1"
	"github.com/c2flow/c2flow/filecoin/circuit"
	"github.com/c2flow/c2flow/filecoin/groth"
	"github.com/c2flow/c2flow/filecoin/proofs"
	"github.com/c2flow/c2flow/filecoin/r1cs"
	"github.com/c2flow/c2flow/filecoin/seal"
	"github.com/c2flow/c2flow/prover"
	"github.com/c2flow/c2flow/scheme"
)

// Sector is a decoded Filecoin C1 with the public data it is checked and
// proved against.
type Sector struct {
	c1   *c1.SealCommitPhase1Output
	info proofs.SealProofInfo
	pub  *seal.SectorPublic // nil: the C1's own data, replica id not derived
	// replicaID, commD, commR and seed are the public inputs' sources: the
	// public data's where given (the replica id derived from them), else
	// the C1's.
	replicaID, commD, commR, seed [32]byte
}

var _ scheme.Sector = (*Sector)(nil)

// NewSector returns the sector of a decoded C1 and its public data. With
// pub nil the C1 is checked and proved against the data it carries itself
// (its replica id is not derived from a prover and sector id); Scheme.Decode
// always binds a C1 to its identity.
func NewSector(c *c1.SealCommitPhase1Output, pub *seal.SectorPublic) (*Sector, error) {
	info, err := proofs.Lookup(c.RegisteredProof)
	if err != nil {
		return nil, fmt.Errorf("filecoin sector: %w", err)
	}
	s := &Sector{c1: c, info: info, replicaID: c.ReplicaID, commD: c.CommD, commR: c.CommR, seed: c.Seed}
	if pub != nil {
		p := *pub
		s.pub = &p
		if s.replicaID, err = p.ReplicaID(); err != nil {
			return nil, fmt.Errorf("filecoin sector: %w", err)
		}
		s.commD, s.commR, s.seed = p.CommD, p.CommR, p.Seed
	}
	return s, nil
}

// PublicOf returns the public data of the sector (prover id, sector id) whose
// C1 is c, the rest as the C1 carries it: checking c against them checks
// that its replica id is the one the sector's identity derives.
func PublicOf(c *c1.SealCommitPhase1Output, proverID [32]byte, sectorID uint64) seal.SectorPublic {
	return seal.SectorPublic{Proof: c.RegisteredProof, ProverID: proverID, SectorID: sectorID,
		Ticket: c.Ticket, Seed: c.Seed, CommD: c.CommD, CommR: c.CommR}
}

// WrappedSectorID returns the sector id a Commit2In wrapper declares
// (SectorNum); ok is false for a raw C1.
func WrappedSectorID(a *c1.Artifact) (id uint64, ok bool, err error) {
	if !a.Wrapped {
		return 0, false, nil
	}
	if a.SectorNum < 0 {
		return 0, true, fmt.Errorf("Commit2In SectorNum %d is negative", a.SectorNum)
	}
	return uint64(a.SectorNum), true, nil
}

// C1 is the decoded C1.
func (s *Sector) C1() *c1.SealCommitPhase1Output { return s.c1 }

// Info is the sector's registered seal proof.
func (s *Sector) Info() proofs.SealProofInfo { return s.info }

// Public returns the sector's public data, false when the sector is
// checked against the C1's own.
func (s *Sector) Public() (seal.SectorPublic, bool) {
	if s.pub == nil {
		return seal.SectorPublic{}, false
	}
	return *s.pub, true
}

// proverHex is the hex of the sector's prover id ("" without public data).
func (s *Sector) proverHex() string {
	if s.pub == nil {
		return ""
	}
	return hex.EncodeToString(s.pub.ProverID[:])
}

// SectorID is the sector's number (0 without public data).
func (s *Sector) SectorID() uint64 {
	if s.pub == nil {
		return 0
	}
	return s.pub.SectorID
}

// String names the sector in errors.
func (s *Sector) String() string { return fmt.Sprintf("sector %d", s.SectorID()) }

// builder is partition k's witness builder: the StackedCircuit over the
// C1's vanilla proofs of the partition.
func (s *Sector) builder(k int) (func(*r1cs.Witness) error, error) {
	cs, w, err := circuit.FromC1(s.c1, k)
	if err != nil {
		return nil, err
	}
	return func(wit *r1cs.Witness) error { return circuit.Synthesize(wit, cs, w) }, nil
}

func (s *Sector) partitionID(k int) string { return prover.PartitionID(s.proverHex(), s.SectorID(), k) }

// Proof implements scheme.Sector.
func (s *Sector) Proof() string { return s.info.Name }

// Partitions implements scheme.Sector.
func (s *Sector) Partitions() int { return s.info.Partitions }

// C2Bytes implements scheme.Sector: a 192-byte proof per partition.
func (s *Sector) C2Bytes() int64 { return int64(s.info.Partitions) * groth.ProofSize }

// Verify implements scheme.Sector: seal.Verify against the public data
// (seal.VerifyCarried without).
func (s *Sector) Verify(ctx context.Context) error { return s.VerifyWith(ctx) }

// VerifyWith is Verify with seal's options (workers).
func (s *Sector) VerifyWith(ctx context.Context, opts ...seal.Option) error {
	if s.pub == nil {
		return seal.VerifyCarried(ctx, s.c1, opts...)
	}
	return seal.Verify(ctx, s.c1, *s.pub, opts...)
}

// PublicInputs returns partition k's public inputs (without ONE), from the
// public data alone where the sector has them.
func (s *Sector) PublicInputs(k int) ([]fr.Element, error) {
	if k < 0 || k >= s.info.Partitions {
		return nil, fmt.Errorf("public inputs of partition %d: %s has %d partitions", k, s.info.Name, s.info.Partitions)
	}
	in, err := circuit.PublicInputsOf(s.info, s.replicaID, s.commD, s.commR, s.seed, k)
	if err != nil {
		return nil, fmt.Errorf("public inputs of partition %d: %w", k, err)
	}
	return in, nil
}
