package snark

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/c2flow/c2flow/filecoin/c1"
	"github.com/c2flow/c2flow/filecoin/proofs"
	"github.com/c2flow/c2flow/filecoin/seal"
	"github.com/c2flow/c2flow/job"
	"github.com/c2flow/c2flow/scheme"
)

// Scheme is Filecoin's StackedDrg PoRep: every seal proof filecoin/proofs
// supports (V1, V1_1 and synthetic, 2KiB to 64GiB). It is safe for
// concurrent use; a process holds one, so that each circuit's keys are
// loaded and each parameter file checked once.
type Scheme struct {
	*keyring
}

var _ scheme.Scheme = (*Scheme)(nil)

// New returns the scheme over the parameters p says where to find; log
// may be nil.
func New(p Params, log *slog.Logger) *Scheme {
	return &Scheme{newKeyring(p, log)}
}

// Update is Filecoin's update scheme (SnapDeals) over the same parameters
// and loads.
func (s *Scheme) Update() *UpdateScheme { return &UpdateScheme{s.keyring} }

// Name implements scheme.Scheme.
func (s *Scheme) Name() string { return "filecoin" }

// Proofs implements scheme.Scheme: the supported registered seal proofs.
func (s *Scheme) Proofs() []string { return proofs.Names() }

// Owns implements scheme.Scheme: the names of the supported registered
// seal proofs (proofs.Names).
func (s *Scheme) Owns(proof string) bool {
	_, err := proofs.Parse(proof)
	return err == nil
}

// Recognize implements scheme.Scheme: a SealCommitPhase1Output whose
// registered_proof is a Filecoin seal proof, or a Commit2In wrapper
// (SectorNum, Phase1Out), as lotus, Curio and lotus-bench write them.
func (s *Scheme) Recognize(h scheme.Head) bool {
	if p, ok := h.Strings["registered_proof"]; ok {
		return s.Owns(p)
	}
	return h.Has("Phase1Out")
}

// MaxC1Bytes implements scheme.Scheme: c1.MaxInputSize, the bound the
// decoder applies to either form (twice the longest compact C1 of the
// proof, 4/3 of that for a Commit2In wrapper).
func (s *Scheme) MaxC1Bytes(proof string) (int64, error) {
	p, err := proofs.Parse(proof)
	if err != nil {
		return 0, err
	}
	return c1.MaxInputSize(p)
}

// Decode implements scheme.Scheme: a strict decode of either form
// (c1.Decode), the declared proof required where id names one, and the C1
// bound to id's sector: a Commit2In SectorNum must be id.SectorID, and the
// C1's replica_id must be the one id's prover and sector ids derive with
// the C1's ticket, comm_d and proof (seal.SectorPublic.ReplicaID). Errors
// name the JSON path or field at fault.
func (s *Scheme) Decode(raw []byte, id job.SectorRef) (scheme.Sector, error) {
	return s.DecodeSector(raw, id)
}

// DecodeSector is Decode returning the concrete sector.
func (s *Scheme) DecodeSector(raw []byte, id job.SectorRef) (*Sector, error) {
	var opts []c1.Option
	if id.Profile != "" {
		p, err := proofs.Parse(id.Profile)
		if err != nil {
			return nil, fmt.Errorf("filecoin C1: declared proof: %w", err)
		}
		opts = append(opts, c1.WithProof(p))
	}
	if id.ProverID == "" {
		return nil, errors.New("filecoin C1: no prover id: a C1 is bound to its sector by the replica id its prover and sector ids derive")
	}
	proverID, err := seal.ParseHex32(id.ProverID)
	if err != nil {
		return nil, fmt.Errorf("filecoin C1: prover id: %w", err)
	}
	a, err := c1.DecodeBytes(raw, opts...)
	if err != nil {
		if id.Profile != "" && errors.Is(err, c1.ErrProofMismatch) {
			return nil, fmt.Errorf("filecoin C1: not of the declared proof %s: %w", id.Profile, err)
		}
		return nil, fmt.Errorf("filecoin C1: %w", err)
	}
	if n, ok, err := WrappedSectorID(a); err != nil {
		return nil, fmt.Errorf("filecoin C1: %w", err)
	} else if ok && n != id.SectorID {
		return nil, fmt.Errorf("filecoin C1: Commit2In SectorNum is %d, the sector's id is %d", n, id.SectorID)
	}
	sec, err := bindC1(a.C1, proverID, id.SectorID)
	if err != nil {
		return nil, fmt.Errorf("filecoin C1: %w", err)
	}
	return sec, nil
}

// bindC1 binds a decoded C1 to its prover and sector: its replica_id must
// be the one they derive with the C1's ticket, comm_d and proof
// (seal.SectorPublic.ReplicaID); the error wraps seal.ErrReplicaID.
func bindC1(c *c1.SealCommitPhase1Output, proverID [32]byte, sectorID uint64) (*Sector, error) {
	pub := PublicOf(c, proverID, sectorID)
	want, err := pub.ReplicaID()
	if err != nil {
		return nil, err
	}
	if want != c.ReplicaID {
		return nil, fmt.Errorf("replica_id %x is not sector %d's of prover %x (with the C1's ticket, comm_d and %s it is %x): %w",
			c.ReplicaID, sectorID, proverID, c.RegisteredProof, want, seal.ErrReplicaID)
	}
	return NewSector(c, &pub)
}

// PartitionBytes implements scheme.Scheme: Counts.Bytes of the proof's
// known counts (CountsOf), else of the loaded circuit's.
func (s *Scheme) PartitionBytes(ctx context.Context, proof string) (int64, error) {
	info, err := proofs.ByName(proof)
	if err != nil {
		return 0, err
	}
	return s.partitionBytes(ctx, sealSpec(info))
}

// Circuit implements scheme.Scheme (see Load).
func (s *Scheme) Circuit(ctx context.Context, proof string) (scheme.Circuit, error) {
	c, err := s.Load(ctx, proof)
	if err != nil {
		return nil, err
	}
	return c, nil
}

var (
	_ scheme.Synthesizer = (*Scheme)(nil)
	_ scheme.Synthesizer = (*UpdateScheme)(nil)
	_ scheme.Synthesizer = (*PoStScheme)(nil)
)

// Synthesis implements scheme.Synthesizer: the seal circuit without its
// keys, by its known counts (every registered size's); a size without
// them loads its circuit.
func (s *Scheme) Synthesis(ctx context.Context, proof string) (scheme.Synthesis, error) {
	c, err := sealWiring.synthesis(ctx, s.keyring, proof)
	if err != nil {
		return nil, err
	}
	return c, nil
}

// sealWiring is the seal proofs' path from a proof name to its circuit
// and verifier.
var sealWiring = wiring[proofs.SealProofInfo, *Circuit, *Verifier]{
	spec: func(proof string) (proofs.SealProofInfo, *spec, error) {
		info, err := proofs.ByName(proof)
		if err != nil {
			return info, nil, fmt.Errorf("filecoin circuit: %w", err)
		}
		return info, sealSpec(info), nil
	},
	circuit:  func(info proofs.SealProofInfo, k *keys) *Circuit { return &Circuit{Verifier{info: info, k: k}} },
	verifier: func(info proofs.SealProofInfo, k *keys) *Verifier { return &Verifier{info: info, k: k} },
}

// Load returns proof's circuit with its keys, loaded on first use and
// kept (keyring.circuit): proofs of one circuit shape (V1, V1_1 and
// synthetic of a sector size) share one load. Missing parameters wrap
// scheme.ErrNoKeys.
func (s *Scheme) Load(ctx context.Context, proof string) (*Circuit, error) {
	return sealWiring.load(ctx, s.keyring, proof)
}

// Verifier implements scheme.Scheme: the loaded circuit's keys where
// this process has loaded them, else the proof's verifying key alone
// (keyring.verifier).
func (s *Scheme) Verifier(ctx context.Context, proof string) (scheme.Verifier, error) {
	v, err := s.LoadVerifier(ctx, proof)
	if err != nil {
		return nil, err
	}
	return v, nil
}

// LoadVerifier is Verifier's concrete result (see Verifier).
func (s *Scheme) LoadVerifier(ctx context.Context, proof string) (*Verifier, error) {
	return sealWiring.verify(ctx, s.keyring, proof)
}

// Schemes are Filecoin's seal, update and PoSt schemes over one keyring:
// the Filecoin part of a process's scheme.Set.
func Schemes(p Params, log *slog.Logger) scheme.Set {
	s := New(p, log)
	return scheme.Set{s, s.Update(), s.PoSt()}
}
