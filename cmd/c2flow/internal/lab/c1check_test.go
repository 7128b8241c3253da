package lab

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/c2flow/c2flow/filecoin/c1"
	"github.com/c2flow/c2flow/filecoin/proofs"
	"github.com/c2flow/c2flow/filecoin/seal"
	"github.com/c2flow/c2flow/scheme"
	"github.com/c2flow/c2flow/storage/s3test"
)

// c2flow seal --proof writes Filecoin C1 files and sectors.json; c2flow c1
// check accepts them with the public data from sectors.json, from flags
// or from the files, and names the first failure of a tampered one.
func TestFilecoinSealAndCheck(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	if err := dispatch(ctx, []string{"seal", "--proof", "StackedDrg2KiBV1_1", "--sectors", "2", "--first-sector", "5", "--out", dir}); err != nil {
		t.Fatal(err)
	}
	m, err := seal.ReadManifest(filepath.Join(dir, "sectors.json"))
	if err != nil {
		t.Fatal(err)
	}
	if m.Proof != "StackedDrg2KiBV1_1" || len(m.Sectors) != 2 || m.Sectors[0].SectorID != 5 || m.Sectors[1].C1 != "6.c1.json" {
		t.Fatalf("manifest %+v", m)
	}
	f5, f6 := filepath.Join(dir, "5.c1.json"), filepath.Join(dir, "6.c1.json")
	check := func(wantErr bool, args ...string) []string {
		t.Helper()
		var out, log bytes.Buffer
		err := c1Check(ctx, args, &out, &log)
		if (err != nil) != wantErr {
			t.Fatalf("c1 check %v: error %v, want error %v; output:\n%s", args, err, wantErr, out.String())
		}
		lines := strings.Split(strings.TrimSpace(out.String()), "\n")
		t.Logf("c1 check %v:\n%s%s", args, out.String(), log.String())
		return lines
	}
	lines := check(false, f5, f6)
	if len(lines) != 2 || !strings.HasPrefix(lines[0], f5+": ok (public data: "+filepath.Join(dir, "sectors.json")) {
		t.Fatalf("lines %q", lines)
	}

	// Flags: the right prover id derives the file's replica id, a wrong
	// one does not; the sector id comes from the file name.
	prover := seal.Hex32(scheme.TestProver())
	check(false, "--prover-id", prover, f5)
	check(false, "--prover-id", prover, "--sector-id", "6", f6)
	lines = check(true, "--prover-id", prover, "--sector-id", "7", f6)
	if !strings.Contains(lines[0], "bad: ") || !strings.Contains(lines[0], "replica id mismatch") {
		t.Fatalf("wrong sector id: %q", lines)
	}

	// A file elsewhere is checked against what it carries.
	other := t.TempDir()
	b, err := os.ReadFile(f5)
	if err != nil {
		t.Fatal(err)
	}
	lone := filepath.Join(other, "x.json")
	if err := os.WriteFile(lone, b, 0o644); err != nil {
		t.Fatal(err)
	}
	lines = check(false, lone)
	if !strings.Contains(lines[0], "ok (public data: the file's own") {
		t.Fatalf("lone file: %q", lines)
	}

	// Commit2In-wrapped: the sector id comes from SectorNum.
	a, err := c1.DecodeFile(f6)
	if err != nil {
		t.Fatal(err)
	}
	w, err := c1.MarshalCommit2In(6, a.C1)
	if err != nil {
		t.Fatal(err)
	}
	wrapped := filepath.Join(other, "c1out.json")
	if err := os.WriteFile(wrapped, w, 0o644); err != nil {
		t.Fatal(err)
	}
	check(false, "--prover-id", prover, wrapped)

	// Tamper with sector 6's seed: sectors.json disagrees, the file's own
	// data derive other challenges.
	a.C1.Seed[0] ^= 1
	bad, err := c1.Marshal(a.C1)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(f6, bad, 0o644); err != nil {
		t.Fatal(err)
	}
	lines = check(true, "--timing", f5, f6)
	if len(lines) != 2 || !strings.HasSuffix(lines[0], ")") || !strings.Contains(lines[0], ": ok ") ||
		!strings.Contains(lines[1], "bad: seal: verify: seed:") {
		t.Fatalf("tampered: %q", lines)
	}
	if err := os.WriteFile(filepath.Join(other, "y.json"), bad, 0o644); err != nil {
		t.Fatal(err)
	}
	lines = check(true, filepath.Join(other, "y.json"))
	if !strings.Contains(lines[0], "challenge mismatch") {
		t.Fatalf("tampered lone file: %q", lines)
	}

	// Usage errors.
	if err := c1Check(ctx, []string{"--sector-id", "5", f5}, &bytes.Buffer{}, &bytes.Buffer{}); err == nil {
		t.Fatal("--sector-id without --prover-id accepted")
	}
	if err := dispatch(ctx, []string{"seal", "--proof", "StackedDrg2KiBV1_1", "--profile", "32KiB", "--out", t.TempDir()}); err == nil {
		t.Fatal("--proof with --profile accepted")
	}
}

// A Commit2In whose SectorNum is not the --sector-id given is refused,
// naming both numbers, even when its Phase1Out verifies as the flag's
// sector: submit refuses it, and c1 check agrees (intake.PublicFor).
func TestC1CheckCommit2InSectorNumMismatch(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	if err := dispatch(ctx, []string{"seal", "--proof", "StackedDrg2KiBV1_1", "--sectors", "1", "--first-sector", "6", "--out", dir}); err != nil {
		t.Fatal(err)
	}
	a, err := c1.DecodeFile(filepath.Join(dir, "6.c1.json"))
	if err != nil {
		t.Fatal(err)
	}
	w, err := c1.MarshalCommit2In(5, a.C1) // sector 6's C1, labeled 5
	if err != nil {
		t.Fatal(err)
	}
	wrapped := filepath.Join(t.TempDir(), "c1out.json")
	if err := os.WriteFile(wrapped, w, 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	err = c1Check(ctx, []string{"--prover-id", seal.Hex32(scheme.TestProver()), "--sector-id", "6", wrapped}, &out, &bytes.Buffer{})
	if err == nil || !strings.Contains(out.String(), "--sector-id 6") || !strings.Contains(out.String(), "SectorNum is 5") {
		t.Fatalf("c1 check --sector-id 6 of a Commit2In of SectorNum 5: %v; output:\n%s", err, out.String())
	}
}

// Sector ids that wrap around 64 bits or exceed Filecoin's 2^63-1 are
// refused by seal (both schemes), c1 check and submit, from flags, file
// names and sectors.json alike, each error saying why.
func TestSectorIDOverflowRefused(t *testing.T) {
	ctx := context.Background()
	const max64, over63 = "18446744073709551615", "9223372036854775808"
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--profile", "2KiB", "--first-id", max64, "--sectors", "2"}, "overflows"},
		{[]string{"--proof", "StackedDrg2KiBV1_1", "--first-id", max64, "--sectors", "2"}, "overflows"},
		{[]string{"--proof", "StackedDrg2KiBV1_1", "--first-id", over63, "--sectors", "1"}, "at most 9223372036854775807"},
		{[]string{"--proof", "StackedDrg2KiBV1_1", "--first-id", "9223372036854775807", "--sectors", "2"}, "at most 9223372036854775807"},
	} {
		out := t.TempDir()
		err := dispatch(ctx, append([]string{"seal", "--out", out}, c.args...))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("seal %v: %v, want an error saying %q", c.args, err, c.want)
		}
		if ents, _ := os.ReadDir(out); len(ents) != 0 {
			t.Errorf("seal %v wrote %d files", c.args, len(ents))
		}
	}

	// A C1 of sector 2^63, sealed directly (seal refuses it now), with
	// its sectors.json, under its own name and under another.
	s, err := seal.Seal(ctx, seal.TestParams(proofs.StackedDrg2KiBV1_1, scheme.TestProver(), 1<<63))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	named := filepath.Join(dir, over63+".c1.json")
	if err := c1.WriteFile(named, s.C1); err != nil {
		t.Fatal(err)
	}
	m := &seal.Manifest{Proof: "StackedDrg2KiBV1_1", Sectors: []seal.ManifestEntry{seal.EntryOf(s.Public, over63+".c1.json")}}
	if err := seal.WriteManifest(filepath.Join(dir, "sectors.json"), m); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(t.TempDir(), "x.json")
	if err := c1.WriteFile(other, s.C1); err != nil {
		t.Fatal(err)
	}
	prover := seal.Hex32(scheme.TestProver())
	const want = "Filecoin sector numbers are at most 9223372036854775807"
	for _, args := range [][]string{
		{named},                        // sectors.json
		{"--prover-id", prover, named}, // file name
		{"--prover-id", prover, "--sector-id", over63, other}, // flag
	} {
		var out bytes.Buffer
		err := c1Check(ctx, args, &out, &bytes.Buffer{})
		if err == nil || !strings.Contains(out.String(), want) {
			t.Errorf("c1 check %v: %v; output:\n%s", args, err, out.String())
		}
	}

	srv := s3test.Start(t)
	srv.Store("c2flow-ids") // creates the bucket
	s3 := []string{"--s3-endpoint", srv.Endpoint(), "--s3-bucket", "c2flow-ids", "--s3-access-key", srv.Access, "--s3-secret-key", srv.Secret,
		"--params", t.TempDir(), "--address", "127.0.0.1:1"}
	for _, args := range [][]string{
		{"--c1", named},
		{"--c1", other, "--prover-id", prover, "--sector-id", over63},
	} {
		err := dispatch(ctx, append(append([]string{"submit"}, s3...), args...))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("submit %v: %v", args, err)
		}
	}
}
