package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/c2flow/c2flow/scheme/testscheme/params"
	"github.com/c2flow/c2flow/scheme/testscheme/params/paramstest"
	"github.com/c2flow/c2flow/scheme/testscheme/porep"
	"github.com/c2flow/c2flow/storage/s3test"
)

// circuit setup is a deployment's one key step: it creates the bucket
// when asked, and a second setup on another machine (an empty cache)
// downloads the published keys instead of making other ones.
func TestCircuitSetupOneSetup(t *testing.T) {
	srv := s3test.Start(t)
	s3 := []string{"--s3-endpoint", srv.Endpoint(), "--s3-bucket", "c2flow-keys", "--s3-access-key", srv.Access, "--s3-secret-key", srv.Secret}
	ctx := context.Background()
	first, second := t.TempDir(), t.TempDir()
	p, err := porep.LookupProfile("2KiB")
	if err != nil {
		t.Fatal(err)
	}
	// The first machine's cache holds the test cache's keys (a setup takes
	// a minute here); the setup step publishes them.
	prefix := params.Prefix(p.Name, paramstest.Keys(t, "2KiB").Digest)
	if err := os.CopyFS(filepath.Join(first, prefix), os.DirFS(filepath.Join(paramstest.Dir(), prefix))); err != nil {
		t.Fatal(err)
	}

	err = dispatch(ctx, append([]string{"circuit", "setup", "--profile", "2KiB", "--params", first}, s3...))
	if err == nil || !strings.Contains(err.Error(), `"c2flow-keys"`) {
		t.Fatalf("setup without the bucket nor --create-bucket: %v", err)
	}
	if err := dispatch(ctx, append([]string{"circuit", "setup", "--create-bucket", "--profile", "2KiB", "--params", first}, s3...)); err != nil {
		t.Fatal(err)
	}
	if err := dispatch(ctx, append([]string{"circuit", "setup", "--profile", "2KiB", "--params", second}, s3...)); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"vk", "pk"} {
		key := filepath.FromSlash(prefix + name)
		a, err := os.ReadFile(filepath.Join(first, key))
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(second, key))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a, b) {
			t.Fatalf("the second setup's %s differs from the published one: two development setups", name)
		}
	}
}
