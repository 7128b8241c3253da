package porep

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/c2flow/c2flow/internal/strictjson"
)

// C1Version is the version of the C1 JSON format this package writes and reads.
const C1Version = 1

// C1 is a sector's Commit-1 artifact: the statement and the vanilla proofs
// of every partition, mirroring Filecoin's SealCommitPhase1Output.
type C1 struct {
	Profile Profile
	SectorInfo
	ReplicaID  fr.Element
	CommD      fr.Element
	CommR      fr.Element
	CommC      fr.Element
	CommRLast  fr.Element
	Partitions []PartitionProof
}

// C1 returns the sector's C1 artifact.
func (s *Sector) C1() *C1 {
	return &C1{Profile: s.Profile, SectorInfo: s.SectorInfo, ReplicaID: s.ReplicaID, CommD: s.CommD,
		CommR: s.CommR, CommC: s.CommC, CommRLast: s.CommRLast, Partitions: s.VanillaProofs()}
}

// Statement returns the public statement of the C1's sector.
func (c *C1) Statement() Statement {
	return Statement{Profile: c.Profile, ReplicaID: c.ReplicaID, CommD: c.CommD, CommR: c.CommR, Seed: c.Seed}
}

// Verify checks the C1 natively: replica_id derivation, then every
// partition's vanilla proof. The error names the first failing field.
func (c *C1) Verify(h *Hasher) error {
	if want := ReplicaID(c.ProverID, c.SectorID, c.Ticket, c.CommD); !want.Equal(&c.ReplicaID) {
		return &FieldError{Field: "replica_id", Err: errors.New("not derived from prover_id, sector_id, ticket and comm_d")}
	}
	for k := range c.Partitions {
		if err := VerifyPartition(h, c.Statement(), c.CommC, c.CommRLast, c.Partitions[k]); err != nil {
			return fmt.Errorf("vanilla_proofs[%d]: %w", k, err)
		}
	}
	return nil
}

// FieldError is a C1 decoding error naming the offending JSON field.
type FieldError struct {
	Field string
	Err   error
}

func (e *FieldError) Error() string { return "c1: " + e.Field + ": " + e.Err.Error() }
func (e *FieldError) Unwrap() error { return e.Err }

// Decoding errors, wrapped in *FieldError.
var (
	ErrMalformed  = errors.New("malformed")
	ErrOutOfField = errors.New("not a canonical field element")
	ErrLength     = errors.New("wrong length")
	ErrTooLarge   = errors.New("too large")
	ErrVersion    = errors.New("unsupported version")
	ErrProfile    = errors.New("unknown profile")
)

type c1JSON struct {
	Version         int             `json:"version"`
	RegisteredProof string          `json:"registered_proof"`
	SectorID        uint64          `json:"sector_id"`
	ProverID        string          `json:"prover_id"`
	Ticket          string          `json:"ticket"`
	Seed            string          `json:"seed"`
	ReplicaID       string          `json:"replica_id"`
	CommD           string          `json:"comm_d"`
	CommR           string          `json:"comm_r"`
	CommC           string          `json:"comm_c"`
	CommRLast       string          `json:"comm_r_last"`
	VanillaProofs   []partitionJSON `json:"vanilla_proofs"`
}

type partitionJSON struct {
	Partition  int             `json:"partition"`
	Challenges []challengeJSON `json:"challenges"`
}

type challengeJSON struct {
	Node        uint64       `json:"node"`
	DataLeaf    string       `json:"data_leaf"`
	DataPath    []string     `json:"data_path"`
	Column      []string     `json:"column"`
	ColumnPath  []string     `json:"column_path"`
	DRGParents  []parentJSON `json:"drg_parents"`
	ExpParents  []parentJSON `json:"exp_parents"`
	ReplicaPath []string     `json:"replica_path"`
}

type parentJSON struct {
	Node   uint64   `json:"node"`
	Column []string `json:"column"`
	Path   []string `json:"path"`
}

func hex32(b []byte) string { return "0x" + hex.EncodeToString(b) }

func elemHex(e fr.Element) string { b := e.Bytes(); return hex32(b[:]) }

func elemsHex(v []fr.Element) []string {
	out := make([]string, len(v))
	for i := range v {
		out[i] = elemHex(v[i])
	}
	return out
}

// Encode writes the C1 as indented JSON.
func (c *C1) Encode(w io.Writer) error {
	j := c1JSON{
		Version: C1Version, RegisteredProof: c.Profile.Name, SectorID: c.SectorID,
		ProverID: hex32(c.ProverID[:]), Ticket: hex32(c.Ticket[:]), Seed: hex32(c.Seed[:]),
		ReplicaID: elemHex(c.ReplicaID), CommD: elemHex(c.CommD), CommR: elemHex(c.CommR),
		CommC: elemHex(c.CommC), CommRLast: elemHex(c.CommRLast),
	}
	parents := func(ops []ParentOpening) []parentJSON {
		out := make([]parentJSON, len(ops))
		for i, o := range ops {
			out[i] = parentJSON{Node: o.Node, Column: elemsHex(o.Column), Path: elemsHex(o.Path)}
		}
		return out
	}
	for _, pp := range c.Partitions {
		pj := partitionJSON{Partition: pp.Partition}
		for _, ch := range pp.Challenges {
			pj.Challenges = append(pj.Challenges, challengeJSON{
				Node: ch.Node, DataLeaf: elemHex(ch.DataLeaf), DataPath: elemsHex(ch.DataPath),
				Column: elemsHex(ch.Column), ColumnPath: elemsHex(ch.ColumnPath),
				DRGParents: parents(ch.DRG[:]), ExpParents: parents(ch.Exp[:]),
				ReplicaPath: elemsHex(ch.ReplicaPath),
			})
		}
		j.VanillaProofs = append(j.VanillaProofs, pj)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", " ")
	return enc.Encode(j)
}

// MaxC1Bytes is the largest C1 any profile accepts.
func MaxC1Bytes() int64 {
	var m int64
	for _, p := range profiles {
		m = max(m, p.MaxC1Bytes())
	}
	return m
}

// DecodeC1 reads a C1 strictly: unknown fields, trailing data, unknown
// profiles, wrong lengths, non-canonical field elements, missing partitions
// and oversize input are errors naming the field. It checks structure only;
// C1.Verify checks the proofs.
func DecodeC1(r io.Reader) (*C1, error) {
	limit := MaxC1Bytes()
	raw, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, fmt.Errorf("c1: read: %w", err)
	}
	if int64(len(raw)) > limit {
		return nil, &FieldError{Field: "(file)", Err: fmt.Errorf("%w: more than %d bytes, the largest profile's bound", ErrTooLarge, limit)}
	}
	if err := noDuplicateKeys(raw); err != nil {
		return nil, err
	}
	var j c1JSON
	if err := strictjson.Decode(raw, &j); errors.Is(err, strictjson.ErrTrailing) {
		return nil, &FieldError{Field: "(file)", Err: fmt.Errorf("%w: trailing data after the JSON object", ErrMalformed)}
	} else if err != nil {
		return nil, &FieldError{Field: jsonErrField(err), Err: fmt.Errorf("%w: %v", ErrMalformed, err)}
	}
	if j.Version != C1Version {
		return nil, &FieldError{Field: "version", Err: fmt.Errorf("%w: %d (want %d)", ErrVersion, j.Version, C1Version)}
	}
	p, err := LookupProfile(j.RegisteredProof)
	if err != nil {
		return nil, &FieldError{Field: "registered_proof", Err: err}
	}
	if int64(len(raw)) > p.MaxC1Bytes() {
		return nil, &FieldError{Field: "(file)", Err: fmt.Errorf("%w: %d bytes, the %s profile allows %d", ErrTooLarge, len(raw), p.Name, p.MaxC1Bytes())}
	}
	d := decoder{}
	c := &C1{Profile: p}
	c.SectorID = j.SectorID
	c.ProverID = d.bytes32("prover_id", j.ProverID)
	c.Ticket = d.bytes32("ticket", j.Ticket)
	c.Seed = d.bytes32("seed", j.Seed)
	c.ReplicaID = d.elem("replica_id", j.ReplicaID)
	c.CommD = d.elem("comm_d", j.CommD)
	c.CommR = d.elem("comm_r", j.CommR)
	c.CommC = d.elem("comm_c", j.CommC)
	c.CommRLast = d.elem("comm_r_last", j.CommRLast)
	if d.err != nil {
		return nil, d.err
	}
	if len(j.VanillaProofs) != p.Partitions {
		return nil, &FieldError{Field: "vanilla_proofs", Err: fmt.Errorf("%w: %d partitions, the %s profile has %d", ErrLength, len(j.VanillaProofs), p.Name, p.Partitions)}
	}
	for k, pj := range j.VanillaProofs {
		f := fmt.Sprintf("vanilla_proofs[%d]", k)
		if pj.Partition != k {
			return nil, &FieldError{Field: f + ".partition", Err: fmt.Errorf("%w: %d at position %d", ErrMalformed, pj.Partition, k)}
		}
		if len(pj.Challenges) != p.Challenges {
			return nil, &FieldError{Field: f + ".challenges", Err: fmt.Errorf("%w: %d challenges, want %d", ErrLength, len(pj.Challenges), p.Challenges)}
		}
		pp := PartitionProof{Partition: k, Challenges: make([]ChallengeProof, len(pj.Challenges))}
		for i, cj := range pj.Challenges {
			cf := fmt.Sprintf("%s.challenges[%d]", f, i)
			cp := &pp.Challenges[i]
			cp.Node = d.node(cf+".node", cj.Node, p)
			cp.DataLeaf = d.elem(cf+".data_leaf", cj.DataLeaf)
			cp.DataPath = d.elems(cf+".data_path", cj.DataPath, p.Depth)
			cp.Column = d.elems(cf+".column", cj.Column, p.Layers)
			cp.ColumnPath = d.elems(cf+".column_path", cj.ColumnPath, p.Depth)
			cp.ReplicaPath = d.elems(cf+".replica_path", cj.ReplicaPath, p.Depth)
			d.parents(cf+".drg_parents", cj.DRGParents, cp.DRG[:], p)
			d.parents(cf+".exp_parents", cj.ExpParents, cp.Exp[:], p)
			if d.err != nil {
				return nil, d.err
			}
		}
		c.Partitions = append(c.Partitions, pp)
	}
	return c, nil
}

// decoder keeps the first error, so field conversions read straight.
type decoder struct{ err error }

func (d *decoder) fail(field string, err error) {
	if d.err == nil {
		d.err = &FieldError{Field: field, Err: err}
	}
}

func (d *decoder) hexBytes(field, s string) []byte {
	if !strings.HasPrefix(s, "0x") || len(s) != 66 {
		d.fail(field, fmt.Errorf("%w: want 0x and 64 hex digits, got %d characters", ErrLength, len(s)))
		return nil
	}
	b, err := hex.DecodeString(s[2:])
	if err != nil {
		d.fail(field, fmt.Errorf("%w: %v", ErrMalformed, err))
		return nil
	}
	return b
}

func (d *decoder) bytes32(field, s string) (out [32]byte) {
	copy(out[:], d.hexBytes(field, s))
	return out
}

func (d *decoder) elem(field, s string) (e fr.Element) {
	b := d.hexBytes(field, s)
	if b == nil {
		return e
	}
	if err := e.SetBytesCanonical(b); err != nil {
		d.fail(field, fmt.Errorf("%w: %v", ErrOutOfField, err))
	}
	return e
}

func (d *decoder) elems(field string, v []string, n int) []fr.Element {
	if len(v) != n {
		d.fail(field, fmt.Errorf("%w: %d elements, want %d", ErrLength, len(v), n))
		return nil
	}
	out := make([]fr.Element, n)
	for i, s := range v {
		out[i] = d.elem(fmt.Sprintf("%s[%d]", field, i), s)
	}
	return out
}

func (d *decoder) node(field string, n uint64, p Profile) uint64 {
	if n >= p.Nodes() {
		d.fail(field, fmt.Errorf("%w: node %d outside a sector of %d nodes", ErrMalformed, n, p.Nodes()))
	}
	return n
}

func (d *decoder) parents(field string, v []parentJSON, dst []ParentOpening, p Profile) {
	if len(v) != len(dst) {
		d.fail(field, fmt.Errorf("%w: %d parents, want %d", ErrLength, len(v), len(dst)))
		return
	}
	for k, pj := range v {
		f := fmt.Sprintf("%s[%d]", field, k)
		dst[k] = ParentOpening{Node: d.node(f+".node", pj.Node, p),
			Column: d.elems(f+".column", pj.Column, p.Layers), Path: d.elems(f+".path", pj.Path, p.Depth)}
	}
}

// jsonErrField names the field of a JSON syntax or type error where the
// decoder says it.
func jsonErrField(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Field != "" {
		return te.Field
	}
	if s := err.Error(); strings.Contains(s, "unknown field") {
		return strings.TrimPrefix(s, "json: ")
	}
	return "(file)"
}

// noDuplicateKeys rejects a JSON document in which an object repeats a
// key: encoding/json keeps the last one silently, so two readers could
// see two different C1s in the same bytes.
func noDuplicateKeys(raw []byte) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	type frame struct {
		keys   map[string]bool
		object bool
		expect bool // the next token of an object is a key
	}
	var stack []*frame
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return nil // malformed JSON: the decoder reports it with its field
		}
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if top != nil && top.object && top.expect {
			if k, ok := tok.(string); ok {
				if top.keys[k] {
					return &FieldError{Field: k, Err: fmt.Errorf("%w: duplicate key", ErrMalformed)}
				}
				top.keys[k] = true
				top.expect = false
				continue
			}
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, &frame{keys: map[string]bool{}, object: true, expect: true})
			continue
		case json.Delim('['):
			stack = append(stack, &frame{})
			continue
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
		}
		// A value ended: in an object, a key comes next.
		if len(stack) > 0 && stack[len(stack)-1].object {
			stack[len(stack)-1].expect = true
		}
	}
}
