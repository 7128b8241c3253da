package snark

import (
	"fmt"
	"math"

	"github.com/c2flow/c2flow/filecoin/c1"
	"github.com/c2flow/c2flow/filecoin/circuit"
	"github.com/c2flow/c2flow/filecoin/proofs"
	"github.com/c2flow/c2flow/scheme"
)

var (
	_ scheme.Bounder = (*Scheme)(nil)
	_ scheme.Bounder = (*UpdateScheme)(nil)
	_ scheme.Bounder = (*PoStScheme)(nil)
)

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
// sector, at most SectorCount of MaxVanillaBytes each, no envelope.
func (*PoStScheme) RequestBound(_ string, registeredProof uint64) (scheme.Bound, error) {
	if registeredProof > math.MaxInt64 {
		return scheme.Bound{}, fmt.Errorf("registered_proof %d: %w", registeredProof, proofs.ErrUnknownPoSt)
	}
	info, err := proofs.LookupPoSt(proofs.RegisteredPoStProof(registeredProof))
	if err != nil {
		return scheme.Bound{}, fmt.Errorf("registered_proof: %w", err)
	}
	per := MaxVanillaBytes(info)
	return scheme.Bound{Entries: info.SectorCount, EntryBytes: per, TotalBytes: int64(info.SectorCount) * per}, nil
}
