package snark_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/c2flow/c2flow/filecoin/groth"
	"github.com/c2flow/c2flow/filecoin/proofs"
	"github.com/c2flow/c2flow/filecoin/seal"
	"github.com/c2flow/c2flow/storage"
	"github.com/c2flow/c2flow/storage/s3test"
)

func TestMain(m *testing.M) { s3test.Main(m) }

// testProver is the prover id of the test sectors.
var testProver = [32]byte{'c', '2', 'f', 'l', 'o', 'w', ' ', 't', 'e', 's', 't'}

// seal2KiB seals 2KiB sector id of testProver (a fraction of a second).
func seal2KiB(t *testing.T, p proofs.RegisteredSealProof, id uint64) *seal.Sealed {
	t.Helper()
	s, err := seal.Seal(context.Background(), seal.TestParams(p, testProver, id))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// writeTrapdoorVK writes a valid .vk with numInputs IC points.
func writeTrapdoorVK(t *testing.T, path string, numInputs int) {
	t.Helper()
	key, err := groth.NewTrapdoorKey(numInputs, rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if _, err := key.VK.WriteTo(&b); err != nil {
		t.Fatal(err)
	}
	writeFile(t, path, b.Bytes())
}

// digests returns a file's SHA-256 and its parameters.json digest.
func digests(t *testing.T, path string) (sha, fil string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h := sha256.New()
	if fil, err = groth.FileDigest(io.TeeReader(f, h)); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(h.Sum(nil)), fil
}

func fileDigest(t *testing.T, path string) string {
	_, d := digests(t, path)
	return d
}

// s3Remote is a snark.Remote over c2flow's S3 store: what a worker adapts
// storage.Store with. Each object is downloaded (parallel ranged GETs,
// SHA-256 checked) into a temporary file that Close removes.
type s3Remote struct {
	st  *storage.Store
	tmp string
}

func (r s3Remote) Open(ctx context.Context, key string) (io.ReadCloser, error) {
	f, err := os.CreateTemp(r.tmp, "remote-*")
	if err != nil {
		return nil, err
	}
	f.Close()
	if err := r.st.DownloadFile(ctx, key, f.Name()); err != nil {
		os.Remove(f.Name())
		if errors.Is(err, storage.ErrNotFound) {
			return nil, fmt.Errorf("%w: %w", fs.ErrNotExist, err)
		}
		return nil, err
	}
	rc, err := os.Open(f.Name())
	if err != nil {
		return nil, err
	}
	return removeOnClose{rc}, nil
}

type removeOnClose struct{ *os.File }

func (r removeOnClose) Close() error {
	err := r.File.Close()
	os.Remove(r.Name())
	return err
}

// upload puts local file path into st under key.
func upload(t *testing.T, st *storage.Store, key, path string) {
	t.Helper()
	if err := st.UploadFile(context.Background(), key, path); err != nil {
		t.Fatal(err)
	}
}

func writeFile(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}
