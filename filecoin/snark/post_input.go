package snark

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math/bits"

	"github.com/c2flow/c2flow/filecoin/post"
	"github.com/c2flow/c2flow/filecoin/proofs"
	"github.com/c2flow/c2flow/filecoin/seal"
	"github.com/c2flow/c2flow/internal/strictjson"
)

// ErrBadPoStInput is wrapped by every error of a PoSt input that does not
// decode or does not fit its proof: the input's fault.
var ErrBadPoStInput = errors.New("bad PoSt input")

// PoStInput is what c2flow proves one WindowPoSt partition or one
// WinningPoSt from, stored in S3 as the job's input: the registered PoSt
// proof, the prover, the (masked) randomness, the partition's index and
// the vanilla proofs of its sectors (one FallbackPoStSectorProof a sector,
// GenerateSingleVanillaProof's, sorted by sector number, as filecoin-proofs
// takes them from a BTreeMap). Its canonical encoding (Encode) is the
// job's identity: the same content sent in other bytes is the same job,
// and two partitions of one deadline never share one.
type PoStInput struct {
	Proof      proofs.PoStProofInfo
	ProverID   [32]byte
	Randomness [32]byte
	Partition  int
	Vanilla    []*post.VanillaProof
}

// postJSON is PoStInput's file: JSON with the prover id and randomness in
// hex and each vanilla proof's bincode in base64.
type postJSON struct {
	RegisteredPoStProof string   `json:"registered_post_proof"`
	ProverID            string   `json:"prover_id"`
	Randomness          string   `json:"randomness"`
	PartitionIndex      *int     `json:"partition_index"`
	VanillaProofs       [][]byte `json:"vanilla_proofs"`
}

// Encode writes in as its file, canonically: the same input always gives
// the same bytes (their digest is the job's identity).
func (in *PoStInput) Encode() ([]byte, error) {
	k := in.Partition
	j := postJSON{RegisteredPoStProof: in.Proof.Name, ProverID: hex.EncodeToString(in.ProverID[:]),
		Randomness: hex.EncodeToString(in.Randomness[:]), PartitionIndex: &k, VanillaProofs: make([][]byte, len(in.Vanilla))}
	for i, v := range in.Vanilla {
		j.VanillaProofs[i] = v.Bincode()
	}
	b, err := json.Marshal(j)
	if err != nil {
		return nil, fmt.Errorf("encode PoSt input of prover %x: %w", in.ProverID[:8], err)
	}
	return append(b, '\n'), nil
}

// FirstSector is the partition's first sector number: what names the job
// for people (its identity is the input's digest).
func (in *PoStInput) FirstSector() uint64 {
	if len(in.Vanilla) == 0 {
		return 0
	}
	return in.Vanilla[0].SectorID
}

// MaxVanillaBytes bounds one sector's vanilla proof of info in bincode,
// checked before it is decoded: every opening at the widest arity on
// every level a leaf index of the sector's nodes can have.
func MaxVanillaBytes(info proofs.PoStProofInfo) int64 {
	levels := int64(bits.Len64(info.Nodes))
	level := int64(8 + 7*32 + 8) // a Vec of at most 7 siblings and the index
	opening := int64(4+3*8+64) + levels*level
	return 8 + 32 + 8 + 8 + 64 + int64(info.ChallengeCount)*opening
}

// MaxPoStInputBytes bounds a PoSt input of info, checked before it is
// read: SectorCount vanilla proofs at MaxVanillaBytes, in base64 (4 bytes
// for each 3 begun, two quotes and a comma each), and the other fields.
func MaxPoStInputBytes(info proofs.PoStProofInfo) int64 {
	per := (MaxVanillaBytes(info)+2)/3*4 + 3
	return int64(info.SectorCount)*per + 4096
}

// DecodePoStInput decodes a PoSt input strictly: every field present, no
// other; a registered PoSt proof by filecoin-proofs-api's name; the
// randomness a field element (masked, as Curio and Lotus mask it); 1 to
// SectorCount vanilla proofs (a winning proof's one), each decoding whole,
// their sector numbers strictly increasing. Their openings are verified
// by post.NewPartition, not here. The error names the field at fault and
// wraps ErrBadPoStInput.
func DecodePoStInput(raw []byte) (*PoStInput, error) {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("PoSt input: %s: %w", fmt.Sprintf(format, a...), ErrBadPoStInput)
	}
	var j postJSON
	if err := strictjson.Decode(raw, &j); err != nil {
		return nil, bad("%v", err)
	}
	info, err := proofs.PoStByName(j.RegisteredPoStProof)
	if err != nil {
		return nil, bad("registered_post_proof: %v", err)
	}
	if info.Name != j.RegisteredPoStProof {
		return nil, bad("registered_post_proof %q: write filecoin-proofs-api's name, %s", j.RegisteredPoStProof, info.Name)
	}
	in := &PoStInput{Proof: info}
	if j.ProverID == "" {
		return nil, bad("no prover_id")
	}
	if in.ProverID, err = seal.ParseHex32(j.ProverID); err != nil {
		return nil, bad("prover_id: %v", err)
	}
	if j.Randomness == "" {
		return nil, bad("no randomness")
	}
	if in.Randomness, err = seal.ParseHex32(j.Randomness); err != nil {
		return nil, bad("randomness: %v", err)
	}
	if post.MaskRandomness(in.Randomness) != in.Randomness {
		return nil, bad("randomness %s is not masked (its last byte & 0x3f, as Curio and Lotus prove and verify)", j.Randomness)
	}
	if j.PartitionIndex == nil {
		return nil, bad("no partition_index")
	}
	in.Partition = *j.PartitionIndex
	if in.Vanilla, err = decodeVanillas(info, j.VanillaProofs, "vanilla_proofs"); err != nil {
		return nil, bad("%v", err)
	}
	if err := checkPartitionIndex(info, in.Partition); err != nil {
		return nil, bad("%v", err)
	}
	return in, nil
}

// checkPartitionIndex refuses a partition a proof cannot have: a winning
// proof has partition 0 alone.
func checkPartitionIndex(info proofs.PoStProofInfo, k int) error {
	if k < 0 || k >= post.MaxPartitions {
		return fmt.Errorf("partition_index %d: 0 to %d", k, post.MaxPartitions-1)
	}
	if info.Type == proofs.PoStWinning && k != 0 {
		return fmt.Errorf("partition_index %d: a %s proof has partition 0 alone", k, info.Name)
	}
	return nil
}

// decodeVanillas decodes a partition's vanilla proofs (field names them in
// errors): 1 to SectorCount, each bounded by MaxVanillaBytes before it is
// decoded, sector numbers strictly increasing.
func decodeVanillas(info proofs.PoStProofInfo, raw [][]byte, field string) ([]*post.VanillaProof, error) {
	if len(raw) == 0 || len(raw) > info.SectorCount {
		return nil, fmt.Errorf("%s: %d vanilla proofs, a %s partition proves 1 to %d sectors", field, len(raw), info.Name, info.SectorCount)
	}
	limit := MaxVanillaBytes(info)
	out := make([]*post.VanillaProof, len(raw))
	for i, b := range raw {
		if int64(len(b)) > limit {
			return nil, fmt.Errorf("%s[%d]: %d bytes, over the %d-byte bound of a %s sector's vanilla proof: not decoded", field, i, len(b), limit, info.Name)
		}
		v, err := post.DecodeVanilla(b)
		if err != nil {
			return nil, fmt.Errorf("%s[%d]: %w", field, i, err)
		}
		if err := seal.CheckSectorID(v.SectorID, "sector_id"); err != nil {
			return nil, fmt.Errorf("%s[%d]: %w", field, i, err)
		}
		if i > 0 && v.SectorID <= out[i-1].SectorID {
			return nil, fmt.Errorf("%s[%d]: sector %d after sector %d: the vanilla proofs must be sorted by sector number, each once", field, i, v.SectorID, out[i-1].SectorID)
		}
		out[i] = v
	}
	return out, nil
}
