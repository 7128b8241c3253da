package intake

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/c2flow/c2flow/filecoin/c1"
	"github.com/c2flow/c2flow/filecoin/c2"
	"github.com/c2flow/c2flow/filecoin/commcid"
	"github.com/c2flow/c2flow/filecoin/proofs"
	"github.com/c2flow/c2flow/filecoin/seal"
	"github.com/c2flow/c2flow/filecoin/update"
	"github.com/c2flow/c2flow/job"
	"github.com/c2flow/c2flow/scheme"
)

// ErrBadRequest is wrapped by every error of Curio that is the request's
// fault (as opposed to a canceled context).
var ErrBadRequest = errors.New("bad request")

// CurioRequest is what a cuzk POREP_SEAL_COMMIT request says of its
// sector (curio lib/ffi/cuzk_funcs.go PoRepSnarkCuzk).
type CurioRequest struct {
	// Envelope is vanilla_proof: the C1OutputWrapper JSON,
	// {"SectorNum":N,"Phase1Out":"<base64 of the C1 JSON>","SectorSize":S}.
	Envelope        []byte
	MinerID         uint64 // the miner's actor id: its prover id derives from it
	SectorNumber    uint64
	RegisteredProof uint64 // abi.RegisteredSealProof
	SectorSize      uint64 // 0: not given
}

// Curio identifies the sector of a cuzk PoRep request. registered_proof,
// sector_size, the envelope's SectorNum and SectorSize, sector_number and
// the C1 must all agree; the envelope is bounded by its registered proof's
// C1 size before it is decoded; the C1's replica id must be the one the
// miner's prover id and the sector number derive; and the vanilla proofs
// must verify natively. The returned identity's C1 bytes are the envelope
// itself (workers decode it as they decode any Commit2In), so the same
// Curio request always names the same sector identity. Every error wraps
// ErrBadRequest, unless ctx ended.
func Curio(ctx context.Context, r CurioRequest) (job.SectorRef, error) {
	ref, err := curio(ctx, r)
	if err != nil && ctx.Err() == nil {
		err = fmt.Errorf("%w: %w", ErrBadRequest, err)
	}
	return ref, err
}

func curio(ctx context.Context, r CurioRequest) (job.SectorRef, error) {
	if r.RegisteredProof > math.MaxInt64 {
		return job.SectorRef{}, fmt.Errorf("registered_proof %d: %w", r.RegisteredProof, proofs.ErrUnknown)
	}
	info, err := proofs.ByID(int64(r.RegisteredProof))
	if err != nil {
		if d, derr := proofs.Describe(proofs.RegisteredSealProof(r.RegisteredProof)); derr == nil {
			return job.SectorRef{}, fmt.Errorf("registered_proof %d is %s: c2flow does not prove it (%w)", r.RegisteredProof, d.Name, err)
		}
		return job.SectorRef{}, fmt.Errorf("registered_proof %d: %w", r.RegisteredProof, err)
	}
	if r.SectorSize != 0 && r.SectorSize != info.SectorSize {
		return job.SectorRef{}, fmt.Errorf("sector_size %d, but registered_proof %d (%s) has %d-byte sectors", r.SectorSize, r.RegisteredProof, info.Name, info.SectorSize)
	}
	if r.SectorNumber > math.MaxInt64 {
		return job.SectorRef{}, fmt.Errorf("sector_number %d: Filecoin sector numbers are at most %d", r.SectorNumber, int64(math.MaxInt64))
	}
	limit, err := c1.MaxInputSize(info.Proof)
	if err != nil {
		return job.SectorRef{}, err
	}
	if int64(len(r.Envelope)) > limit {
		return job.SectorRef{}, fmt.Errorf("vanilla_proof is %d bytes, over the %d-byte bound of a %s C1 envelope: not decoded", len(r.Envelope), limit, info.Name)
	}
	a, err := c1.DecodeBytes(r.Envelope, c1.WithProof(info.Proof))
	if err != nil {
		if errors.Is(err, c1.ErrProofMismatch) {
			return job.SectorRef{}, fmt.Errorf("vanilla_proof's C1 is not of registered_proof %d (%s): %w", r.RegisteredProof, info.Name, err)
		}
		return job.SectorRef{}, fmt.Errorf("vanilla_proof: %w", err)
	}
	if !a.Wrapped {
		return job.SectorRef{}, errors.New(`vanilla_proof is a bare C1: Curio sends the C1OutputWrapper envelope {"SectorNum","Phase1Out","SectorSize"}`)
	}
	if n, _, err := c2.WrappedSectorID(a); err != nil {
		return job.SectorRef{}, fmt.Errorf("vanilla_proof: %w", err)
	} else if n != r.SectorNumber {
		return job.SectorRef{}, fmt.Errorf("the envelope's SectorNum is %d, sector_number is %d", n, r.SectorNumber)
	}
	pub := c2.PublicOf(a.C1, proofs.ProverID(r.MinerID), r.SectorNumber)
	want, err := pub.ReplicaID()
	if err != nil {
		return job.SectorRef{}, err
	}
	if want != a.C1.ReplicaID {
		return job.SectorRef{}, fmt.Errorf("miner %d (prover id %x) and sector %d derive replica id %x, the C1's is %x: not this miner's sector (%w)",
			r.MinerID, pub.ProverID[:10], r.SectorNumber, want, a.C1.ReplicaID, seal.ErrReplicaID)
	}
	s, err := c2.NewSector(a.C1, &pub)
	if err != nil {
		return job.SectorRef{}, err
	}
	if err := s.Verify(ctx); err != nil {
		return job.SectorRef{}, fmt.Errorf("the C1 does not verify natively: %w", err)
	}
	ref := job.NewSectorRef(pub.ProverID, r.SectorNumber, r.Envelope)
	ref.Profile = info.Name
	return ref, nil
}

// CurioUpdateRequest is what a cuzk SNAP_DEALS_UPDATE request says of its
// sector (curio lib/ffi/cuzk_funcs.go ProveUpdateCuzk).
type CurioUpdateRequest struct {
	// Vanilla is vanilla_proofs: one bincode PartitionProof a partition,
	// as Curio reads them from its snap-vproof.json.
	Vanilla [][]byte
	// Envelope is vanilla_proof: accepted in Vanilla's place when that is
	// empty, holding the snap-vproof.json itself (a JSON array of base64
	// strings).
	Envelope        []byte
	MinerID         uint64
	SectorNumber    uint64
	RegisteredProof uint64 // abi.RegisteredUpdateProof
	SectorSize      uint64 // 0: not given
	// The commitments: 32 raw bytes (what ProveUpdateCuzk sends) or CID
	// bytes (what the proto's first callers sent), told apart by length
	// and CID prefix (commcid.Parse).
	CommROld, CommRNew, CommDNew []byte
}

// CurioUpdate identifies the sector of a cuzk SnapDeals request and
// returns the UpdateInput c2flow proves it from: registered_proof and
// sector_size must agree, the vanilla proofs are bounded by the proof's
// input size before they are decoded, one per partition, and every
// partition must verify natively against the commitments. The input is
// built the same way whatever form the commitments came in, so a request
// sent with CIDs and one with raw bytes name one sector identity. Every
// error wraps ErrBadRequest, unless ctx ended.
func CurioUpdate(ctx context.Context, set scheme.Set, r CurioUpdateRequest) (job.SectorRef, []byte, error) {
	ref, raw, err := curioUpdate(ctx, set, r)
	if err != nil && ctx.Err() == nil {
		err = fmt.Errorf("%w: %w", ErrBadRequest, err)
	}
	return ref, raw, err
}

func curioUpdate(ctx context.Context, set scheme.Set, r CurioUpdateRequest) (job.SectorRef, []byte, error) {
	if r.RegisteredProof > math.MaxInt64 {
		return job.SectorRef{}, nil, fmt.Errorf("registered_proof %d: not a registered update proof", r.RegisteredProof)
	}
	info, err := proofs.LookupUpdate(proofs.RegisteredUpdateProof(r.RegisteredProof))
	if err != nil {
		return job.SectorRef{}, nil, fmt.Errorf("registered_proof: %w", err)
	}
	if r.SectorSize != 0 && r.SectorSize != info.SectorSize {
		return job.SectorRef{}, nil, fmt.Errorf("sector_size %d, but registered_proof %d (update %s) has %d-byte sectors", r.SectorSize, r.RegisteredProof, info.Name, info.SectorSize)
	}
	if err := seal.CheckSectorID(r.SectorNumber, "sector_number"); err != nil {
		return job.SectorRef{}, nil, err
	}
	limit, err := c2.MaxUpdateInputBytes(info)
	if err != nil {
		return job.SectorRef{}, nil, err
	}
	size := int64(len(r.Envelope))
	for _, v := range r.Vanilla {
		size += int64(len(v))
	}
	if size > limit {
		return job.SectorRef{}, nil, fmt.Errorf("the vanilla proofs are %d bytes, over the %d-byte bound of a %s update: not decoded", size, limit, info.Name)
	}
	in := &c2.UpdateInput{Proof: info, ProverID: proofs.ProverID(r.MinerID), SectorID: r.SectorNumber, Vanilla: r.Vanilla}
	switch {
	case len(r.Vanilla) > 0 && len(r.Envelope) > 0:
		return job.SectorRef{}, nil, errors.New("both vanilla_proofs and vanilla_proof are set: a SnapDeals request sends its partitions' proofs in vanilla_proofs")
	case len(r.Vanilla) == 0 && len(r.Envelope) > 0:
		parts, err := update.DecodeCurioVanilla(r.Envelope)
		if err != nil {
			return job.SectorRef{}, nil, fmt.Errorf("vanilla_proof (Curio's snap-vproof.json): %w", err)
		}
		for _, p := range parts {
			in.Vanilla = append(in.Vanilla, p.Bincode())
		}
	case len(r.Vanilla) == 0:
		return job.SectorRef{}, nil, errors.New("no vanilla_proofs: a SnapDeals request sends one bincode PartitionProof a partition")
	}
	for _, c := range []struct {
		name string
		b    []byte
		k    commcid.Kind
		dst  *[32]byte
	}{{"comm_r_old", r.CommROld, commcid.Sealed, &in.CommROld}, {"comm_r_new", r.CommRNew, commcid.Sealed, &in.CommRNew}, {"comm_d_new", r.CommDNew, commcid.Unsealed, &in.CommDNew}} {
		if *c.dst, err = commcid.Parse(c.b, c.k); err != nil {
			return job.SectorRef{}, nil, fmt.Errorf("%s: %w", c.name, err)
		}
	}
	raw, err := in.Encode()
	if err != nil {
		return job.SectorRef{}, nil, err
	}
	_, ref, err := set.Identify(ctx, "", raw, scheme.Hints{})
	if err != nil {
		return job.SectorRef{}, nil, err
	}
	return ref, raw, nil
}
