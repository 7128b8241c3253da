// Package paramtest gives the tests of Filecoin's parameter files (the
// store's, filecoin/snark's) their shared fixtures: verifying keys,
// parameters.json listings and a Remote over c2flow's S3 store.
package paramtest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/c2flow/c2flow/filecoin/groth"
	"github.com/c2flow/c2flow/filecoin/paramfiles"
	"github.com/c2flow/c2flow/storage"
)

// Pair2KiB is the base name of a 2KiB seal pair with the given id.
func Pair2KiB(id string) string { return paramfiles.PairPrefix + "8-0-0-sha256_hasher-" + id }

// WriteFile writes b at path, its directory made.
func WriteFile(tb testing.TB, path string, b []byte) {
	tb.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		tb.Fatal(err)
	}
}

// WriteTrapdoorVK writes a valid .vk with numInputs IC points.
func WriteTrapdoorVK(tb testing.TB, path string, numInputs int) {
	tb.Helper()
	key, err := groth.NewTrapdoorKey(numInputs, rand.Reader)
	if err != nil {
		tb.Fatal(err)
	}
	var b bytes.Buffer
	if _, err := key.VK.WriteTo(&b); err != nil {
		tb.Fatal(err)
	}
	WriteFile(tb, path, b.Bytes())
}

// WriteParametersJSON writes m as a parameters.json at path.
func WriteParametersJSON(tb testing.TB, path string, m paramfiles.Listing) {
	tb.Helper()
	b, err := json.Marshal(m)
	if err != nil {
		tb.Fatal(err)
	}
	WriteFile(tb, path, b)
}

// Digests returns a file's SHA-256 and its parameters.json digest.
func Digests(tb testing.TB, path string) (sha, fil string) {
	tb.Helper()
	sums, err := paramfiles.SumFile(context.Background(), path)
	if err != nil {
		tb.Fatal(err)
	}
	return sums.SHA256, sums.FilDigest
}

// FileDigest is a file's parameters.json digest.
func FileDigest(tb testing.TB, path string) string {
	tb.Helper()
	_, d := Digests(tb, path)
	return d
}

// WantErr fails tb unless err is set, wraps is (where not nil) and says
// every one of subs.
func WantErr(tb testing.TB, what string, err error, is error, subs ...string) {
	tb.Helper()
	tb.Logf("%s: %v", what, err)
	if err == nil {
		tb.Fatalf("%s: no error", what)
	}
	if is != nil && !errors.Is(err, is) {
		tb.Errorf("%s: error is not %v", what, is)
	}
	for _, s := range subs {
		if !strings.Contains(err.Error(), s) {
			tb.Errorf("%s: error lacks %q", what, s)
		}
	}
}

// S3Remote is a paramfiles.Remote over c2flow's S3 store: what a worker
// adapts storage.Store with. Each object is downloaded (parallel ranged
// GETs, SHA-256 checked) into a temporary file in Tmp that Close removes.
type S3Remote struct {
	Store *storage.Store
	Tmp   string
}

// Open implements paramfiles.Remote.
func (r S3Remote) Open(ctx context.Context, key string) (io.ReadCloser, error) {
	f, err := os.CreateTemp(r.Tmp, "remote-*")
	if err != nil {
		return nil, err
	}
	f.Close()
	if err := r.Store.DownloadFile(ctx, key, f.Name()); err != nil {
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

// Upload puts local file path into st under key.
func Upload(tb testing.TB, st *storage.Store, key, path string) {
	tb.Helper()
	if err := st.UploadFile(context.Background(), key, path); err != nil {
		tb.Fatal(err)
	}
}
