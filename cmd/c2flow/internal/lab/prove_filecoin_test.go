package lab

import (
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/c2flow/c2flow/cmd/c2flow/internal/direct"
	"github.com/c2flow/c2flow/filecoin/c1"
	"github.com/c2flow/c2flow/filecoin/fctest"
	"github.com/c2flow/c2flow/filecoin/groth"
	"github.com/c2flow/c2flow/filecoin/paramfiles"
	"github.com/c2flow/c2flow/filecoin/proofs"
	"github.com/c2flow/c2flow/filecoin/seal"
	"github.com/c2flow/c2flow/registry"
)

// sealFilecoin2KiB seals one 2KiB sector (id 7) with c2flow seal into a
// new directory and returns the C1 file's path.
func sealFilecoin2KiB(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := RunSeal(context.Background(), []string{"--proof", "StackedDrg2KiBV1_1", "--sectors", "1", "--first-id", "7", "--out", dir}); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dir, "7.c1.json")
}

// tamperC1 rewrites the C1 at path with another seed than its sector's.
func tamperC1(t *testing.T, path string) {
	t.Helper()
	a, err := c1.DecodeFile(path)
	if err != nil {
		t.Fatal(err)
	}
	a.C1.Seed[5] ^= 1
	if err := c1.WriteFile(path, a.C1); err != nil {
		t.Fatal(err)
	}
}

func writeTestVK(t *testing.T, path string, numInputs int) {
	t.Helper()
	key, err := groth.NewTrapdoorKey(numInputs, rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := key.VK.WriteTo(f); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// Without parameters that fit, the Filecoin path of c2flow prove fails
// with an error naming what it looked for and listing what it found (a
// pair of another tree shape, a .vk without .params, a .vk whose IC count
// is another circuit's); a C1 that does not verify natively is refused
// before any parameter is looked at; nothing is written.
func TestProveFilecoinNoParams(t *testing.T) {
	ctx := context.Background()
	in := sealFilecoin2KiB(t)
	own := t.TempDir()
	if err := RunSeal(ctx, []string{"--profile", "2KiB", "--sectors", "1", "--out", own}); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{in: "filecoin", filepath.Join(own, "1.c1.json"): "c2flow"} {
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if sc, err := registry.Schemes(registry.Options{}).Recognize(raw); err != nil || sc.Name() != want {
			t.Fatalf("%s: recognized as %v (%v), want %s", path, sc, err, want)
		}
	}
	out := filepath.Join(t.TempDir(), "out.proof")
	empty := t.TempDir()
	err := direct.RunProve(ctx, []string{"--c1", in, "--filecoin-params", empty, "--out", out})
	if err == nil || !strings.Contains(err.Error(), "no .params/.vk pair for StackedDrg2KiBV1_1") ||
		!strings.Contains(err.Error(), "poseidon_hasher-8-0-0-sha256_hasher-") || !strings.Contains(err.Error(), "found: nothing") {
		t.Fatalf("empty --params: %v", err)
	}

	dir := t.TempDir()
	const pre = paramfiles.PairPrefix
	// 2KiB's circuit has 40 inputs (FILECOIN.md: the 2KiB .vk holds 40 IC
	// points, as verifyseal_test.go's trapdoor keys); NewTrapdoorKey(n) has
	// n IC points.
	writeTestVK(t, filepath.Join(dir, pre+"8-8-0-sha256_hasher-aa.vk"), 40)
	os.WriteFile(filepath.Join(dir, pre+"8-8-0-sha256_hasher-aa.params"), nil, 0o644)
	writeTestVK(t, filepath.Join(dir, pre+"8-0-0-sha256_hasher-bb.vk"), 40) // no .params
	writeTestVK(t, filepath.Join(dir, pre+"8-0-0-sha256_hasher-cc.vk"), 12)
	os.WriteFile(filepath.Join(dir, pre+"8-0-0-sha256_hasher-cc.params"), nil, 0o644)
	err = direct.RunProve(ctx, []string{"--c1", in, "--filecoin-params", dir, "--out", out})
	t.Logf("error: %v", err)
	if err == nil {
		t.Fatal("proved without parameters")
	}
	for _, want := range []string{"8-8-0-sha256_hasher-aa.vk (another tree shape)", "8-0-0-sha256_hasher-bb.vk (no .params beside it)",
		"8-0-0-sha256_hasher-cc.vk (12 IC points, want 40)"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q", want)
		}
	}
	if err := direct.RunProve(ctx, []string{"--c1", in, "--vk", filepath.Join(dir, pre+"8-0-0-sha256_hasher-cc.vk")}); err == nil ||
		!strings.Contains(err.Error(), "--vk and --pk-params go together") {
		t.Fatalf("--vk alone: %v", err)
	}

	tamperC1(t, in)
	err = direct.RunProve(ctx, []string{"--c1", in, "--filecoin-params", empty, "--out", out})
	if err == nil || !strings.Contains(err.Error(), "does not verify natively") {
		t.Fatalf("tampered C1: %v", err)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Fatalf("a proof file was written: %v", err)
	}
}

// The last step end to end: a 2KiB sector sealed by c2flow seal,
// proved by c2flow prove --c1 FILE --params DIR under the development
// setup of the recorded 2KiB circuit written by filecoin/snark's DevSetup as a
// Filecoin-named .params/.vk pair listed in parameters.json (beside a
// decoy of another tree shape), the written
// proof bytes accepted by verify-seal with the .vk as a seal record of the
// sector's public data, and rejected with another seed, another sector id
// or a flipped bit.
func TestProveFilecoinDevSetup2KiB(t *testing.T) {
	ctx := context.Background()
	info, err := proofs.Lookup(proofs.StackedDrg2KiBV1_1)
	if err != nil {
		t.Fatal(err)
	}
	cached, err := registry.FilecoinDevSetup(ctx, info.Name, fctest.DevParams())
	if err != nil {
		t.Fatal(err)
	}
	// --params: links to the development setup's pair, parameters.json and
	// marker, beside a decoy of another shape (not written into the shared
	// directory).
	dir := t.TempDir()
	for _, p := range []string{cached.Params, cached.VK, filepath.Join(fctest.DevParams(), paramfiles.ParametersJSON),
		filepath.Join(fctest.DevParams(), paramfiles.DevMarker)} {
		if err := os.Symlink(p, filepath.Join(dir, filepath.Base(p))); err != nil {
			t.Fatal(err)
		}
	}
	writeTestVK(t, filepath.Join(dir, paramfiles.PairPrefix+"8-8-0-sha256_hasher-decoy.vk"), 40)
	shapes := t.TempDir()

	in := sealFilecoin2KiB(t)
	out := filepath.Join(t.TempDir(), "7.proof")
	t0 := time.Now()
	if err := direct.RunProve(ctx, []string{"--c1", in, "--filecoin-params", dir, "--shape-cache", shapes, "--out", out}); err != nil {
		t.Fatal(err)
	}
	t.Logf("c2flow prove --c1 %s --params %s: %v", in, dir, time.Since(t0))
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) != groth.ProofSize*info.Partitions {
		t.Fatalf("proof file of %d bytes, want %d", len(b), groth.ProofSize*info.Partitions)
	}
	m, err := seal.ReadManifest(filepath.Join(filepath.Dir(in), "sectors.json"))
	if err != nil {
		t.Fatal(err)
	}
	pub, err := m.Public(m.Find("7.c1.json"))
	if err != nil {
		t.Fatal(err)
	}
	rec := &groth.SealRecord{
		Config: groth.PoRepConfig{SectorSize: info.SectorSize, Partitions: info.Partitions, PoRepID: info.PoRepID, APIVersion: info.APIVersion, Features: info.Features},
		CommR:  pub.CommR, CommD: pub.CommD, ProverID: pub.ProverID, SectorID: pub.SectorID,
		Ticket: pub.Ticket, Seed: pub.Seed, Proof: b,
	}
	vks, _ := filepath.Glob(filepath.Join(dir, paramfiles.PairPrefix+"8-0-0-*.vk"))
	if len(vks) != 1 {
		t.Fatalf("vk files %v", vks)
	}
	for _, c := range []struct {
		name string
		mut  func(r *groth.SealRecord)
		ok   bool
	}{
		{"as proved", func(*groth.SealRecord) {}, true},
		{"other seed", func(r *groth.SealRecord) { r.Seed[0] ^= 1 }, false},
		{"other sector id", func(r *groth.SealRecord) { r.SectorID++ }, false},
		{"flipped bit", func(r *groth.SealRecord) { r.Proof = bytes.Clone(r.Proof); r.Proof[100] ^= 0x04 }, false},
	} {
		r := *rec
		c.mut(&r)
		j, err := r.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(t.TempDir(), "rec.json")
		if err := os.WriteFile(p, append(j, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
		lines, err := runVS(t, "--vk", vks[0], p)
		if ok := err == nil && len(lines) == 1 && strings.Contains(lines[0], ": ok ("); ok != c.ok {
			t.Fatalf("%s: verify-seal %v %q", c.name, err, lines)
		}
	}
}

// c2flow verify refuses a proof file longer than a C2 of the sector's
// partitions before reading it (a 300 MB file was read whole), for
// c2flow's own C2 format and for Filecoin's.
func TestVerifyRefusesAnOversizedProof(t *testing.T) {
	ctx := context.Background()
	huge := func(t *testing.T) string {
		p := filepath.Join(t.TempDir(), "huge.proof")
		f, err := os.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if err := f.Truncate(300 << 20); err != nil { // sparse: no disk
			t.Fatal(err)
		}
		return p
	}
	own := t.TempDir()
	if err := RunSeal(ctx, []string{"--profile", "2KiB", "--sectors", "1", "--out", own}); err != nil {
		t.Fatal(err)
	}
	p := huge(t)
	err := RunVerify(ctx, []string{"--c1", filepath.Join(own, "1.c1.json"), "--proof", p, "--params", t.TempDir()})
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("proof file %s is %d bytes; a 2KiB C2 of", p, 300<<20)) {
		t.Fatalf("verify of a 300 MB proof: %v", err)
	}
	p = huge(t)
	err = RunVerify(ctx, []string{"--c1", sealFilecoin2KiB(t), "--proof", p, "--filecoin-params", t.TempDir()})
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("proof file %s is %d bytes; a StackedDrg2KiBV1_1 C2 of 1 partitions is 192", p, 300<<20)) {
		t.Fatalf("verify of a 300 MB Filecoin proof: %v", err)
	}
}
