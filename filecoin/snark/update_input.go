package snark

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/c2flow/c2flow/filecoin/circuit"
	"github.com/c2flow/c2flow/filecoin/commcid"
	"github.com/c2flow/c2flow/filecoin/hash"
	"github.com/c2flow/c2flow/filecoin/proofs"
	"github.com/c2flow/c2flow/filecoin/seal"
	"github.com/c2flow/c2flow/filecoin/update"
	"github.com/c2flow/c2flow/internal/strictjson"
)

// UpdatePrefix marks an update proof's profile: the pipeline names
// proofs by one string, and filecoin-proofs-api's update proofs share
// their names with seal proofs ("StackedDrg2KiBV1" is both).
const UpdatePrefix = "Update"

// UpdateInputs is the number of inputs of an update partition's circuit,
// ONE included (circuit.rs PublicInputs: k and h_select packed, comm_r_old,
// comm_d_new, comm_r_new).
const UpdateInputs = 5

// UpdateProfile is the pipeline's name of a registered update proof:
// UpdatePrefix + its registry name ("UpdateStackedDrg32GiBV1").
func UpdateProfile(info proofs.UpdateProofInfo) string { return UpdatePrefix + info.Name }

// ErrBadUpdateInput is wrapped by every error of an update input that
// does not decode or does not fit its proof: the input's fault.
var ErrBadUpdateInput = errors.New("bad update input")

// UpdateInput is what c2flow proves an update (SnapDeals,
// ProveReplicaUpdate2) from, stored in S3 as a sector's input: the
// registered update proof, whose sector it is, the three commitments
// (32 bytes each, as filecoin-proofs' Commitment) and the partitions'
// vanilla proofs (vanilla.rs PartitionProof in bincode, as
// generate_update_vanilla_proofs returns them and Curio stores them). It
// names its sector, so that an input stored under another sector's
// identity is refused.
type UpdateInput struct {
	Proof                        proofs.UpdateProofInfo
	ProverID                     [32]byte
	SectorID                     uint64
	CommROld, CommRNew, CommDNew [32]byte
	Vanilla                      [][]byte
}

// updateJSON is UpdateInput's file: JSON with the commitments and prover
// id in hex and each vanilla proof in base64.
type updateJSON struct {
	RegisteredUpdateProof string   `json:"registered_update_proof"`
	ProverID              string   `json:"prover_id"`
	SectorNumber          *uint64  `json:"sector_number"`
	CommROld              string   `json:"comm_r_old"`
	CommRNew              string   `json:"comm_r_new"`
	CommDNew              string   `json:"comm_d_new"`
	VanillaProofs         [][]byte `json:"vanilla_proofs"`
}

// Encode writes in as its file: the same input always gives the same
// bytes (its digest is the sector's identity).
func (in *UpdateInput) Encode() ([]byte, error) {
	n := in.SectorID
	j := updateJSON{RegisteredUpdateProof: in.Proof.Name, ProverID: hex.EncodeToString(in.ProverID[:]), SectorNumber: &n,
		CommROld: hex.EncodeToString(in.CommROld[:]), CommRNew: hex.EncodeToString(in.CommRNew[:]), CommDNew: hex.EncodeToString(in.CommDNew[:]),
		VanillaProofs: in.Vanilla}
	b, err := json.Marshal(j)
	if err != nil {
		return nil, fmt.Errorf("encode update input of sector %d: %w", in.SectorID, err)
	}
	return append(b, '\n'), nil
}

// CanonicalUpdateInput is the canonical bytes of a decoded update input
// (DecodeUpdateInput): Encode of in with each vanilla proof re-encoded
// from its decoded partition (PartitionProof.Bincode), so that neither
// the JSON's layout (whitespace, key order, hex case, base64 in lines)
// nor the bytes a vanilla proof came in change them. They are never
// longer than MaxUpdateInputBytes, the bound the workers read inputs by.
func CanonicalUpdateInput(in *UpdateInput, parts []*update.PartitionProof) ([]byte, error) {
	c := *in
	c.Vanilla = make([][]byte, len(parts))
	for k, p := range parts {
		c.Vanilla[k] = p.Bincode()
	}
	b, err := c.Encode()
	if err != nil {
		return nil, err
	}
	limit, err := MaxUpdateInputBytes(in.Proof)
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("update input of sector %d: its canonical encoding is %d bytes, over the %d-byte bound of a %s update", in.SectorID, len(b), limit, in.Proof.Name)
	}
	return b, nil
}

// MaxUpdateInputBytes bounds an update input of proof, checked before it
// is read: twice the largest vanilla proofs its shape allows (every path
// level at the widest arity), in base64.
func MaxUpdateInputBytes(info proofs.UpdateProofInfo) (int64, error) {
	s, err := circuit.UpdateShapeOf(info.SectorSize)
	if err != nil {
		return 0, err
	}
	level := int64(8 + 7*32 + 8) // a Vec of at most 7 siblings and the index
	opening := int64(4+3*8+64) + int64(s.ChallengeBits())*level
	part := int64(32+8+8) + 32*int64(s.ApexLeaves()) + int64(s.Challenges())*3*opening
	return 2*(int64(s.Partitions())*part*4/3) + 4096, nil
}

// DecodeUpdateInput decodes an update input strictly: every field
// present, no other, each commitment 32 bytes that are a field element,
// one vanilla proof per partition of the proof, each decoding whole. The
// error names the field at fault and wraps ErrBadUpdateInput.
func DecodeUpdateInput(raw []byte) (*UpdateInput, []*update.PartitionProof, error) {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("update input: %s: %w", fmt.Sprintf(format, a...), ErrBadUpdateInput)
	}
	var j updateJSON
	if err := strictjson.Decode(raw, &j); err != nil {
		return nil, nil, bad("%v", err)
	}
	info, err := proofs.UpdateByName(j.RegisteredUpdateProof)
	if err != nil {
		return nil, nil, bad("registered_update_proof: %v", err)
	}
	in := &UpdateInput{Proof: info, Vanilla: j.VanillaProofs}
	if j.ProverID == "" {
		return nil, nil, bad("no prover_id")
	}
	if in.ProverID, err = seal.ParseHex32(j.ProverID); err != nil {
		return nil, nil, bad("prover_id: %v", err)
	}
	if j.SectorNumber == nil {
		return nil, nil, bad("no sector_number")
	}
	in.SectorID = *j.SectorNumber
	if err := seal.CheckSectorID(in.SectorID, "sector_number"); err != nil {
		return nil, nil, bad("%v", err)
	}
	for _, c := range []struct {
		name, s string
		dst     *[32]byte
	}{{"comm_r_old", j.CommROld, &in.CommROld}, {"comm_r_new", j.CommRNew, &in.CommRNew}, {"comm_d_new", j.CommDNew, &in.CommDNew}} {
		if c.s == "" {
			return nil, nil, bad("no %s", c.name)
		}
		if *c.dst, err = seal.ParseHex32(c.s); err != nil {
			return nil, nil, bad("%s: %v", c.name, err)
		}
		if _, err := hash.ElementFromLE(*c.dst); err != nil {
			return nil, nil, bad("%s %s: not a field element: %v", c.name, c.s, err)
		}
	}
	s, err := circuit.UpdateShapeOf(info.SectorSize)
	if err != nil {
		return nil, nil, bad("%v", err)
	}
	if len(j.VanillaProofs) != s.Partitions() {
		return nil, nil, bad("%d vanilla proofs, %s has %d partitions", len(j.VanillaProofs), info.Name, s.Partitions())
	}
	parts := make([]*update.PartitionProof, len(j.VanillaProofs))
	for k, b := range j.VanillaProofs {
		if parts[k], err = update.DecodePartitionProof(b); err != nil {
			return nil, nil, bad("vanilla_proofs[%d] (partition %d): %v", k, k, err)
		}
	}
	return in, parts, nil
}

// ParseCommitment reads one of an update's commitments as a person gives
// it: 64 hex digits (the 32 bytes), or a CID string as Curio and lotus
// print it (commcid.ParseString), kind telling comm_r (Sealed) from comm_d
// (Unsealed) CIDs.
func ParseCommitment(s string, kind commcid.Kind) ([32]byte, error) {
	// A CID string can be 64 characters long too (a CommD's is): hex only
	// where every digit is one.
	if c, err := seal.ParseHex32(s); err == nil {
		return c, nil
	}
	return commcid.ParseString(s, kind)
}
