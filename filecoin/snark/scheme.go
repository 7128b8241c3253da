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
	kind[proofs.SealProofInfo, *Circuit, *Verifier]
}

var _ scheme.Scheme = (*Scheme)(nil)

// New returns the scheme over the parameters p says where to find; log
// may be nil.
func New(p Params, log *slog.Logger) *Scheme {
	return &Scheme{kind[proofs.SealProofInfo, *Circuit, *Verifier]{newKeyring(p, log), sealKind}}
}

// Update is Filecoin's update scheme (SnapDeals) over the same parameters
// and loads.
func (s *Scheme) Update() *UpdateScheme {
	return &UpdateScheme{kind[proofs.UpdateProofInfo, *circuitOf[*UpdateSector], *verifierOf[*UpdateSector]]{s.keyring, updateKind}}
}

// Decode implements scheme.Scheme: a strict decode of either form
// (c1.Decode), the declared proof required where id names one, and the C1
// bound to id's sector: a Commit2In SectorNum must be id.SectorID, and the
// C1's replica_id must be the one id's prover and sector ids derive with
// the C1's ticket, comm_d and proof (seal.SectorPublic.ReplicaID). Errors
// name the JSON path or field at fault.
func (s *Scheme) Decode(raw []byte, id job.Ref) (scheme.Sector, error) {
	return s.DecodeSector(raw, id)
}

// DecodeSector is Decode returning the concrete sector.
func (s *Scheme) DecodeSector(raw []byte, id job.Ref) (*Sector, error) {
	var opts []c1.Option
	if id.Proof != "" {
		p, err := proofs.Parse(id.Proof)
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
		if id.Proof != "" && errors.Is(err, c1.ErrProofMismatch) {
			return nil, fmt.Errorf("filecoin C1: not of the declared proof %s: %w", id.Proof, err)
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

// sealKind is the seal proofs' kind.
var sealKind = &kindSpec[proofs.SealProofInfo, *Circuit, *Verifier]{
	name: "filecoin", what: "filecoin", requests: []request{{scheme.KindPoRep, scheme.Policy{Priorities: porepClass}}},
	proofs: proofs.Names,
	// A SealCommitPhase1Output whose registered_proof is a Filecoin seal
	// proof, or a Commit2In wrapper (SectorNum, Phase1Out), as lotus,
	// Curio and lotus-bench write them.
	recognize: func(h scheme.Head) bool {
		if p, ok := h.Strings["registered_proof"]; ok {
			_, err := proofs.Parse(p)
			return err == nil
		}
		return h.Has("Phase1Out")
	},
	info: proofs.ByName,
	spec: func(info proofs.SealProofInfo) (*spec, error) { return sealSpec(info), nil },
	// c1.MaxInputSize, the bound the decoder applies to either form (twice
	// the longest compact C1 of the proof, 4/3 of that for a Commit2In
	// wrapper).
	maxInput: func(info proofs.SealProofInfo) (int64, error) { return c1.MaxInputSize(info.Proof) },
	circuit:  func(info proofs.SealProofInfo, k *keys) *Circuit { return &Circuit{Verifier{info: info, k: k}} },
	verifier: func(info proofs.SealProofInfo, k *keys) *Verifier { return &Verifier{info: info, k: k} },
}

var (
	_ scheme.Synthesizer = (*Scheme)(nil)
	_ scheme.Synthesizer = (*UpdateScheme)(nil)
	_ scheme.Synthesizer = (*PoStScheme)(nil)
)

// Load returns proof's circuit with its keys, loaded on first use and
// kept (keyring.circuit): proofs of one circuit shape (V1, V1_1 and
// synthetic of a sector size) share one load. Missing parameters wrap
// scheme.ErrNoKeys.
func (s *Scheme) Load(ctx context.Context, proof string) (*Circuit, error) {
	return s.load(ctx, proof)
}

// LoadVerifier is Verifier's concrete result: the loaded circuit's keys
// where this process has loaded them, else the proof's verifying key
// alone (keyring.verifier).
func (s *Scheme) LoadVerifier(ctx context.Context, proof string) (*Verifier, error) {
	return s.verify(ctx, proof)
}

// Schemes are Filecoin's seal, update and PoSt schemes over one keyring:
// the Filecoin part of a process's scheme.Set.
func Schemes(p Params, log *slog.Logger) scheme.Set {
	s := New(p, log)
	return scheme.Set{s, s.Update(), s.PoSt()}
}
