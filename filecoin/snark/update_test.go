package snark_test

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/c2flow/c2flow/filecoin/circuit"
	"github.com/c2flow/c2flow/filecoin/fctest"
	"github.com/c2flow/c2flow/filecoin/groth"
	"github.com/c2flow/c2flow/filecoin/paramfiles/paramtest"
	"github.com/c2flow/c2flow/filecoin/proofs"
	"github.com/c2flow/c2flow/filecoin/snark"
	"github.com/c2flow/c2flow/filecoin/update"
	"github.com/c2flow/c2flow/job"
	"github.com/c2flow/c2flow/prover/packed"
	"github.com/c2flow/c2flow/scheme"
)

const update2KiB = snark.UpdatePrefix + "StackedDrg2KiBV1"

// updateInputs runs the test updater for n 2KiB sectors of testProver from
// first and returns their UpdateInput files' bytes.
func updateInputs(t *testing.T, first uint64, n int) [][]byte {
	t.Helper()
	return updateInputsOf(t, testProver, first, n)
}

// updateInputsOf is updateInputs of prover's sectors.
func updateInputsOf(t *testing.T, prover [32]byte, first uint64, n int) [][]byte {
	t.Helper()
	u := snark.New(snark.Params{}, nil).Update()
	files, err := u.SealTest(context.Background(), scheme.SealRequest{Proof: update2KiB, Prover: prover, First: first, N: n, Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	var out [][]byte
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, b)
	}
	return out
}

// A 2KiB update proved through the update scheme as the pipeline's
// workers do it: the test updater's input identified (bound to its
// prover and sector, every vanilla proof verified natively), the
// development setup of the update circuit made through EnsureKeys, the
// partition synthesized (its public inputs the commitments'), proved,
// verified, assembled into a 192-byte proof that the .vk accepts (and
// the verifier over the .vk alone); other commitments, a flipped bit
// and another sector's input are refused.
func TestUpdateScheme2KiB(t *testing.T) {
	ctx := context.Background()
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	raws := updateInputs(t, 30, 2)
	set := snark.Schemes(snark.Params{Dir: fctest.DevParams(), ShapeDir: t.TempDir()}, log)
	sc, ref, canon, err := set.Identify(ctx, "30.update.json", raws[0], scheme.Hints{})
	if err != nil {
		t.Fatal(err)
	}
	if sc.Name() != "filecoin-update" || ref.Proof != update2KiB || ref.SectorID != 30 || ref.ProverID != hex.EncodeToString(testProver[:]) || ref.InputDigest != job.Digest(canon) {
		t.Fatalf("identified as %s %+v", sc.Name(), ref)
	}
	// The test updater writes canonical inputs.
	if !bytes.Equal(canon, raws[0]) {
		t.Errorf("the test updater's input is not canonical: %d bytes, canonical %d", len(raws[0]), len(canon))
	}
	t0 := time.Now()
	if err := set.EnsureKeys(ctx, []string{ref.Proof}, true, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	t.Logf("update development setup in place in %v", time.Since(t0).Round(time.Millisecond))
	sec, err := sc.Decode(raws[0], ref)
	if err != nil {
		t.Fatal(err)
	}
	proof, times := proveOnCPU(ctx, t, sc, sec)
	if len(proof) != groth.ProofSize || len(times) != 1 {
		t.Fatalf("%d-byte proof, %d partitions", len(proof), len(times))
	}
	t.Logf("2KiB update partition: synthesis %v, device %v, finalize %v", times[0].Synth.Round(time.Millisecond), times[0].Device.Round(time.Millisecond), times[0].Finalize.Round(time.Millisecond))

	// The verifier over the .vk alone (another process's) accepts it.
	v, err := snark.Schemes(snark.Params{Dir: fctest.DevParams(), ShapeDir: t.TempDir()}, nil)[1].Verifier(ctx, ref.Proof)
	if err != nil {
		t.Fatal(err)
	}
	if err := v.VerifyC2(sec, proof); err != nil {
		t.Fatalf("the update proof does not verify with the .vk alone: %v", err)
	}
	bad := bytes.Clone(proof)
	bad[100] ^= 4
	if v.VerifyC2(sec, bad) == nil {
		t.Error("a flipped bit verified")
	}
	if v.VerifyC2(sec, proof[:100]) == nil {
		t.Error("a short proof verified")
	}
	// Another update's commitments (sector 31) refuse it.
	ref31 := job.NewRef(testProver, 31, raws[1])
	sec31, err := sc.Decode(raws[1], ref31)
	if err != nil {
		t.Fatal(err)
	}
	if err := v.VerifyC2(sec31, proof); err == nil {
		t.Error("sector 30's update proof verified against sector 31's commitments")
	}
	// An input stored under another sector's identity is refused.
	if _, err := sc.Decode(raws[1], ref); err == nil || !strings.Contains(err.Error(), "not of sector 30") || !errors.Is(err, snark.ErrBadUpdateInput) {
		t.Errorf("sector 31's input decoded as sector 30's: %v", err)
	}
	if !strings.Contains(logs.String(), "DEVELOPMENT SETUP") {
		t.Error("the logs do not say DEVELOPMENT SETUP")
	}
}

// A bad update input is refused by Identify, the error naming what is
// wrong: a vanilla proof tampered with names its partition, challenge and
// tree; a commitment that is not the vanilla proofs', a missing field, a
// field too many, a partition short, and hints that disagree with the
// input are each refused.
func TestUpdateInputRefused(t *testing.T) {
	ctx := context.Background()
	raw := updateInputs(t, 40, 1)[0]
	set := snark.Schemes(snark.Params{}, nil)
	edit := func(f func(m map[string]any)) []byte {
		var m map[string]any
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatal(err)
		}
		f(m)
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	in, parts, err := snark.DecodeUpdateInput(raw)
	if err != nil {
		t.Fatal(err)
	}
	// A sibling of challenge 3's tree D path changed.
	p := *parts[0]
	p.Challenges = append([]update.ChallengeProof(nil), p.Challenges...)
	d := *p.Challenges[3].DNew
	d.Base = append(d.Base[:0:0], d.Base...)
	d.Base[2].Hashes = append(d.Base[2].Hashes[:0:0], d.Base[2].Hashes...)
	d.Base[2].Hashes[0][0] ^= 1
	p.Challenges[3].DNew = &d
	tampered := *in
	tampered.Vanilla = [][]byte{p.Bincode()}
	tamperedRaw, err := tampered.Encode()
	if err != nil {
		t.Fatal(err)
	}
	other := *in
	other.CommDNew[0] ^= 1
	otherRaw, err := other.Encode()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		raw  []byte
		h    scheme.Hints
		want string
	}{
		{"tampered tree D path", tamperedRaw, scheme.Hints{}, "partition 0: challenge 3"},
		{"another comm_d_new", otherRaw, scheme.Hints{}, "partition 0"},
		{"no comm_r_new", edit(func(m map[string]any) { delete(m, "comm_r_new") }), scheme.Hints{}, "no comm_r_new"},
		{"an unknown field", edit(func(m map[string]any) { m["h"] = 3 }), scheme.Hints{}, `unknown field "h"`},
		{"no vanilla proofs", edit(func(m map[string]any) { m["vanilla_proofs"] = []string{} }), scheme.Hints{}, "0 vanilla proofs, StackedDrg2KiBV1 has 1 partitions"},
		{"a truncated vanilla proof", edit(func(m map[string]any) { m["vanilla_proofs"] = []string{"AAAA"} }), scheme.Hints{}, "vanilla_proofs[0]"},
		{"an unknown update proof", edit(func(m map[string]any) { m["registered_update_proof"] = "StackedDrg2KiBV1_1" }), scheme.Hints{}, "registered_update_proof"},
		{"a comm_r_old not in the field", edit(func(m map[string]any) { m["comm_r_old"] = strings.Repeat("ff", 32) }), scheme.Hints{}, "not a field element"},
		{"another sector's hint", raw, scheme.Hints{SectorID: "41"}, "--sector-id 41, but the update input is of sector 40"},
		{"another prover's hint", raw, scheme.Hints{ProverID: strings.Repeat("ab", 32)}, "but the update input is of prover"},
	} {
		_, _, _, err := set.Identify(ctx, "40.update.json", c.raw, c.h)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error containing %q", c.name, err, c.want)
		}
	}
	if _, _, _, err := set.Identify(ctx, "40.update.json", raw, scheme.Hints{ProverID: hex.EncodeToString(testProver[:]), SectorID: "40"}); err != nil {
		t.Errorf("the input with its own hints: %v", err)
	}
}

// The update circuit's known counts (the budget's) are the recorded
// 2KiB circuit's, and its constraints tests/circuit.rs' 1,705,039 (plus
// the 5 per-input constraints); an update input is well under its bound;
// and the update .vk is found under the name rust-fil-proofs'
// parameters.json publishes (update.CacheID) in a directory that lists it.
func TestKnownUpdateCounts(t *testing.T) {
	info, err := proofs.UpdateByName("StackedDrg2KiBV1")
	if err != nil {
		t.Fatal(err)
	}
	b, err := snark.New(snark.Params{}, nil).Update().PartitionBytes(context.Background(), snark.UpdateProfile(info))
	if err != nil {
		t.Fatal(err)
	}
	// The packed assignment's bound (every value a field element) over
	// inputs + aux, and the overhead.
	want := packed.MaxBytes(5+1_703_569) + snark.PartitionOverhead
	if b != want {
		t.Errorf("2KiB update partition: %d bytes, want %d", b, want)
	}
	var w bytes.Buffer
	if err := snark.WriteUpdateInfo(&w, "StackedDrg2KiBV1"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(w.String(), "constraints=1705039 inputs=5 aux=1703569 ") {
		t.Errorf("circuit info: %s", w.String())
	}
	max, err := snark.MaxUpdateInputBytes(info)
	if err != nil {
		t.Fatal(err)
	}
	raw := updateInputs(t, 50, 1)[0]
	if int64(len(raw)) > max || int64(len(raw))*10 < max {
		t.Errorf("a 2KiB update input of %d bytes, bound %d", len(raw), max)
	}

	// Filecoin's published name for the 2KiB update pair, listed in a
	// parameters.json (no development marker): the .vk is found by that
	// name and checked against its digest.
	shape, err := circuit.UpdateShapeOf(2 << 10)
	if err != nil {
		t.Fatal(err)
	}
	_, vkName := update.ParamsFiles(update.CacheID(shape))
	dir := t.TempDir()
	paramtest.WriteTrapdoorVK(t, filepath.Join(dir, vkName), snark.UpdateInputs)
	_, fil := paramtest.Digests(t, filepath.Join(dir, vkName))
	paramtest.WriteParametersJSON(t, filepath.Join(dir, "parameters.json"), map[string]groth.ParameterEntry{
		vkName: {Digest: fil, SectorSize: 2 << 10}, strings.TrimSuffix(vkName, ".vk") + ".params": {Digest: strings.Repeat("0", 32), SectorSize: 2 << 10}})
	v, err := snark.Schemes(snark.Params{Dir: dir}, nil)[1].Verifier(context.Background(), snark.UpdateProfile(info))
	if err != nil {
		t.Fatalf("the published update .vk: %v", err)
	}
	if d := v.(interface{ Describe() string }).Describe(); d != vkName {
		t.Errorf("verifier over %s, want %s", d, vkName)
	}
}
