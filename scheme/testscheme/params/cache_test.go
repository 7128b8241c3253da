package params_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/c2flow/c2flow/scheme/testscheme/params"
	"github.com/c2flow/c2flow/scheme/testscheme/params/paramstest"
	"github.com/c2flow/c2flow/scheme/testscheme/porep"
	"github.com/c2flow/c2flow/storage"
	"github.com/c2flow/c2flow/storage/s3test"
)

func TestMain(m *testing.M) { s3test.Main(m) }

// publishKeys writes the 2KiB keys through a Cache (local directory
// and S3, as a development setup does) and returns the S3 store, the keys
// and the profile.
func publishKeys(t *testing.T) (*storage.Store, *params.Keys, porep.Profile) {
	t.Helper()
	srv := s3test.Start(t)
	st := srv.Store("c2flow")
	k := *paramstest.Keys(t, "2KiB") // a copy: Write sets its digests
	if err := k.Write(context.Background(), params.Cache{Local: params.DirStore{Root: t.TempDir()}, Remote: st}); err != nil {
		t.Fatal(err)
	}
	return st, &k, k.Profile
}

// A flipped byte in a worker's cached pk, in a point or in a header
// length: the load finds it, moves the copy aside, downloads the pk again
// and succeeds.
func TestCacheReplacesCorruptKey(t *testing.T) {
	st, k, p := publishKeys(t)
	ctx := context.Background()
	cache := params.Cache{Local: params.DirStore{Root: t.TempDir()}, Remote: st}
	if _, err := params.LoadExisting(ctx, cache, p, nil); err != nil { // downloads
		t.Fatal(err)
	}
	pk := filepath.Join(cache.Local.Root, filepath.FromSlash(k.Prefix()), "pk")
	good, err := os.ReadFile(pk)
	if err != nil {
		t.Fatal(err)
	}
	for i, at := range []int{len(good) / 2, 8 + 5*32 + 1 + 3*96} {
		bad := bytes.Clone(good)
		bad[at] ^= 0x80
		if err := os.WriteFile(pk, bad, 0o600); err != nil {
			t.Fatal(err)
		}
		got, err := params.LoadExisting(ctx, cache, p, nil)
		if err != nil {
			t.Fatalf("flip at %d: %v", at, err)
		}
		if got.PKSHA256 != k.PKSHA256 {
			t.Errorf("flip at %d: loaded pk %s, published %s", at, got.PKSHA256, k.PKSHA256)
		}
		if b, _ := os.ReadFile(pk); !bytes.Equal(b, good) {
			t.Errorf("flip at %d: the cached pk was not replaced", at)
		}
		if m, _ := filepath.Glob(pk + ".bad-*"); len(m) == 0 || i == 0 && len(m) != 1 {
			t.Errorf("flip at %d: quarantined copies %v", at, m)
		}
	}
}

// pk and vk swapped in S3 (each with its own object checksum, so the
// download checks pass): the load says which file is not the recorded one.
func TestCacheDetectsSwappedKeys(t *testing.T) {
	st, k, p := publishKeys(t)
	ctx := context.Background()
	src := params.Cache{Local: params.DirStore{Root: t.TempDir()}, Remote: st}
	if _, err := params.LoadExisting(ctx, src, p, nil); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(src.Local.Root, filepath.FromSlash(k.Prefix()))
	if err := st.UploadFile(ctx, k.Prefix()+"vk", filepath.Join(dir, "pk")); err != nil {
		t.Fatal(err)
	}
	if err := st.UploadFile(ctx, k.Prefix()+"pk", filepath.Join(dir, "vk")); err != nil {
		t.Fatal(err)
	}
	cache := params.Cache{Local: params.DirStore{Root: t.TempDir()}, Remote: st}
	_, err := params.LoadExisting(ctx, cache, p, nil)
	if !errors.Is(err, params.ErrMismatch) || errors.Is(err, params.ErrNotFound) || !strings.Contains(err.Error(), k.Prefix()+"vk:") ||
		!strings.Contains(err.Error(), k.VKSHA256) {
		t.Fatalf("load: %v", err)
	}
}

// Keys published before digests files have none: Publish skips it.
func TestPublishWithoutDigestsFile(t *testing.T) {
	srv := s3test.Start(t)
	st := srv.Store("c2flow")
	ctx := context.Background()
	local := params.DirStore{Root: t.TempDir()}
	if err := local.Put(ctx, "params/p/d/vk", func(w io.Writer) error { _, err := w.Write([]byte("vk")); return err }); err != nil {
		t.Fatal(err)
	}
	pc := params.Cache{Local: local, Remote: st}
	if err := pc.Publish(ctx, "params/p/d/", params.DigestsFile, "vk"); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Head(ctx, "params/p/d/vk"); err != nil {
		t.Fatal(err)
	}
}

func TestCacheDownloadsOnce(t *testing.T) {
	srv := s3test.Start(t)
	st := srv.Store("c2flow")
	ctx := context.Background()
	writer := params.Cache{Local: params.DirStore{Root: t.TempDir()}, Remote: st}
	if err := writer.Put(ctx, "params/p/d/vk", func(w io.Writer) error { _, err := w.Write([]byte("vk bytes")); return err }); err != nil {
		t.Fatal(err)
	}
	reader := params.Cache{Local: params.DirStore{Root: t.TempDir()}, Remote: st}
	read := func() string {
		rc, err := reader.Open(ctx, "params/p/d/vk")
		if err != nil {
			t.Fatal(err)
		}
		defer rc.Close()
		b, _ := io.ReadAll(rc)
		return string(b)
	}
	if read() != "vk bytes" {
		t.Fatal("first read")
	}
	srv.Stop() // the second read must come from the local cache
	if read() != "vk bytes" {
		t.Fatal("cached read")
	}
	srv.Restart()
	if _, err := reader.Open(ctx, "params/p/d/missing"); !errors.Is(err, params.ErrNotFound) {
		t.Fatalf("missing key: %v", err)
	}
}
