package snark_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/c2flow/c2flow/filecoin/c1"
	"github.com/c2flow/c2flow/filecoin/proofs"
	"github.com/c2flow/c2flow/filecoin/seal"
	"github.com/c2flow/c2flow/filecoin/snark"
	"github.com/c2flow/c2flow/internal/jsonform"
	"github.com/c2flow/c2flow/job"
	"github.com/c2flow/c2flow/scheme"
)

// commit2In is lotus-bench's and Curio's envelope, field for field, as
// encoding/json writes it.
type commit2In struct {
	SectorNum  int64
	Phase1Out  []byte
	SectorSize uint64
}

// forms returns b in other bytes of the same content: reindented, and its
// keys reversed.
func forms(t *testing.T, b []byte) (indented, reversed []byte) {
	t.Helper()
	indented, err := jsonform.Indent(b)
	if err != nil {
		t.Fatal(err)
	}
	reversed, err = jsonform.ReverseKeys(b)
	if err != nil {
		t.Fatal(err)
	}
	return indented, reversed
}

// form is one byte form of a job's input.
type form struct {
	name string
	raw  []byte
}

// sameJob checks that each form, through identify (a file's Identify, a
// request's Admit), is the job want with the canonical bytes canon, and
// is not canon's own bytes (else it would prove nothing).
func sameJob(t *testing.T, how string, forms []form, want job.Ref, canon []byte, identify func(raw []byte) (job.Ref, []byte, error)) {
	t.Helper()
	for _, f := range forms {
		if bytes.Equal(f.raw, canon) {
			t.Fatalf("%s, %s: the canonical bytes", how, f.name)
		}
		ref, b, err := identify(f.raw)
		if err != nil {
			t.Errorf("%s, %s: %v", how, f.name, err)
			continue
		}
		if ref != want || !bytes.Equal(b, canon) {
			t.Errorf("%s, %s: identity %s %s (%d canonical bytes), want %s", how, f.name, ref.Identity(), ref.Proof, len(b), want.Identity())
		}
	}
}

// base64Lines is b in base64 as a JSON string's content, in lines of 76
// as a MIME encoder writes it (encoding/json decodes it whole).
func base64Lines(b []byte) string {
	b64 := base64.StdEncoding.EncodeToString(b)
	var lines []string
	for len(b64) > 76 {
		lines, b64 = append(lines, b64[:76]), b64[76:]
	}
	return strings.Join(append(lines, b64), `\n`)
}

// A Filecoin C1's identity is its content: the same C1 bare or in a
// Commit2In envelope, reindented, its keys reversed, its base64 in lines,
// submitted as a file (Identify) or sent by Curio (Admit), is one sector
// identity, whose digest is that of the canonical bytes (the bare C1 as
// filecoin-ffi writes it) returned for storage, which Decode reads. Another
// C1 of the same sector, or another sector, is another identity.
func TestPoRepIdentityIsContent(t *testing.T) {
	ctx := context.Background()
	const miner, sector = 1000, 5
	prover := proofs.ProverID(miner)
	sealOf := func(p seal.SealParams) *c1.SealCommitPhase1Output {
		s, err := seal.Seal(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		return s.C1
	}
	c := sealOf(seal.TestParams(proofs.StackedDrg2KiBV1_1, prover, sector))
	canon, err := c1.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	info, err := proofs.Lookup(proofs.StackedDrg2KiBV1_1)
	if err != nil {
		t.Fatal(err)
	}
	wrap := func(phase1 []byte) []byte {
		b, err := json.Marshal(commit2In{SectorNum: sector, Phase1Out: phase1, SectorSize: info.SectorSize})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	bareIndented, bareReversed := forms(t, canon)
	envelope := wrap(canon)
	envIndented, envReversed := forms(t, envelope)
	inLines := []byte(strings.Replace(string(envelope), base64.StdEncoding.EncodeToString(canon), base64Lines(canon), 1))
	envelopes := []form{
		{"Commit2In", envelope},
		{"Commit2In reindented", envIndented},
		{"Commit2In, keys reversed", envReversed},
		{"Commit2In of the reindented C1", wrap(bareIndented)},
		{"Commit2In of the C1 with keys reversed", wrap(bareReversed)},
		{"Commit2In, base64 in lines", inLines},
	}
	files := append([]form{{"bare C1 reindented", bareIndented}, {"bare C1, keys reversed", bareReversed}}, envelopes...)

	sc := snark.New(snark.Params{}, nil)
	hints := scheme.Hints{ProverID: hex.EncodeToString(prover[:])}
	want, got, err := sc.Identify(ctx, "5.c1.json", canon, hints)
	if err != nil {
		t.Fatal(err)
	}
	if want.InputDigest != job.Digest(canon) || !bytes.Equal(got, canon) || want.SectorID != sector || want.Proof != info.Name {
		t.Fatalf("the canonical C1 is not its own canonical form: %+v", want)
	}
	sameJob(t, "file", files, want, canon, func(raw []byte) (job.Ref, []byte, error) {
		return sc.Identify(ctx, "5.c1.json", raw, hints)
	})
	sameJob(t, "request", envelopes, want, canon, func(raw []byte) (job.Ref, []byte, error) {
		return sc.Admit(ctx, scheme.Request{Kind: scheme.KindPoRep, RegisteredProof: uint64(proofs.StackedDrg2KiBV1_1),
			MinerID: miner, SectorNumber: sector, SectorSize: info.SectorSize, Envelope: raw})
	})
	// What is stored is what a worker decodes, within the bound it reads by.
	if _, err := sc.Decode(got, want); err != nil {
		t.Fatalf("the canonical bytes do not decode: %v", err)
	}
	if limit, err := sc.MaxC1Bytes(want.Proof); err != nil || int64(len(got)) > limit {
		t.Errorf("%d canonical bytes, the workers' bound %d (%v)", len(got), limit, err)
	}

	other := seal.TestParams(proofs.StackedDrg2KiBV1_1, prover, sector)
	other.Ticket[0] ^= 1
	for name, p := range map[string]seal.SealParams{"sector 5 with another ticket": other, "sector 6": seal.TestParams(proofs.StackedDrg2KiBV1_1, prover, 6)} {
		raw, err := c1.Marshal(sealOf(p))
		if err != nil {
			t.Fatal(err)
		}
		ref, _, err := sc.Identify(ctx, "x.c1.json", raw, scheme.Hints{ProverID: hints.ProverID, SectorID: "6"})
		if p.SectorID == sector {
			ref, _, err = sc.Identify(ctx, "5.c1.json", raw, hints)
		}
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if ref.InputDigest == want.InputDigest {
			t.Errorf("%s: the identity of sector 5's C1 (%s)", name, ref.InputDigest)
		}
	}
}

// An update's identity is its content: the same update input reindented,
// its keys reversed, its hex in upper case with 0x, its base64 in lines,
// submitted as a file (Identify) or sent by Curio with its vanilla proofs
// as a list or as snap-vproof.json (Admit), is one sector identity, whose
// digest is that of the canonical bytes returned for storage, which Decode
// reads. Another sector's update is another identity.
func TestUpdateIdentityIsContent(t *testing.T) {
	ctx := context.Background()
	const miner = 1000
	raws := updateInputsOf(t, proofs.ProverID(miner), 50, 2)
	canon := raws[0]
	in, _, err := snark.DecodeUpdateInput(canon)
	if err != nil {
		t.Fatal(err)
	}
	indented, reversed := forms(t, canon)
	var fields map[string]any
	if err := json.Unmarshal(canon, &fields); err != nil {
		t.Fatal(err)
	}
	upper := string(canon)
	for _, k := range []string{"prover_id", "comm_r_old", "comm_r_new", "comm_d_new"} {
		h := fields[k].(string)
		upper = strings.Replace(upper, `"`+h+`"`, `"0x`+strings.ToUpper(h)+`"`, 1)
	}
	inLines := string(canon)
	for _, v := range in.Vanilla {
		inLines = strings.Replace(inLines, base64.StdEncoding.EncodeToString(v), base64Lines(v), 1)
	}

	u := snark.New(snark.Params{}, nil).Update()
	want, got, err := u.Identify(ctx, "50.update.json", canon, scheme.Hints{})
	if err != nil {
		t.Fatal(err)
	}
	if want.InputDigest != job.Digest(canon) || !bytes.Equal(got, canon) {
		t.Fatalf("the test updater's input is not canonical: %+v", want)
	}
	files := []form{{"reindented", indented}, {"keys reversed", reversed}, {"hex in upper case with 0x", []byte(upper)}, {"base64 in lines", []byte(inLines)}}
	sameJob(t, "file", files, want, canon, func(raw []byte) (job.Ref, []byte, error) {
		return u.Identify(ctx, "50.update.json", raw, scheme.Hints{})
	})
	curio, err := json.Marshal(in.Vanilla)
	if err != nil {
		t.Fatal(err)
	}
	curioIndented, err := jsonform.Indent(curio)
	if err != nil {
		t.Fatal(err)
	}
	for name, r := range map[string]scheme.Request{"vanilla_proofs": {Vanilla: in.Vanilla}, "snap-vproof.json reindented": {Envelope: curioIndented}} {
		r.Kind, r.RegisteredProof, r.MinerID, r.SectorNumber, r.SectorSize = scheme.KindSnap, uint64(in.Proof.Proof), miner, 50, in.Proof.SectorSize
		r.CommROld, r.CommRNew, r.CommDNew = in.CommROld[:], in.CommRNew[:], in.CommDNew[:]
		ref, b, err := u.Admit(ctx, r)
		if err != nil {
			t.Errorf("request, %s: %v", name, err)
			continue
		}
		if ref != want || !bytes.Equal(b, canon) {
			t.Errorf("request, %s: identity %s %s (%d canonical bytes), want %s", name, ref.Identity(), ref.Proof, len(b), want.Identity())
		}
	}
	if _, err := u.Decode(got, want); err != nil {
		t.Fatalf("the canonical bytes do not decode: %v", err)
	}
	ref, _, err := u.Identify(ctx, "51.update.json", raws[1], scheme.Hints{})
	if err != nil {
		t.Fatal(err)
	}
	if ref.InputDigest == want.InputDigest {
		t.Errorf("sector 51's update has sector 50's identity (%s)", ref.InputDigest)
	}
}

// Decoding: a Filecoin input decoded strictly and bound to its sector.
// The scheme owns exactly the supported registered seal proofs, and
// bounds a C1 by the decoder's bound for either form.
func TestOwnsAndMaxC1Bytes(t *testing.T) {
	s := snark.New(snark.Params{Dir: t.TempDir()}, nil)
	for _, n := range proofs.Names() {
		if !s.Owns(n) {
			t.Errorf("does not own %s", n)
		}
	}
	for _, n := range []string{"", "2KiB", "StackedDrg2KiBV1_2_Feat_NonInteractivePoRep", "StackedDrgWinning2KiBV1", "stackeddrg2kibv1"} {
		if s.Owns(n) {
			t.Errorf("owns %q", n)
		}
	}
	set := scheme.Set{s}
	if sc, err := set.For("StackedDrg32GiBV1_1"); err != nil || sc.Name() != "filecoin" {
		t.Fatalf("Set.For: %v, %v", sc, err)
	}
	n, err := s.MaxC1Bytes("StackedDrg32GiBV1_1")
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := c1.MaxSize(proofs.StackedDrg32GiBV1_1)
	// A sparse 32GiB C1 is 38.6 MB (README); the bound must take a
	// Commit2In wrapper of the longest one.
	if n <= raw || n < 4*38_600_000/3 {
		t.Fatalf("MaxC1Bytes(32GiB) = %d (raw bound %d)", n, raw)
	}
	if _, err := s.MaxC1Bytes("2KiB"); err == nil {
		t.Fatal("MaxC1Bytes of a foreign proof")
	}
	t.Logf("MaxC1Bytes: 32GiB %d, raw %d", n, raw)
}

// Decode binds a C1 to its sector: the right identity decodes (raw and
// Commit2In) and verifies; a wrong prover id, sector id, declared proof or
// SectorNum, and garbage, are errors naming what is wrong.
func TestDecodeIdentity(t *testing.T) {
	ctx := context.Background()
	s := snark.New(snark.Params{Dir: t.TempDir()}, nil)
	sealed := seal2KiB(t, proofs.StackedDrg2KiBV1_1, 7)
	raw, err := c1.Marshal(sealed.C1)
	if err != nil {
		t.Fatal(err)
	}
	wrapped, err := c1.MarshalCommit2In(7, sealed.C1)
	if err != nil {
		t.Fatal(err)
	}
	id := job.Ref{ProverID: seal.Hex32(testProver), SectorID: 7, Proof: "StackedDrg2KiBV1_1"}
	for name, b := range map[string][]byte{"raw": raw, "Commit2In": wrapped} {
		sec, err := s.Decode(b, id)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if sec.Proof() != "StackedDrg2KiBV1_1" || sec.Partitions() != 1 {
			t.Fatalf("%s: proof %s, %d partitions", name, sec.Proof(), sec.Partitions())
		}
		if err := sec.Verify(ctx); err != nil {
			t.Fatalf("%s: verify: %v", name, err)
		}
		pub, ok := sec.(*snark.Sector).Public()
		if !ok || pub != sealed.Public {
			t.Fatalf("%s: public data %+v, sealed %+v", name, pub, sealed.Public)
		}
	}
	anyProof := id
	anyProof.Proof = ""
	if _, err := s.Decode(raw, anyProof); err != nil {
		t.Fatalf("undeclared proof: %v", err)
	}

	otherProver := testProver
	otherProver[0] ^= 1
	for _, c := range []struct {
		name string
		raw  []byte
		id   job.Ref
		want []string
		is   error
	}{
		{"wrong prover id", raw, job.Ref{ProverID: seal.Hex32(otherProver), SectorID: 7}, []string{"replica_id", "sector 7"}, seal.ErrReplicaID},
		{"wrong sector id", raw, job.Ref{ProverID: seal.Hex32(testProver), SectorID: 8}, []string{"replica_id", "sector 8"}, seal.ErrReplicaID},
		{"wrong declared proof (V1)", raw, job.Ref{ProverID: seal.Hex32(testProver), SectorID: 7, Proof: "StackedDrg2KiBV1"}, []string{"declared proof StackedDrg2KiBV1", "registered_proof"}, c1.ErrProofMismatch},
		{"wrong declared size", raw, job.Ref{ProverID: seal.Hex32(testProver), SectorID: 7, Proof: "StackedDrg8MiBV1_1"}, []string{"declared proof StackedDrg8MiBV1_1"}, c1.ErrProofMismatch},
		{"foreign declared proof", raw, job.Ref{ProverID: seal.Hex32(testProver), SectorID: 7, Proof: "2KiB"}, []string{"declared proof", `"2KiB"`}, proofs.ErrUnknown},
		{"Commit2In SectorNum", wrapped, job.Ref{ProverID: seal.Hex32(testProver), SectorID: 9}, []string{"SectorNum is 7", "id is 9"}, nil},
		{"no prover id", raw, job.Ref{SectorID: 7}, []string{"no prover id"}, nil},
		{"bad prover id", raw, job.Ref{ProverID: "0x12", SectorID: 7}, []string{"prover id", "0x12"}, nil},
		{"garbage", []byte("not a C1"), id, []string{"c1: "}, c1.ErrSyntax},
		{"unknown field", bytes.Replace(raw, []byte(`"seed":`), []byte(`"extra":1,"seed":`), 1), id, []string{"extra"}, c1.ErrUnknownField},
		{"bad domain", bytes.Replace(raw, []byte(`"comm_r":[`), []byte(`"comm_r":[256,`), 1), id, []string{"comm_r"}, nil},
	} {
		_, err := s.Decode(c.raw, c.id)
		t.Logf("%s: %v", c.name, err)
		if err == nil {
			t.Errorf("%s: decoded", c.name)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error lacks %q", c.name, w)
			}
		}
		if c.is != nil && !errors.Is(err, c.is) {
			t.Errorf("%s: error is not %v", c.name, c.is)
		}
	}

	// A C1 of its sector whose seed is not the one its proofs were made
	// for decodes (the seed does not enter the replica id) and fails
	// Verify, naming the failure.
	bad := *sealed.C1
	bad.Seed[3] ^= 1
	b, err := c1.Marshal(&bad)
	if err != nil {
		t.Fatal(err)
	}
	sec, err := s.Decode(b, id)
	if err != nil {
		t.Fatal(err)
	}
	err = sec.Verify(ctx)
	t.Logf("other seed: %v", err)
	if !errors.Is(err, seal.ErrChallenge) {
		t.Fatalf("other seed: %v", err)
	}
}

// Identifying files that a sectors.json lists.
// Identify (what `c2flow submit` runs) checks a Filecoin C1 against every
// public datum its sectors.json gives, as `c2flow c1 check` does: a
// comm_r or proof the C1 does not match is refused, not submitted.
func TestIdentifyChecksSectorsJSON(t *testing.T) {
	s, err := seal.Seal(context.Background(), seal.TestParams(proofs.StackedDrg2KiBV1_1, proofs.ProverID(1000), 3))
	if err != nil {
		t.Fatal(err)
	}
	var raw bytes.Buffer
	if err := c1.Encode(&raw, s.C1); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name   string
		change func(*seal.Manifest)
		want   string // "" accepts
	}{
		{"as sealed", func(*seal.Manifest) {}, ""},
		{"comm_r edited", func(m *seal.Manifest) { m.Sectors[0].CommR = "0x" + strings.Repeat("11", 32) }, "does not verify natively"},
		{"another proof", func(m *seal.Manifest) { m.Proof = "StackedDrg8MiBV1_1" }, "StackedDrg8MiBV1_1"},
		{"another prover", func(m *seal.Manifest) { m.Sectors[0].ProverID = "0x" + strings.Repeat("22", 32) }, "replica"},
	} {
		dir := t.TempDir()
		file := filepath.Join(dir, "3.c1.json")
		if err := os.WriteFile(file, raw.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		m := &seal.Manifest{Proof: "StackedDrg2KiBV1_1", Sectors: []seal.ManifestEntry{seal.EntryOf(s.Public, "3.c1.json")}}
		c.change(m)
		if err := seal.WriteManifest(filepath.Join(dir, "sectors.json"), m); err != nil {
			t.Fatal(err)
		}
		ref, _, err := snark.New(snark.Params{}, nil).Identify(context.Background(), file, raw.Bytes(), scheme.Hints{})
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.want == "" && (ref.SectorID != 3 || ref.Proof != "StackedDrg2KiBV1_1"):
			t.Errorf("%s: %+v", c.name, ref)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: %v, want an error saying %q", c.name, err, c.want)
		}
	}
}
