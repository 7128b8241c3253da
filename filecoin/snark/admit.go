package snark

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/c2flow/c2flow/filecoin/c1"
	"github.com/c2flow/c2flow/filecoin/circuit"
	"github.com/c2flow/c2flow/filecoin/commcid"
	"github.com/c2flow/c2flow/filecoin/post"
	"github.com/c2flow/c2flow/filecoin/proofs"
	"github.com/c2flow/c2flow/filecoin/seal"
	"github.com/c2flow/c2flow/filecoin/update"
	"github.com/c2flow/c2flow/job"
	"github.com/c2flow/c2flow/scheme"
)

var (
	_ scheme.Admitter = (*Scheme)(nil)
	_ scheme.Admitter = (*UpdateScheme)(nil)
	_ scheme.Bounder  = (*Scheme)(nil)
	_ scheme.Bounder  = (*UpdateScheme)(nil)
	_ scheme.Bounder  = (*PoStScheme)(nil)
)

// Admit implements scheme.Admitter for a PoRep request as Curio's
// PoRepSnarkCuzk sends it (curio lib/ffi/cuzk_funcs.go): registered_proof
// (abi.RegisteredSealProof), sector_size, the envelope's SectorNum and
// SectorSize, sector_number and the C1 must all agree; the envelope is
// bounded by its registered proof's C1 size before it is decoded; the
// C1 is bound to the miner's prover id and the sector number (bindC1, as
// Decode binds it) and its vanilla proofs must verify natively. The input
// stored, and digested into the job's identity, is the C1's canonical
// bytes (CanonicalC1), not the envelope: the same C1 in another envelope
// (reindented, its keys reordered, its base64 in lines) is the same job,
// and `c2flow submit` of its C1 file too.
func (sc *Scheme) Admit(ctx context.Context, r scheme.Request) (job.Ref, []byte, error) {
	if r.RegisteredProof > math.MaxInt64 {
		return job.Ref{}, nil, fmt.Errorf("registered_proof %d: %w", r.RegisteredProof, proofs.ErrUnknown)
	}
	info, err := proofs.ByID(int64(r.RegisteredProof))
	if err != nil {
		if d, derr := proofs.Describe(proofs.RegisteredSealProof(r.RegisteredProof)); derr == nil {
			return job.Ref{}, nil, fmt.Errorf("registered_proof %d is %s: c2flow does not prove it (%w)", r.RegisteredProof, d.Name, err)
		}
		return job.Ref{}, nil, fmt.Errorf("registered_proof %d: %w", r.RegisteredProof, err)
	}
	if r.SectorSize != 0 && r.SectorSize != info.SectorSize {
		return job.Ref{}, nil, fmt.Errorf("sector_size %d, but registered_proof %d (%s) has %d-byte sectors", r.SectorSize, r.RegisteredProof, info.Name, info.SectorSize)
	}
	if err := seal.CheckSectorID(r.SectorNumber, "sector_number"); err != nil {
		return job.Ref{}, nil, err
	}
	limit, err := c1.MaxInputSize(info.Proof)
	if err != nil {
		return job.Ref{}, nil, err
	}
	if int64(len(r.Envelope)) > limit {
		return job.Ref{}, nil, fmt.Errorf("vanilla_proof is %d bytes, over the %d-byte bound of a %s C1 envelope: not decoded", len(r.Envelope), limit, info.Name)
	}
	a, err := c1.DecodeBytes(r.Envelope, c1.WithProof(info.Proof))
	if err != nil {
		if errors.Is(err, c1.ErrProofMismatch) {
			return job.Ref{}, nil, fmt.Errorf("vanilla_proof's C1 is not of registered_proof %d (%s): %w", r.RegisteredProof, info.Name, err)
		}
		return job.Ref{}, nil, fmt.Errorf("vanilla_proof: %w", err)
	}
	if !a.Wrapped {
		return job.Ref{}, nil, errors.New(`vanilla_proof is a bare C1: Curio sends the C1OutputWrapper envelope {"SectorNum","Phase1Out","SectorSize"}`)
	}
	if n, _, err := WrappedSectorID(a); err != nil {
		return job.Ref{}, nil, fmt.Errorf("vanilla_proof: %w", err)
	} else if n != r.SectorNumber {
		return job.Ref{}, nil, fmt.Errorf("the envelope's SectorNum is %d, sector_number is %d", n, r.SectorNumber)
	}
	prover := proofs.ProverID(r.MinerID)
	s, err := bindC1(a.C1, prover, r.SectorNumber)
	if err != nil {
		if errors.Is(err, seal.ErrReplicaID) {
			return job.Ref{}, nil, fmt.Errorf("miner %d (prover id %x): not this miner's sector: %w", r.MinerID, prover[:10], err)
		}
		return job.Ref{}, nil, err
	}
	if err := s.Verify(ctx); err != nil {
		return job.Ref{}, nil, fmt.Errorf("the C1 does not verify natively: %w", err)
	}
	return canonicalRef(a.C1, prover, r.SectorNumber)
}

// Admit implements scheme.Admitter for an update request as Curio's
// ProveUpdateCuzk sends it: registered_proof (abi.RegisteredUpdateProof)
// and sector_size must agree; the vanilla proofs are one bincode
// PartitionProof a partition (or Curio's snap-vproof.json in the
// envelope); the commitments are 32 raw bytes or CID bytes (commcid.Parse).
// The input is built by BuildUpdateInput, as `c2flow submit --snap-vproof`
// builds it, and identified as any update input file: a request sent with
// CIDs and one with raw bytes are one job.
func (s *UpdateScheme) Admit(ctx context.Context, r scheme.Request) (job.Ref, []byte, error) {
	if r.RegisteredProof > math.MaxInt64 {
		return job.Ref{}, nil, fmt.Errorf("registered_proof %d: not a registered update proof", r.RegisteredProof)
	}
	info, err := proofs.LookupUpdate(proofs.RegisteredUpdateProof(r.RegisteredProof))
	if err != nil {
		return job.Ref{}, nil, fmt.Errorf("registered_proof: %w", err)
	}
	if r.SectorSize != 0 && r.SectorSize != info.SectorSize {
		return job.Ref{}, nil, fmt.Errorf("sector_size %d, but registered_proof %d (update %s) has %d-byte sectors", r.SectorSize, r.RegisteredProof, info.Name, info.SectorSize)
	}
	if err := seal.CheckSectorID(r.SectorNumber, "sector_number"); err != nil {
		return job.Ref{}, nil, err
	}
	prover := proofs.ProverID(r.MinerID)
	if r.ProverID != nil {
		prover = *r.ProverID
	}
	req := UpdateRequest{Proof: info, ProverID: prover, SectorID: r.SectorNumber, Vanilla: r.Vanilla, CurioJSON: r.Envelope,
		Source: "vanilla_proofs"}
	if _, err := req.checkVanilla(); err != nil {
		return job.Ref{}, nil, err
	}
	for _, c := range []struct {
		name string
		b    []byte
		k    commcid.Kind
		dst  *[32]byte
	}{{"comm_r_old", r.CommROld, commcid.Sealed, &req.CommROld}, {"comm_r_new", r.CommRNew, commcid.Sealed, &req.CommRNew}, {"comm_d_new", r.CommDNew, commcid.Unsealed, &req.CommDNew}} {
		if *c.dst, err = commcid.Parse(c.b, c.k); err != nil {
			return job.Ref{}, nil, fmt.Errorf("%s: %w", c.name, err)
		}
	}
	raw, err := BuildUpdateInput(req)
	if err != nil {
		return job.Ref{}, nil, err
	}
	return s.Identify(ctx, "", raw, scheme.Hints{})
}

// UpdateRequest is an update as a client hands it over: its public data
// and its partitions' vanilla proofs, either as bincode PartitionProofs
// (Vanilla) or as Curio's snap-vproof.json (CurioJSON).
type UpdateRequest struct {
	Proof                        proofs.UpdateProofInfo
	ProverID                     [32]byte
	SectorID                     uint64
	CommROld, CommRNew, CommDNew [32]byte
	Vanilla                      [][]byte
	CurioJSON                    []byte
	// Source names where the vanilla proofs came from, in errors (a
	// request field, a file).
	Source string
}

// BuildUpdateInput builds the update input (UpdateInput.Encode) of r,
// which UpdateScheme.Identify makes canonical (CanonicalUpdateInput)
// before `c2flow submit --snap-vproof` and the gateway store it. The
// vanilla proofs are bounded by the proof's input size, and counted
// against its partitions, before anything is copied or decoded.
func BuildUpdateInput(r UpdateRequest) ([]byte, error) {
	info := r.Proof
	parts, err := r.checkVanilla()
	if err != nil {
		return nil, err
	}
	in := &UpdateInput{Proof: info, ProverID: r.ProverID, SectorID: r.SectorID, CommROld: r.CommROld, CommRNew: r.CommRNew, CommDNew: r.CommDNew, Vanilla: r.Vanilla}
	if len(r.CurioJSON) > 0 {
		proofs, err := update.DecodeCurioVanilla(r.CurioJSON)
		if err != nil {
			return nil, fmt.Errorf("%s (Curio's snap-vproof.json): %w", r.Source, err)
		}
		if len(proofs) != parts {
			return nil, fmt.Errorf("%s (Curio's snap-vproof.json): %d vanilla proofs, a %s update has %d partitions", r.Source, len(proofs), info.Name, parts)
		}
		for _, p := range proofs {
			in.Vanilla = append(in.Vanilla, p.Bincode())
		}
	}
	return in.Encode()
}

// checkVanilla bounds r's vanilla proofs by the proof's input size, and
// counts them against its partitions, before anything is copied or
// decoded; it returns the partition count.
func (r UpdateRequest) checkVanilla() (int, error) {
	info := r.Proof
	limit, err := MaxUpdateInputBytes(info)
	if err != nil {
		return 0, err
	}
	shape, err := circuit.UpdateShapeOf(info.SectorSize)
	if err != nil {
		return 0, err
	}
	parts := shape.Partitions()
	switch {
	case len(r.Vanilla) > 0 && len(r.CurioJSON) > 0:
		return 0, errors.New("both vanilla_proofs and vanilla_proof are set: a SnapDeals request sends its partitions' proofs in vanilla_proofs")
	case len(r.Vanilla) == 0 && len(r.CurioJSON) == 0:
		return 0, fmt.Errorf("no %s: an update sends one bincode PartitionProof a partition", r.Source)
	case len(r.Vanilla) > 0 && len(r.Vanilla) != parts:
		return 0, fmt.Errorf("%s: %d vanilla proofs, a %s update has %d partitions: not decoded", r.Source, len(r.Vanilla), info.Name, parts)
	}
	size := int64(len(r.CurioJSON))
	for _, v := range r.Vanilla {
		size += int64(len(v))
	}
	if size > limit {
		return 0, fmt.Errorf("%s: the vanilla proofs are %d bytes, over the %d-byte bound of a %s update: not decoded", r.Source, size, limit, info.Name)
	}
	return parts, nil
}

// RequestBound implements scheme.Bounder for PoRep: the C1 envelope alone,
// at most c1.MaxInputSize of the registered proof.
func (*Scheme) RequestBound(_ string, registeredProof uint64) (scheme.Bound, error) {
	if registeredProof > math.MaxInt64 {
		return scheme.Bound{}, fmt.Errorf("registered_proof %d: %w", registeredProof, proofs.ErrUnknown)
	}
	info, err := proofs.ByID(int64(registeredProof))
	if err != nil {
		return scheme.Bound{}, fmt.Errorf("registered_proof %d: %w", registeredProof, err)
	}
	n, err := c1.MaxInputSize(info.Proof)
	if err != nil {
		return scheme.Bound{}, err
	}
	return scheme.Bound{EnvelopeBytes: n, TotalBytes: n}, nil
}

// RequestBound implements scheme.Bounder for SnapDeals: one vanilla proof
// a partition, or Curio's snap-vproof.json, within MaxUpdateInputBytes.
func (*UpdateScheme) RequestBound(_ string, registeredProof uint64) (scheme.Bound, error) {
	if registeredProof > math.MaxInt64 {
		return scheme.Bound{}, fmt.Errorf("registered_proof %d: not a registered update proof", registeredProof)
	}
	info, err := proofs.LookupUpdate(proofs.RegisteredUpdateProof(registeredProof))
	if err != nil {
		return scheme.Bound{}, fmt.Errorf("registered_proof: %w", err)
	}
	limit, err := MaxUpdateInputBytes(info)
	if err != nil {
		return scheme.Bound{}, err
	}
	shape, err := circuit.UpdateShapeOf(info.SectorSize)
	if err != nil {
		return scheme.Bound{}, err
	}
	return scheme.Bound{Entries: shape.Partitions(), EntryBytes: limit, EnvelopeBytes: limit, TotalBytes: limit}, nil
}

// RequestBound implements scheme.Bounder for PoSt: one vanilla proof a
// sector, at most SectorCount of post.VanillaBytes each (the exact
// length: a 32GiB window partition is 58.6 MB at most), no envelope.
func (*PoStScheme) RequestBound(_ string, registeredProof uint64) (scheme.Bound, error) {
	if registeredProof > math.MaxInt64 {
		return scheme.Bound{}, fmt.Errorf("registered_proof %d: %w", registeredProof, proofs.ErrUnknownPoSt)
	}
	info, err := proofs.LookupPoSt(proofs.RegisteredPoStProof(registeredProof))
	if err != nil {
		return scheme.Bound{}, fmt.Errorf("registered_proof: %w", err)
	}
	per, err := post.VanillaBytes(info)
	if err != nil {
		return scheme.Bound{}, err
	}
	return scheme.Bound{Entries: info.SectorCount, EntryBytes: per, TotalBytes: int64(info.SectorCount) * per}, nil
}
