package groth

import (
	"crypto/rand"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	bls "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
)

// Upstream repositories read at test time (never copied into the repo).
const (
	mirrorRoot = "/work/.mirror"
	// zkcrypto/bls12_381 at 6bb96951d5c2035caf4989b6e4a018435379590f:
	// src/tests/*_valid_test_vectors.dat, the zcash encoding of i·G for
	// i in [0, 1000).
	zkcryptoRepo   = "zkcrypto+bls12_381"
	zkcryptoCommit = "6bb96951d5c2035caf4989b6e4a018435379590f"
	// rust-fil-proofs at 87348a749d80447d00c595af834a8ed73c09e4d9:
	// filecoin-proofs/tests/seal_regression_records-v16.json and -v18.json,
	// parameters.json.
	filProofsRepo   = "filecoin-project+rust-fil-proofs"
	filProofsCommit = "87348a749d80447d00c595af834a8ed73c09e4d9"
)

// mirrorFile returns path at commit in a mirrored upstream repository, or
// skips the test when the mirror (or the commit) is absent.
func mirrorFile(t testing.TB, repo, commit, path string) []byte {
	t.Helper()
	dir := filepath.Join(mirrorRoot, repo, "repo")
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("upstream mirror %s absent: %v", dir, err)
	}
	out, err := exec.Command("git", "--git-dir="+dir, "show", commit+":"+path).Output()
	if err != nil {
		t.Skipf("git show %s:%s in %s: %v", commit, path, dir, err)
	}
	return out
}

func randScalar(t testing.TB) fr.Element {
	t.Helper()
	var e fr.Element
	for e.IsZero() {
		if _, err := e.SetRandom(); err != nil {
			t.Fatal(err)
		}
	}
	return e
}

func scalarBig(e *fr.Element) *big.Int {
	var b big.Int
	return e.BigInt(&b)
}

func g1Mul(e fr.Element) bls.G1Affine {
	var p bls.G1Affine
	p.ScalarMultiplicationBase(scalarBig(&e))
	return p
}

func g2Mul(e fr.Element) bls.G2Affine {
	var p bls.G2Affine
	p.ScalarMultiplicationBase(scalarBig(&e))
	return p
}

func randBytes(t testing.TB, n int) []byte {
	t.Helper()
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return b
}
