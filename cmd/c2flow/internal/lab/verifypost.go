package lab

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/c2flow/c2flow/cmd/c2flow/internal/cli"
	"github.com/c2flow/c2flow/cmd/c2flow/internal/direct"
	"github.com/c2flow/c2flow/filecoin/circuit"
	"github.com/c2flow/c2flow/filecoin/groth"
	"github.com/c2flow/c2flow/filecoin/hash"
	"github.com/c2flow/c2flow/filecoin/merkle"
	"github.com/c2flow/c2flow/filecoin/post"
	"github.com/c2flow/c2flow/filecoin/proofs"
	"github.com/c2flow/c2flow/filecoin/seal"
	"github.com/c2flow/c2flow/internal/clip"
	"github.com/c2flow/c2flow/registry"
	"github.com/c2flow/c2flow/scheme"
)

// RunVerifyPost verifies WindowPoSt and WinningPoSt proofs, one JSON
// record a line, as Filecoin's verify_window_post and verify_winning_post
// do.
func RunVerifyPost(ctx context.Context, args []string) error {
	return verifyPost(ctx, args, os.Stdout, os.Stderr)
}

// postVerifier verifies the partition proofs of a parsed record.
type postVerifier interface {
	// verify checks proofs[k], partition k's Groth16 proof, against the
	// public inputs of the replicas (in the proof's order) for each k.
	verify(ctx context.Context, info proofs.PoStProofInfo, rec *postRecord, replicas []post.PublicSector, proofs [][]byte) error
	describe() string
}

// verifyPost verifies PoSt records and prints one line per record to out:
// "FILE:LINE: ok (...)" or "FILE:LINE: invalid: REASON". It returns an
// error when any record is invalid or none was read.
func verifyPost(ctx context.Context, args []string, out, logw io.Writer) error {
	fs := cli.NewFlags("verify-post")
	vkPath := fs.String("vk", "", "the PoSt circuit's verifying key, in bellperson's .vk format (v28-proof-of-spacetime-fallback-...vk); every record must be of its circuit")
	params := fs.String("filecoin-params", "", "Filecoin's parameter directory: each record's verifying key found there by its name (parameters.json)")
	files, err := cli.ParseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if (*vkPath == "") == (*params == "") || len(files) == 0 {
		fs.Usage()
		return errors.New("verify-post: usage: c2flow verify-post --vk FILE | --filecoin-params DIR RECORDS... (\"-\": stdin)")
	}
	var v postVerifier
	if *vkPath != "" {
		vk, err := groth.ReadVerifyingKeyFile(*vkPath)
		if err != nil {
			return fmt.Errorf("verify-post: %w", err)
		}
		v = &vkPoStVerifier{pvk: vk.Prepare(), path: *vkPath}
	} else {
		v = newSchemePoStVerifier(*params)
	}
	var ok, invalid int
	t0 := time.Now()
	var ferr error
	for _, name := range files {
		ferr = eachRecordLine(ctx, "verify-post", name, func(n int, line []byte, size int64) {
			if len(line) == 0 && size <= maxRecordLine {
				return
			}
			desc, err := checkPostLine(ctx, v, line, size)
			if err != nil {
				invalid++
				fmt.Fprintf(out, "%s:%d: invalid: %v\n", name, n, err)
				return
			}
			ok++
			fmt.Fprintf(out, "%s:%d: ok (%s)\n", name, n, desc)
		})
		if ferr != nil {
			break
		}
	}
	fmt.Fprintf(logw, "verify-post: %d ok, %d invalid in %v (%s)\n", ok, invalid, time.Since(t0).Round(time.Millisecond), v.describe())
	switch {
	case ferr != nil:
		return ferr
	case invalid > 0:
		return fmt.Errorf("verify-post: %d of %d records invalid", invalid, ok+invalid)
	case ok == 0:
		return errors.New("verify-post: no record verified")
	}
	return nil
}

// checkPostLine parses and verifies one record line; it describes a valid
// one.
func checkPostLine(ctx context.Context, v postVerifier, line []byte, size int64) (string, error) {
	if size > maxRecordLine {
		return "", fmt.Errorf("line of %d bytes, over the %d MiB a record may take", size, maxRecordLine>>20)
	}
	rec, info, err := parsePostRecord(line)
	if err != nil {
		return "", err
	}
	replicas := make([]post.PublicSector, len(rec.Replicas))
	for i, r := range rec.Replicas {
		replicas[i] = post.PublicSector{ID: r.SectorID, CommR: merkle.Node(r.CommR)}
	}
	parts := make([][]byte, len(rec.Proof)/proofs.SinglePartitionProofLen)
	for k := range parts {
		parts[k] = rec.Proof[k*proofs.SinglePartitionProofLen : (k+1)*proofs.SinglePartitionProofLen]
	}
	if err := v.verify(ctx, info, rec, replicas, parts); err != nil {
		return "", fmt.Errorf("%s of %d sectors: %w", info.Name, len(replicas), err)
	}
	return fmt.Sprintf("%s, %d sectors, %d partitions", info.Name, len(replicas), len(parts)), nil
}

// postFields are a record's fields; each is required.
var postFields = []string{"registered_proof", "prover_id", "randomness", "replicas", "proof"}

// parsePostRecord decodes a verify-post record strictly (every field
// present, none unknown, byte values 0 to 255 of the right count, the
// prover id and randomness field elements as Filecoin's
// as_safe_commitment wants them) and checks its shape before anything is
// verified: the proof is whole partition proofs, as many as the replicas
// take (window: SectorCount a partition; winning: one replica, one
// proof), the replicas in increasing sector order without repeats, as
// verify_window_post's BTreeMap holds them.
func parsePostRecord(line []byte) (*postRecord, proofs.PoStProofInfo, error) {
	var none proofs.PoStProofInfo
	var m map[string]json.RawMessage
	if err := json.Unmarshal(line, &m); err != nil {
		return nil, none, fmt.Errorf("not a JSON object: %w", err)
	}
	raw, err := requireFields(m, postFields, "record")
	if err != nil {
		return nil, none, err
	}
	info, err := parsePoStName(raw[0])
	if err != nil {
		return nil, none, err
	}
	rec := &postRecord{RegisteredProof: info.Name}
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
	rec.Replicas = make([]postReplica, len(reps))
	for i, r := range reps {
		if rec.Replicas[i], err = parsePostReplica(r); err != nil {
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

// parsePostReplica decodes {"sector_id": N, "comm_r": [32 bytes]}.
func parsePostReplica(raw json.RawMessage) (postReplica, error) {
	var r postReplica
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
func sortedReplicas(rs []postReplica) error {
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

// vkPoStVerifier verifies with one verifying key (--vk): the records must
// be of its circuit.
type vkPoStVerifier struct {
	pvk  *groth.PreparedVerifyingKey
	path string
}

func (v *vkPoStVerifier) describe() string {
	return fmt.Sprintf("verifying key %s, %d public inputs", v.path, v.pvk.VK.NumPublic())
}

func (v *vkPoStVerifier) verify(_ context.Context, info proofs.PoStProofInfo, rec *postRecord, replicas []post.PublicSector, parts [][]byte) error {
	if got, want := v.pvk.VK.NumPublic(), circuit.PoStShapeOf(info).NumInputs()-1; got != want {
		return fmt.Errorf("the verifying key takes %d public inputs, a %s partition has %d: not this proof's key", got, info.Name, want)
	}
	ps := make([]groth.Proof, len(parts))
	inputs := make([][]fr.Element, len(parts))
	for k, b := range parts {
		var err error
		if ps[k], err = groth.DecodeProof(b); err != nil {
			return fmt.Errorf("partition %d: %w", k, err)
		}
		if inputs[k], err = post.PublicInputs(info, rec.Randomness, replicas, k); err != nil {
			return fmt.Errorf("partition %d: %w", k, err)
		}
	}
	return v.pvk.VerifyPartitions(ps, inputs)
}

// schemePoStVerifier verifies with the PoSt scheme's verifiers over a
// Filecoin parameter directory (--filecoin-params): each record's key is
// located by its proof's published name (digest-checked against
// parameters.json) or, for a development setup, its IC count, and loaded
// once. It verifies partition by partition, as the pipeline verifies a
// partition's job (its scheme's PartitionPublic: chunk k of the
// replicas).
type schemePoStVerifier struct {
	set       scheme.Set
	dir       string
	verifiers map[string]scheme.Verifier
}

func newSchemePoStVerifier(dir string) *schemePoStVerifier {
	return &schemePoStVerifier{set: registry.Schemes(registry.Options{FilecoinParams: dir}), dir: dir, verifiers: map[string]scheme.Verifier{}}
}

func (v *schemePoStVerifier) describe() string {
	var keys []string
	for name, ver := range v.verifiers {
		keys = append(keys, name+": "+direct.DescribeKey(ver))
	}
	slices.Sort(keys)
	return fmt.Sprintf("Filecoin parameters %s; %s", v.dir, strings.Join(keys, "; "))
}

func (v *schemePoStVerifier) verify(ctx context.Context, info proofs.PoStProofInfo, rec *postRecord, replicas []post.PublicSector, parts [][]byte) error {
	sc, err := v.set.For(info.Name)
	if err != nil {
		return err
	}
	ver := v.verifiers[info.Name]
	if ver == nil {
		if ver, err = sc.Verifier(ctx, info.Name); err != nil {
			return fmt.Errorf("no verifying key: %w", err)
		}
		v.verifiers[info.Name] = ver
	}
	pp, err := scheme.As[partitionPublic](sc, "PoSt public data")
	if err != nil {
		return err
	}
	for k, b := range parts {
		chunk := replicas
		if info.Type == proofs.PoStWindow {
			chunk = replicas[k*info.SectorCount : min(len(replicas), (k+1)*info.SectorCount)]
		}
		sec, err := pp.PartitionPublic(info, rec.ProverID, rec.Randomness, k, chunk)
		if err != nil {
			return fmt.Errorf("partition %d: %w", k, err)
		}
		if err := ver.VerifyC2(sec, b); err != nil {
			return fmt.Errorf("partition %d: %w", k, err)
		}
	}
	return nil
}

// partitionPublic is what verify-post asks of the PoSt scheme: a
// partition's public data alone, without vanilla proofs.
type partitionPublic interface {
	PartitionPublic(info proofs.PoStProofInfo, proverID, randomness [32]byte, k int, replicas []post.PublicSector) (scheme.Sector, error)
}
