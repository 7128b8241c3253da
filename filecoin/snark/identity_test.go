package snark_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
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
func sameJob(t *testing.T, how string, forms []form, want job.SectorRef, canon []byte, identify func(raw []byte) (job.SectorRef, []byte, error)) {
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
			t.Errorf("%s, %s: identity %s %s (%d canonical bytes), want %s", how, f.name, ref.Identity(), ref.Profile, len(b), want.Identity())
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
	if want.C1Digest != job.Digest(canon) || !bytes.Equal(got, canon) || want.SectorID != sector || want.Profile != info.Name {
		t.Fatalf("the canonical C1 is not its own canonical form: %+v", want)
	}
	sameJob(t, "file", files, want, canon, func(raw []byte) (job.SectorRef, []byte, error) {
		return sc.Identify(ctx, "5.c1.json", raw, hints)
	})
	sameJob(t, "request", envelopes, want, canon, func(raw []byte) (job.SectorRef, []byte, error) {
		return sc.Admit(ctx, scheme.Request{Kind: scheme.KindPoRep, RegisteredProof: uint64(proofs.StackedDrg2KiBV1_1),
			MinerID: miner, SectorNumber: sector, SectorSize: info.SectorSize, Envelope: raw})
	})
	// What is stored is what a worker decodes, within the bound it reads by.
	if _, err := sc.Decode(got, want); err != nil {
		t.Fatalf("the canonical bytes do not decode: %v", err)
	}
	if limit, err := sc.MaxC1Bytes(want.Profile); err != nil || int64(len(got)) > limit {
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
		if ref.C1Digest == want.C1Digest {
			t.Errorf("%s: the identity of sector 5's C1 (%s)", name, ref.C1Digest)
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
	if want.C1Digest != job.Digest(canon) || !bytes.Equal(got, canon) {
		t.Fatalf("the test updater's input is not canonical: %+v", want)
	}
	files := []form{{"reindented", indented}, {"keys reversed", reversed}, {"hex in upper case with 0x", []byte(upper)}, {"base64 in lines", []byte(inLines)}}
	sameJob(t, "file", files, want, canon, func(raw []byte) (job.SectorRef, []byte, error) {
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
			t.Errorf("request, %s: identity %s %s (%d canonical bytes), want %s", name, ref.Identity(), ref.Profile, len(b), want.Identity())
		}
	}
	if _, err := u.Decode(got, want); err != nil {
		t.Fatalf("the canonical bytes do not decode: %v", err)
	}
	ref, _, err := u.Identify(ctx, "51.update.json", raws[1], scheme.Hints{})
	if err != nil {
		t.Fatal(err)
	}
	if ref.C1Digest == want.C1Digest {
		t.Errorf("sector 51's update has sector 50's identity (%s)", ref.C1Digest)
	}
}
