package paramfiles_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/c2flow/c2flow/filecoin/paramfiles"
	"github.com/c2flow/c2flow/filecoin/paramfiles/paramtest"
	"github.com/c2flow/c2flow/scheme"
	"github.com/c2flow/c2flow/storage/s3test"
)

func TestMain(m *testing.M) { s3test.Main(m) }

// seal2KiB is what finding the 2KiB seal circuit's pair needs of it.
var seal2KiB = paramfiles.Circuit{Name: "StackedDrg2KiBV1_1", SectorSize: 2048, NumInputs: 40, Prefix: paramtest.Pair2KiB("")}

// Missing parameters are scheme.ErrNoKeys naming what was looked for and
// where; a file whose digest is not parameters.json's is refused; a pair
// that parameters.json does not list is refused outside a development
// setup.
func TestLocateMissingAndBad(t *testing.T) {
	ctx := context.Background()
	empty := t.TempDir()
	_, err := (&paramfiles.Store{Dir: empty}).Locate(ctx, seal2KiB, false)
	paramtest.WantErr(t, "empty directory", err, scheme.ErrNoKeys, empty, "no .params/.vk pair for "+seal2KiB.Name, "poseidon_hasher-8-0-0-sha256_hasher-", "found: nothing", "parameters.json (absent)")

	_, err = (&paramfiles.Store{Dir: filepath.Join(empty, "none")}).Locate(ctx, seal2KiB, false)
	paramtest.WantErr(t, "no directory", err, scheme.ErrNoKeys, "none")

	// Listed, absent, no remote.
	listed := t.TempDir()
	paramtest.WriteParametersJSON(t, filepath.Join(listed, paramfiles.ParametersJSON), paramfiles.Listing{
		paramtest.Pair2KiB("aa") + ".params": {Digest: strings.Repeat("0", 32), SectorSize: 2048},
		paramtest.Pair2KiB("aa") + ".vk":     {Digest: strings.Repeat("1", 32), SectorSize: 2048},
		// Another size's pair is not a candidate.
		paramtest.Pair2KiB("bb") + ".vk":     {Digest: strings.Repeat("2", 32), SectorSize: 8 << 20},
		paramtest.Pair2KiB("bb") + ".params": {Digest: strings.Repeat("3", 32), SectorSize: 8 << 20},
	})
	store := &paramfiles.Store{Dir: listed}
	_, err = store.Locate(ctx, seal2KiB, false)
	paramtest.WantErr(t, "listed, absent", err, scheme.ErrNoKeys, filepath.Join(listed, paramtest.Pair2KiB("aa")+".vk"), "listed in parameters.json", "no remote storage")

	// Listed with another digest: found, refused by its check.
	vk := filepath.Join(listed, paramtest.Pair2KiB("aa")+".vk")
	paramtest.WriteTrapdoorVK(t, vk, 40)
	paramtest.WriteFile(t, filepath.Join(listed, paramtest.Pair2KiB("aa")+".params"), []byte("params"))
	loc, err := store.Locate(ctx, seal2KiB, false)
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = store.CheckPair(ctx, loc)
	paramtest.WantErr(t, "digest mismatch", err, paramfiles.ErrBadParams, paramtest.Pair2KiB("aa")+".vk", "digest "+paramtest.FileDigest(t, vk), "parameters.json says "+strings.Repeat("1", 32))

	// Not listed: refused unless a development setup.
	unlisted := t.TempDir()
	paramtest.WriteTrapdoorVK(t, filepath.Join(unlisted, paramtest.Pair2KiB("cc")+".vk"), 40)
	paramtest.WriteFile(t, filepath.Join(unlisted, paramtest.Pair2KiB("cc")+".params"), []byte("params"))
	store = &paramfiles.Store{Dir: unlisted}
	_, err = store.Locate(ctx, seal2KiB, false)
	paramtest.WantErr(t, "unlisted", err, scheme.ErrNoKeys, paramtest.Pair2KiB("cc")+".params", "no entry", "not a development setup")
	paramtest.WriteFile(t, filepath.Join(unlisted, paramfiles.DevMarker), []byte("DEVELOPMENT SETUP\n"))
	if loc, err = store.Locate(ctx, seal2KiB, false); err != nil || !loc.Dev || loc.WantVK != "" {
		t.Fatalf("unlisted development pair: %+v, %v; want it found, unlisted", loc, err)
	}
}

// A parameter directory filled from a real S3 remote: parameters.json,
// the development marker and the pair are downloaded into the empty
// directory, each file checked against parameters.json's digest; a remote
// file with another digest is refused and not kept; keys the remote lacks
// are scheme.ErrNoKeys naming them.
func TestLocateFromS3(t *testing.T) {
	ctx := context.Background()
	srv := s3test.Start(t)
	st := srv.Store("params")
	src := t.TempDir()
	vk, params := filepath.Join(src, paramtest.Pair2KiB("dd")+".vk"), filepath.Join(src, paramtest.Pair2KiB("dd")+".params")
	paramtest.WriteTrapdoorVK(t, vk, 40)
	paramtest.WriteFile(t, params, bytes.Repeat([]byte("not a .params file "), 1<<16))
	paramtest.WriteParametersJSON(t, filepath.Join(src, paramfiles.ParametersJSON), paramfiles.Listing{
		filepath.Base(vk):     {Digest: paramtest.FileDigest(t, vk), SectorSize: 2048},
		filepath.Base(params): {Digest: paramtest.FileDigest(t, params), SectorSize: 2048},
	})
	paramtest.WriteFile(t, filepath.Join(src, paramfiles.DevMarker), []byte("DEVELOPMENT SETUP\n"))
	remote := paramtest.S3Remote{Store: st, Tmp: t.TempDir()}

	// Nothing uploaded yet.
	_, err := (&paramfiles.Store{Dir: t.TempDir(), Remote: remote}).Locate(ctx, seal2KiB, false)
	paramtest.WantErr(t, "empty remote", err, scheme.ErrNoKeys, "remote storage has none")

	for _, f := range []string{paramfiles.ParametersJSON, paramfiles.DevMarker, filepath.Base(vk)} {
		paramtest.Upload(t, st, paramfiles.RemotePrefix+f, filepath.Join(src, f))
	}
	dir := t.TempDir()
	store := &paramfiles.Store{Dir: dir, Remote: remote}
	_, err = store.Locate(ctx, seal2KiB, false)
	paramtest.WantErr(t, "no .params in the remote", err, scheme.ErrNoKeys, paramfiles.RemotePrefix+filepath.Base(params))

	// A remote .params that is not the listed one.
	tampered := filepath.Join(t.TempDir(), "tampered")
	paramtest.WriteFile(t, tampered, bytes.Repeat([]byte("not a .params file!"), 1<<16))
	paramtest.Upload(t, st, paramfiles.RemotePrefix+filepath.Base(params), tampered)
	_, err = store.Locate(ctx, seal2KiB, false)
	paramtest.WantErr(t, "tampered remote .params", err, paramfiles.ErrBadParams, "not kept")
	if _, err := os.Stat(filepath.Join(dir, filepath.Base(params))); !os.IsNotExist(err) {
		t.Fatalf("the tampered download was kept: %v", err)
	}

	paramtest.Upload(t, st, paramfiles.RemotePrefix+filepath.Base(params), params)
	loc, err := store.Locate(ctx, seal2KiB, false)
	if err != nil || !loc.Dev {
		t.Fatalf("downloaded pair: %+v, %v; want it found, a development setup's", loc, err)
	}
	if _, _, err := store.CheckPair(ctx, loc); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{paramfiles.ParametersJSON, paramfiles.DevMarker, filepath.Base(vk), filepath.Base(params)} {
		a, err := os.ReadFile(filepath.Join(src, f))
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil || !bytes.Equal(a, b) {
			t.Fatalf("%s: downloaded copy differs (%v)", f, err)
		}
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 4 {
		t.Fatalf("%d files in the directory, want 4 (no temporary left): %v", len(ents), ents)
	}
}

// A development directory with only the 2KiB pair has no 8MiB parameters,
// though the two circuits' verifying keys have as many IC points: an
// 8MiB proof fails at once with scheme.ErrNoKeys naming the sector size
// and what was found, never loading the 2KiB pair.
func TestLocateOtherSectorSizeIsNoKeys(t *testing.T) {
	dir := t.TempDir()
	paramtest.WriteFile(t, filepath.Join(dir, paramfiles.DevMarker), []byte("DEVELOPMENT SETUP\n"))
	vk := filepath.Join(dir, paramtest.Pair2KiB("aa")+".vk")
	paramtest.WriteTrapdoorVK(t, vk, 40)
	paramtest.WriteFile(t, filepath.Join(dir, paramtest.Pair2KiB("aa")+".params"), []byte("params"))
	paramtest.WriteParametersJSON(t, filepath.Join(dir, paramfiles.ParametersJSON), paramfiles.Listing{
		paramtest.Pair2KiB("aa") + ".params": {Digest: paramtest.FileDigest(t, filepath.Join(dir, paramtest.Pair2KiB("aa")+".params")), SectorSize: 2048},
		paramtest.Pair2KiB("aa") + ".vk":     {Digest: paramtest.FileDigest(t, vk), SectorSize: 2048},
	})
	seal8MiB := seal2KiB
	seal8MiB.Name, seal8MiB.SectorSize = "StackedDrg8MiBV1_1", 8<<20
	_, err := (&paramfiles.Store{Dir: dir}).Locate(context.Background(), seal8MiB, false)
	paramtest.WantErr(t, "8MiB on a 2KiB-only directory", err, scheme.ErrNoKeys, seal8MiB.Name, "sector size 8388608", paramtest.Pair2KiB("aa")+".vk (listed for sector size 2048)")
}

// A development setup's pair installed in a directory is listed there
// with its sector size, marked, found by Locate as a development setup's
// and checked against its listing.
func TestInstallDev(t *testing.T) {
	ctx := context.Background()
	cache, dir := t.TempDir(), t.TempDir()
	from := paramfiles.DevPair(cache, "pair")
	paramtest.WriteTrapdoorVK(t, from.VK, 40)
	paramtest.WriteFile(t, from.Params, []byte("params"))
	to := paramfiles.DevPair(dir, paramfiles.DevBase(seal2KiB.Prefix, strings.Repeat("ab", 32)))
	if ok, err := paramfiles.DevInstalled(dir, to, 2048); ok || err != nil {
		t.Fatalf("installed before InstallDev: %v, %v", ok, err)
	}
	if err := paramfiles.InstallDev(ctx, dir, from, to, 2048); err != nil {
		t.Fatal(err)
	}
	if ok, err := paramfiles.DevInstalled(dir, to, 2048); !ok || err != nil {
		t.Fatalf("not installed after InstallDev: %v, %v", ok, err)
	}
	if ok, _ := paramfiles.DevInstalled(dir, to, 8<<20); ok {
		t.Fatal("installed for another sector size")
	}
	store := &paramfiles.Store{Dir: dir}
	loc, err := store.Locate(ctx, seal2KiB, false)
	if err != nil || !loc.Dev || loc.Files != to || loc.WantVK == "" {
		t.Fatalf("Locate: %+v, %v; want %+v, listed, a development setup's", loc, err, to)
	}
	if _, _, err := store.CheckPair(ctx, loc); err != nil {
		t.Fatal(err)
	}
	if err := store.PublishDev(ctx, to); err != nil {
		t.Fatalf("publish without a remote: %v", err)
	}
}
