package testscheme

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/c2flow/c2flow/scheme"
	"github.com/c2flow/c2flow/scheme/testscheme/params"
	"github.com/c2flow/c2flow/scheme/testscheme/porep"
)

// Missing: keys of the current circuit count, an older circuit's do not;
// EnsureKeys without dev refuses a profile with none, naming the fix.
func TestMissingKeys(t *testing.T) {
	p, err := porep.LookupProfile("2KiB")
	if err != nil {
		t.Fatal(err)
	}
	store := params.DirStore{Root: t.TempDir()}
	ctx := context.Background()
	missing, err := Missing(ctx, store, p)
	if err != nil || !missing {
		t.Fatalf("empty cache: missing %v, %v", missing, err)
	}
	_, digest, err := params.Compile(p)
	if err != nil {
		t.Fatal(err)
	}
	// Keys of another circuit (an old digest) do not count.
	other := filepath.Join(store.Root, filepath.FromSlash(params.Prefix(p.Name, "0000000000000000")))
	if err := os.MkdirAll(other, 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(other, "vk"), []byte("x"), 0o644)
	if missing, _ := Missing(ctx, store, p); !missing {
		t.Fatalf("keys of another circuit counted: missing %v", missing)
	}
	dir := filepath.Join(store.Root, filepath.FromSlash(params.Prefix(p.Name, digest)))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "vk"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if missing, err := Missing(ctx, store, p); err != nil || missing {
		t.Fatalf("cached keys: missing %v, %v", missing, err)
	}
}

func TestEnsureKeysWithoutDevRefuses(t *testing.T) {
	store := params.DirStore{Root: t.TempDir()}
	err := New(store).EnsureKeys(context.Background(), "2KiB", false, &strings.Builder{})
	if !errors.Is(err, scheme.ErrNoKeys) || !strings.Contains(err.Error(), "c2flow circuit setup --profile 2KiB") || !strings.Contains(err.Error(), "--dev-setup") {
		t.Fatalf("EnsureKeys without keys nor dev: %v", err)
	}
	if ents, _ := os.ReadDir(store.Root); len(ents) != 0 {
		t.Fatalf("a refused EnsureKeys wrote %d entries", len(ents))
	}
}
