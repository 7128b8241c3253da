package snark

import (
	"context"
	"encoding/hex"
	"fmt"
	"io"
	"strings"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/c2flow/c2flow/filecoin/circuit"
	"github.com/c2flow/c2flow/filecoin/groth"
	"github.com/c2flow/c2flow/filecoin/hash"
	"github.com/c2flow/c2flow/filecoin/proofs"
	"github.com/c2flow/c2flow/filecoin/r1cs"
	"github.com/c2flow/c2flow/filecoin/update"
	"github.com/c2flow/c2flow/job"
	"github.com/c2flow/c2flow/prover"
	"github.com/c2flow/c2flow/scheme"
)

// UpdateScheme is Filecoin's empty-sector-update proof (SnapDeals,
// ProveReplicaUpdate2) behind scheme.Scheme: an UpdateInput in, the
// partitions' 192-byte Groth16 proofs of EmptySectorUpdateCircuit out,
// concatenated, what filecoin-proofs'
// generate_empty_sector_update_proof_with_vanilla returns. Its profiles
// are UpdateProfile's names. It shares its Scheme's parameters and loads
// (Scheme.Update).
type UpdateScheme struct {
	kind[proofs.UpdateProofInfo, *circuitOf[*UpdateSector], *verifierOf[*UpdateSector]]
}

var _ scheme.Scheme = (*UpdateScheme)(nil)

// updateInfo is the registered update proof of a profile.
func updateInfo(profile string) (proofs.UpdateProofInfo, error) {
	name, ok := strings.CutPrefix(profile, UpdatePrefix)
	if !ok {
		return proofs.UpdateProofInfo{}, fmt.Errorf("%q is not an update profile (%s<registered update proof>)", profile, UpdatePrefix)
	}
	return proofs.UpdateByName(name)
}

// WriteInfo implements scheme.Scheme (WriteUpdateInfo).
func (*UpdateScheme) WriteInfo(w io.Writer, proof string) error {
	info, err := updateInfo(proof)
	if err != nil {
		return fmt.Errorf("circuit info: %w", err)
	}
	return WriteUpdateInfo(w, info.Name)
}

// updateKind is the update proofs' kind (UpdateProfile's names).
var updateKind = &kindSpec[proofs.UpdateProofInfo, *circuitOf[*UpdateSector], *verifierOf[*UpdateSector]]{
	name: "filecoin-update", what: "filecoin update", requests: []request{{scheme.KindSnap, scheme.Policy{Priorities: porepClass}}},
	proofs: func() []string {
		var out []string
		for _, n := range proofs.UpdateNames() {
			out = append(out, UpdatePrefix+n)
		}
		return out
	},
	recognize: func(h scheme.Head) bool { return h.Has("registered_update_proof") },
	info:      updateInfo, spec: updateSpec, maxInput: MaxUpdateInputBytes,
	circuit: func(_ proofs.UpdateProofInfo, k *keys) *circuitOf[*UpdateSector] {
		return &circuitOf[*UpdateSector]{verifierOf[*UpdateSector]{k: k, kind: "update"}}
	},
	verifier: func(_ proofs.UpdateProofInfo, k *keys) *verifierOf[*UpdateSector] {
		return &verifierOf[*UpdateSector]{k: k, kind: "update"}
	},
}

// Identify implements scheme.Identifier: an UpdateInput names its prover
// and sector; hints, where given, must agree. Every partition's vanilla
// proof is verified natively against the input's commitments. Its
// canonical bytes are CanonicalUpdateInput's: the same update in other
// bytes (whitespace, key order, hex case, base64 in lines) is the same
// sector identity.
func (s *UpdateScheme) Identify(ctx context.Context, name string, raw []byte, h scheme.Hints) (job.Ref, []byte, error) {
	in, parts, err := DecodeUpdateInput(raw)
	if err != nil {
		return job.Ref{}, nil, err
	}
	if err := checkHints(h, in.ProverID, in.SectorID, "the update input", "the update input is of sector"); err != nil {
		return job.Ref{}, nil, err
	}
	canon, err := CanonicalUpdateInput(in, parts)
	if err != nil {
		return job.Ref{}, nil, err
	}
	ref := job.NewRef(in.ProverID, in.SectorID, canon)
	ref.Proof = UpdateProfile(in.Proof)
	// The canonical bytes are checked as a worker decodes them; the raw
	// input's partitions are dropped first.
	in, parts = nil, nil
	sec, err := s.DecodeUpdate(canon, ref)
	if err != nil {
		return job.Ref{}, nil, err
	}
	if err := sec.Verify(ctx); err != nil {
		return job.Ref{}, nil, fmt.Errorf("does not verify natively against its commitments, not submitted: %w", err)
	}
	return ref, canon, nil
}

// Decode implements scheme.Scheme (DecodeUpdate).
func (s *UpdateScheme) Decode(raw []byte, id job.Ref) (scheme.Sector, error) {
	return s.DecodeUpdate(raw, id)
}

// DecodeUpdate decodes an UpdateInput strictly (DecodeUpdateInput) and
// checks that it is id's: its prover, sector and, where id names one, its
// update proof.
func (*UpdateScheme) DecodeUpdate(raw []byte, id job.Ref) (*UpdateSector, error) {
	in, parts, err := DecodeUpdateInput(raw)
	if err != nil {
		return nil, err
	}
	if id.Proof != "" && id.Proof != UpdateProfile(in.Proof) {
		return nil, fmt.Errorf("update input: of %s, not of the declared %s: %w", UpdateProfile(in.Proof), id.Proof, ErrBadUpdateInput)
	}
	if p := hex.EncodeToString(in.ProverID[:]); p != id.ProverID {
		return nil, fmt.Errorf("update input: of prover %s, not of the sector's prover %s: %w", p, id.ProverID, ErrBadUpdateInput)
	}
	if in.SectorID != id.SectorID {
		return nil, fmt.Errorf("update input: of sector %d, not of sector %d: %w", in.SectorID, id.SectorID, ErrBadUpdateInput)
	}
	return NewUpdateSector(in, parts)
}

// UpdateSector is a decoded update input with the public data its
// partitions are proved against.
type UpdateSector struct {
	in    *UpdateInput
	shape circuit.UpdateShape
	parts []*update.PartitionProof
	pub   update.Public
}

var _ scheme.Sector = (*UpdateSector)(nil)

// NewUpdateSector is the sector of a decoded input and its partitions'
// vanilla proofs; h is the proof's default (filecoin-proofs'
// SectorUpdateConfig: h_default of the sector's nodes).
func NewUpdateSector(in *UpdateInput, parts []*update.PartitionProof) (*UpdateSector, error) {
	s, err := circuit.UpdateShapeOf(in.Proof.SectorSize)
	if err != nil {
		return nil, fmt.Errorf("update of sector %d: %w", in.SectorID, err)
	}
	if len(parts) != s.Partitions() {
		return nil, fmt.Errorf("update of sector %d: %d vanilla proofs, %s has %d partitions: %w", in.SectorID, len(parts), in.Proof.Name, s.Partitions(), ErrBadUpdateInput)
	}
	sec := &UpdateSector{in: in, shape: s, parts: parts, pub: update.Public{H: s.HDefault()}}
	for _, c := range []struct {
		b   [32]byte
		dst *fr.Element
	}{{in.CommROld, &sec.pub.CommROld}, {in.CommRNew, &sec.pub.CommRNew}, {in.CommDNew, &sec.pub.CommDNew}} {
		if *c.dst, err = hash.ElementFromLE(c.b); err != nil {
			return nil, fmt.Errorf("update of sector %d: commitment %x: %w: %w", in.SectorID, c.b, err, ErrBadUpdateInput)
		}
	}
	return sec, nil
}

// UpdatePublic is an update's public data alone (no vanilla proofs): what
// verifying its proof needs, as filecoin-proofs'
// verify_empty_sector_update_proof takes it. Its Verify is an error.
func UpdatePublic(info proofs.UpdateProofInfo, commROld, commRNew, commDNew [32]byte) (*UpdateSector, error) {
	s, err := circuit.UpdateShapeOf(info.SectorSize)
	if err != nil {
		return nil, err
	}
	return NewUpdateSector(&UpdateInput{Proof: info, CommROld: commROld, CommRNew: commRNew, CommDNew: commDNew}, make([]*update.PartitionProof, s.Partitions()))
}

// Input is the sector's decoded input.
func (s *UpdateSector) Input() *UpdateInput { return s.in }

// String names the sector in errors.
func (s *UpdateSector) String() string { return fmt.Sprintf("sector %d (update)", s.in.SectorID) }

func (s *UpdateSector) partitionID(k int) string {
	return prover.PartitionID(hex.EncodeToString(s.in.ProverID[:]), s.in.SectorID, k)
}

// Proof implements scheme.Sector: the update profile.
func (s *UpdateSector) Proof() string { return UpdateProfile(s.in.Proof) }

// Partitions implements scheme.Sector.
func (s *UpdateSector) Partitions() int { return s.shape.Partitions() }

// C2Bytes implements scheme.Sector: a 192-byte proof per partition.
func (s *UpdateSector) C2Bytes() int64 { return int64(s.shape.Partitions()) * groth.ProofSize }

// Verify implements scheme.Sector: every partition's vanilla proof,
// natively (update.PartitionProof.Verify); the error names the first
// failure by partition, challenge and tree.
func (s *UpdateSector) Verify(ctx context.Context) error {
	for k, p := range s.parts {
		if err := ctx.Err(); err != nil {
			return err
		}
		if p == nil {
			return fmt.Errorf("update of sector %d: partition %d: no vanilla proof (public data only): %w", s.in.SectorID, k, ErrBadUpdateInput)
		}
		if err := p.Verify(s.shape, k, s.pub); err != nil {
			return fmt.Errorf("update of sector %d: %w", s.in.SectorID, err)
		}
	}
	return nil
}

// PublicInputs are partition k's public inputs, from the commitments
// alone (update.PublicInputs).
func (s *UpdateSector) PublicInputs(k int) ([]fr.Element, error) {
	return update.PublicInputs(s.shape, k, s.pub.H, s.pub.CommROld, s.pub.CommDNew, s.pub.CommRNew)
}

// circuitSpec is the update circuit of the sector's proof.
func (s *UpdateSector) circuitSpec() (*spec, error) { return updateSpec(s.in.Proof) }

// builder is partition k's witness from its vanilla proof
// (update.PartitionProof.Witness) through the update circuit.
func (s *UpdateSector) builder(k int) (func(*r1cs.Witness) error, error) {
	if s.parts[k] == nil {
		return nil, fmt.Errorf("no vanilla proof (public data only): %w", ErrBadUpdateInput)
	}
	return func(wit *r1cs.Witness) error {
		w, err := s.parts[k].Witness(s.shape, k, s.pub)
		if err != nil {
			return err
		}
		return circuit.SynthesizeUpdate(wit, s.shape, w)
	}, nil
}
