// Package upstreamdata gives tests the upstream data committed under the
// module's testdata/ directory (see testdata/PROVENANCE.md): curio's Window
// PoSt fixtures, rust-fil-proofs' seal regression records and
// parameters.json, zkcrypto/bls12_381's point vectors. Each file is checked
// against the SHA-256 recorded here (and in PROVENANCE.md).
//
// An environment variable per repository (Source.Env) may point to a
// bigger copy of that repository instead: a checkout (the file is read at
// its upstream path) or a git directory (the file is read with git show at
// the pinned commit). The digests are checked either way.
package upstreamdata

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Source is an upstream repository at a pinned commit.
type Source struct {
	Repo   string // GitHub owner/name
	Commit string
	Dir    string // directory under testdata/
	Env    string // override: a checkout or git directory of Repo
}

var (
	Curio     = Source{"filecoin-project/curio", "e0294b0f948132d41e8f42f59fa949495d5fd3af", "curio", "C2FLOW_UPSTREAM_CURIO"}
	FilProofs = Source{"filecoin-project/rust-fil-proofs", "87348a749d80447d00c595af834a8ed73c09e4d9", "rust-fil-proofs", "C2FLOW_UPSTREAM_FIL_PROOFS"}
	BLS12381  = Source{"zkcrypto/bls12_381", "6bb96951d5c2035caf4989b6e4a018435379590f", "zkcrypto-bls12_381", "C2FLOW_UPSTREAM_BLS12_381"}
	CommCID   = Source{"filecoin-project/go-fil-commcid", "dc003f4774d39c1ab74ad32d2749084c980dbdc0", "go-fil-commcid", "C2FLOW_UPSTREAM_COMMCID"}
)

// File is one upstream file: its source, its path there and the SHA-256 of
// its bytes at the pinned commit. Committed says whether testdata/ holds it.
type File struct {
	Source    Source
	Path      string
	SHA256    string
	Committed bool
}

// Name is the file's path under the module root.
func (f File) Name() string {
	return filepath.Join("testdata", f.Source.Dir, filepath.Base(f.Path))
}

var (
	PostVproof  = File{Curio, "lib/proof/testgolden/post.vproof", "3c906a399450aba007683a8a974604ffef5297a25c51731eb7832e26340c41e9", true}
	PostPubJSON = File{Curio, "lib/proof/testgolden/postpub.json", "7311e2d66fa915e0af631991e6c7b5957941926008d25fe581503c151ff70c91", true}

	SealRecordsV16 = File{FilProofs, "filecoin-proofs/tests/seal_regression_records-v16.json", "728e06d0af383e8c800558673efeea29a575692b8bc9b8a64089730ab2820811", true}
	SealRecordsV18 = File{FilProofs, "filecoin-proofs/tests/seal_regression_records-v18.json", "62dea09bc04a832a0ff8571bde6f5b07dd6d5622988a63c7cf0dcc7173a85ef8", true}
	ParametersJSON = File{FilProofs, "parameters.json", "b06f9f0cfd92d59bd8de92c673ec5f1bb02dcf767551563daff5aae141579f7f", true}

	// CommCIDTest holds go-fil-commcid's commitment CID vectors (the
	// piece and data commitments of known data, as CID strings).
	CommCIDTest = File{CommCID, "commcid_test.go", "a4419e07fbb611641d5b66ab6ce947db6f60fe627c7d5dbf6e68635d479a22e2", true}

	G1Uncompressed = File{BLS12381, "src/tests/g1_uncompressed_valid_test_vectors.dat", "e25aae8e95c9cd39cdb1eec0100c8245e297510fef0091cbf80b91d49de6b685", true}
	G1Compressed   = File{BLS12381, "src/tests/g1_compressed_valid_test_vectors.dat", "8acaa1d512b4cf96f4740e4c9afc19ba4618d48fe251c452a19382395bcd0929", true}
	G2Uncompressed = File{BLS12381, "src/tests/g2_uncompressed_valid_test_vectors.dat", "80fd0516c8115b13165589324558649fa94f49e714caa3b735537d073a9cfb65", true}
	G2Compressed   = File{BLS12381, "src/tests/g2_compressed_valid_test_vectors.dat", "b75bc2e41289adda41e448e56a1ea39b11009a27b02e8676c8b86defedc05deb", true}
)

// ModuleRoot returns the directory holding go.mod, walking up from the
// working directory (a test's package directory).
func ModuleRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("upstreamdata: no go.mod above the working directory")
		}
		dir = parent
	}
}

// Read returns f's bytes: from f.Source.Env's copy when that variable is
// set, else from testdata/. It fails the test when the file is missing or
// its SHA-256 differs.
func Read(t testing.TB, f File) []byte {
	t.Helper()
	if dir := os.Getenv(f.Source.Env); dir != "" {
		return check(t, f, readOverride(t, f, dir), dir)
	}
	if !f.Committed {
		t.Fatalf("%s:%s is not in testdata/; set %s to a copy of %s", f.Source.Repo, f.Path, f.Source.Env, f.Source.Repo)
	}
	name := filepath.Join(ModuleRoot(t), f.Name())
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatalf("upstream data %s (%s at %s, see testdata/PROVENANCE.md): %v", f.Name(), f.Source.Repo, f.Source.Commit, err)
	}
	return check(t, f, b, name)
}

// ReadOptional is Read for a file testdata/ may not hold: without the
// override variable it returns false for a file that is not committed.
func ReadOptional(t testing.TB, f File) ([]byte, bool) {
	t.Helper()
	if !f.Committed && os.Getenv(f.Source.Env) == "" {
		return nil, false
	}
	return Read(t, f), true
}

func readOverride(t testing.TB, f File, dir string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(f.Path)))
	if err == nil {
		return b
	}
	if !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("%s=%s: %v", f.Source.Env, dir, err)
	}
	if _, herr := os.Stat(filepath.Join(dir, "HEAD")); herr != nil {
		t.Fatalf("%s=%s is neither a checkout holding %s nor a git directory: %v", f.Source.Env, dir, f.Path, err)
	}
	var stderr bytes.Buffer
	cmd := exec.Command("git", "--git-dir="+dir, "show", f.Source.Commit+":"+f.Path)
	cmd.Stderr = &stderr
	out, gerr := cmd.Output()
	if gerr != nil {
		t.Fatalf("%s=%s: git show %s:%s: %v: %s", f.Source.Env, dir, f.Source.Commit, f.Path, gerr, strings.TrimSpace(stderr.String()))
	}
	return out
}

func check(t testing.TB, f File, b []byte, from string) []byte {
	t.Helper()
	sum := sha256.Sum256(b)
	if got := hex.EncodeToString(sum[:]); got != f.SHA256 {
		t.Fatalf("%s:%s from %s: SHA-256 %s, want %s (%s)", f.Source.Repo, f.Path, from, got, f.SHA256, f.Source.Commit)
	}
	return b
}
