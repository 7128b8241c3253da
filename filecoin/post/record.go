package post

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"

	"github.com/c2flow/c2flow/filecoin/hash"
	"github.com/c2flow/c2flow/filecoin/merkle"
	"github.com/c2flow/c2flow/filecoin/proofs"
	"github.com/c2flow/c2flow/filecoin/seal"
	"github.com/c2flow/c2flow/internal/clip"
)

// Record is a PoSt proof's record, one JSON object a line, as `c2flow
// verify-post` reads it (post.json, which post-vanilla writes, is one
// without its proof): the registered PoSt proof by filecoin-proofs-api's
// name, the prover id and the masked randomness as 32 byte values, the
// replicas in sector order and the proof, one 192-byte Groth16 proof a
// partition, as byte values too (as Filecoin's serde writes a Vec<u8>).
type Record struct {
	RegisteredProof string     `json:"registered_proof"`
	ProverID        [32]byte   `json:"prover_id"`
	Randomness      [32]byte   `json:"randomness"`
	Replicas        []Replica  `json:"replicas"`
	Proof           ByteValues `json:"proof,omitempty"`
}

// Replica is one proved sector of a record: its number and comm_r.
type Replica struct {
	SectorID uint64   `json:"sector_id"`
	CommR    [32]byte `json:"comm_r"`
}

// ByteValues are bytes written as a JSON array of numbers, as Filecoin's
// serde records write a Vec<u8> ([]byte alone would be base64).
type ByteValues []byte

// MarshalJSON writes the bytes as numbers.
func (b ByteValues) MarshalJSON() ([]byte, error) {
	out := make([]byte, 0, 4*len(b)+2)
	out = append(out, '[')
	for i, v := range b {
		if i > 0 {
			out = append(out, ',')
		}
		out = fmt.Appendf(out, "%d", v)
	}
	return append(out, ']'), nil
}

// Public is the record's replicas as the public sectors of its proof, in
// its order.
func (r *Record) Public() []PublicSector {
	out := make([]PublicSector, len(r.Replicas))
	for i, rep := range r.Replicas {
		out[i] = PublicSector{ID: rep.SectorID, CommR: merkle.Node(rep.CommR)}
	}
	return out
}

// Partitions is the record's proof cut into its partitions' Groth16
// proofs (ParseRecord checked it is whole ones).
func (r *Record) Partitions() [][]byte {
	n := proofs.SinglePartitionProofLen
	out := make([][]byte, len(r.Proof)/n)
	for k := range out {
		out[k] = r.Proof[k*n : (k+1)*n]
	}
	return out
}

// PartitionReplicas is partition k's replicas of info's proof: a window
// partition's SectorCount of them (the last one's fewer), a winning
// proof's all.
func PartitionReplicas(info proofs.PoStProofInfo, replicas []PublicSector, k int) []PublicSector {
	if info.Type != proofs.PoStWindow {
		return replicas
	}
	return replicas[k*info.SectorCount : min(len(replicas), (k+1)*info.SectorCount)]
}

// recordFields are a record's fields; each is required.
var recordFields = []string{"registered_proof", "prover_id", "randomness", "replicas", "proof"}

// ParseRecord decodes a record line strictly (every field
// present, none unknown, byte values 0 to 255 of the right count, the
// prover id and randomness field elements as Filecoin's
// as_safe_commitment wants them) and checks its shape before anything is
// verified: the proof is whole partition proofs, as many as the replicas
// take (window: SectorCount a partition; winning: one replica, one
// proof), the replicas in increasing sector order without repeats, as
// verify_window_post's BTreeMap holds them.
func ParseRecord(line []byte) (*Record, proofs.PoStProofInfo, error) {
	var none proofs.PoStProofInfo
	var m map[string]json.RawMessage
	if err := json.Unmarshal(line, &m); err != nil {
		return nil, none, fmt.Errorf("not a JSON object: %w", err)
	}
	raw, err := requireFields(m, recordFields, "record")
	if err != nil {
		return nil, none, err
	}
	info, err := parsePoStName(raw[0])
	if err != nil {
		return nil, none, err
	}
	rec := &Record{RegisteredProof: info.Name}
	for i, f := range []struct {
		name string
		dst  *[32]byte
	}{{"prover_id", &rec.ProverID}, {"randomness", &rec.Randomness}} {
		if *f.dst, err = byteArray32(raw[1+i], f.name); err != nil {
			return nil, none, err
		}
		if _, err := hash.ElementFromLE(*f.dst); err != nil {
			return nil, none, fmt.Errorf("%s %x is not a field element (Filecoin refuses it; randomness is masked: byte 31 &= 0x3f): %w", f.name, *f.dst, err)
		}
	}
	if rec.Proof, err = parseByteValues(raw[4], "proof"); err != nil {
		return nil, none, err
	}
	partLen := proofs.SinglePartitionProofLen
	if len(rec.Proof) == 0 || len(rec.Proof)%partLen != 0 {
		return nil, none, fmt.Errorf("proof of %d bytes: not one %d-byte Groth16 proof a partition", len(rec.Proof), partLen)
	}
	parts := len(rec.Proof) / partLen
	var reps []json.RawMessage
	if err := json.Unmarshal(raw[3], &reps); err != nil || reps == nil {
		return nil, none, fmt.Errorf("replicas: not an array of {\"sector_id\", \"comm_r\"} objects: %v", err)
	}
	// Winning proves one sector in one partition; window proves up to
	// SectorCount sectors a partition, and no partition is empty.
	if info.Type == proofs.PoStWinning && (len(reps) != info.SectorCount || parts != 1) {
		return nil, none, fmt.Errorf("%s proves %d replica with one %d-byte proof, not %d replicas with %d bytes", info.Name, info.SectorCount, partLen, len(reps), len(rec.Proof))
	}
	if len(reps) == 0 || len(reps) > parts*info.SectorCount || len(reps) <= (parts-1)*info.SectorCount {
		return nil, none, fmt.Errorf("%d replicas for a proof of %d partitions (%d bytes): %s proves %d sectors a partition, so %d replicas take %d",
			len(reps), parts, len(rec.Proof), info.Name, info.SectorCount, len(reps), info.Partitions(len(reps)))
	}
	rec.Replicas = make([]Replica, len(reps))
	for i, r := range reps {
		if rec.Replicas[i], err = parseReplica(r); err != nil {
			return nil, none, fmt.Errorf("replica %d: %w", i, err)
		}
	}
	if err := sortedReplicas(rec.Replicas); err != nil {
		return nil, none, err
	}
	return rec, info, nil
}

// requireFields returns the fields of m named by names, in their order;
// a field missing or null, or one not named, is an error.
func requireFields(m map[string]json.RawMessage, names []string, what string) ([]json.RawMessage, error) {
	for k := range m {
		if !slices.Contains(names, k) {
			return nil, fmt.Errorf("%s: unknown field %q (the fields: %v)", what, k, names)
		}
	}
	out := make([]json.RawMessage, len(names))
	for i, k := range names {
		v, ok := m[k]
		if !ok || string(v) == "null" {
			return nil, fmt.Errorf("%s: field %q missing", what, k)
		}
		out[i] = v
	}
	return out, nil
}

// parsePoStName is the registered_proof field: filecoin-proofs-api's name
// (or go-state-types' name of the same proof). A number is refused with
// the name it stands for in Curio's numbering: the record names proofs as
// the issue and filecoin-proofs-api do.
func parsePoStName(raw json.RawMessage) (proofs.PoStProofInfo, error) {
	var name string
	if err := json.Unmarshal(raw, &name); err != nil {
		var n int64
		if json.Unmarshal(raw, &n) == nil {
			if info, err := proofs.LookupPoSt(proofs.RegisteredPoStProof(n)); err == nil {
				return proofs.PoStProofInfo{}, fmt.Errorf("registered_proof %d: name the proof, here %q (Curio's number %d)", n, info.Name, n)
			}
		}
		return proofs.PoStProofInfo{}, fmt.Errorf("registered_proof %s: not a registered PoSt proof's name (e.g. %q)", clip.Head(string(raw), 40), proofs.StackedDrgWindow2KiBV1_2.String())
	}
	info, err := proofs.PoStByName(name)
	if err != nil {
		return proofs.PoStProofInfo{}, fmt.Errorf("registered_proof: %w", err)
	}
	return info, nil
}

// parseReplica decodes {"sector_id": N, "comm_r": [32 bytes]}.
func parseReplica(raw json.RawMessage) (Replica, error) {
	var r Replica
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return r, fmt.Errorf("not a JSON object: %w", err)
	}
	f, err := requireFields(m, []string{"sector_id", "comm_r"}, "replica")
	if err != nil {
		return r, err
	}
	if err := json.Unmarshal(f[0], &r.SectorID); err != nil {
		return r, fmt.Errorf("sector_id %s: not a sector number: %w", clip.Head(string(f[0]), 40), err)
	}
	if err := seal.CheckSectorID(r.SectorID, "sector_id"); err != nil {
		return r, err
	}
	if r.CommR, err = byteArray32(f[1], fmt.Sprintf("sector %d's comm_r", r.SectorID)); err != nil {
		return r, err
	}
	return r, nil
}

// sortedReplicas checks that the replicas are in increasing sector order
// without repeats, as Filecoin's verify_window_post holds them (a
// BTreeMap by sector id) and Curio sends them.
func sortedReplicas(rs []Replica) error {
	for i := 1; i < len(rs); i++ {
		switch cmp.Compare(rs[i-1].SectorID, rs[i].SectorID) {
		case 0:
			return fmt.Errorf("replicas: sector %d twice", rs[i].SectorID)
		case 1:
			return fmt.Errorf("replicas: sector %d after sector %d: not in increasing sector_id order", rs[i].SectorID, rs[i-1].SectorID)
		}
	}
	return nil
}

// byteArray32 decodes exactly 32 byte values.
func byteArray32(raw json.RawMessage, what string) ([32]byte, error) {
	b, err := parseByteValues(raw, what)
	if err != nil {
		return [32]byte{}, err
	}
	if len(b) != 32 {
		return [32]byte{}, fmt.Errorf("%s: %d bytes, want 32", what, len(b))
	}
	return [32]byte(b), nil
}

// parseByteValues decodes a JSON array of integers 0 to 255 (raw is valid
// JSON: the record decoded), strictly: no null, fraction, exponent or
// sign (encoding/json reads null as 0), one byte a value in memory (a
// []int of a 16 MiB line would take 64 MiB).
func parseByteValues(raw json.RawMessage, what string) ([]byte, error) {
	s := bytes.TrimSpace(raw)
	bad := func(format string, a ...any) ([]byte, error) {
		return nil, fmt.Errorf("%s: not an array of byte values (integers 0 to 255): %s", what, fmt.Sprintf(format, a...))
	}
	if len(s) < 2 || s[0] != '[' {
		return bad("%s", clip.Head(string(raw), 40))
	}
	out := make([]byte, 0, len(s)/2)
	i := 1
	space := func(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }
	skip := func() {
		for i < len(s) && space(s[i]) {
			i++
		}
	}
	skip()
	if i < len(s) && s[i] == ']' {
		return out, nil
	}
	for {
		skip()
		j := i
		for i < len(s) && s[i] != ',' && s[i] != ']' && !space(s[i]) {
			i++
		}
		v, err := strconv.ParseUint(string(s[j:i]), 10, 8)
		if err != nil || (i-j > 1 && s[j] == '0') {
			return bad("value %d is %s", len(out), clip.Head(string(s[j:i]), 40))
		}
		out = append(out, byte(v))
		skip()
		if i >= len(s) {
			return bad("unterminated")
		}
		switch s[i] {
		case ',':
			i++
		case ']':
			if i != len(s)-1 {
				return bad("text after the array")
			}
			return out, nil
		default:
			return bad("value %d is followed by %q", len(out)-1, s[i])
		}
	}
}
