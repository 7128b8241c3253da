package params_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/c2flow/c2flow/scheme/testscheme/params"
	"github.com/c2flow/c2flow/scheme/testscheme/params/paramstest"
	"github.com/c2flow/c2flow/scheme/testscheme/porep"
)

// recorder is a DirStore that records the order of Puts.
type recorder struct {
	params.DirStore
	mu   sync.Mutex
	puts []string
}

func (r *recorder) Put(ctx context.Context, key string, write func(io.Writer) error) error {
	r.mu.Lock()
	r.puts = append(r.puts, key[strings.LastIndex(key, "/")+1:])
	r.mu.Unlock()
	return r.DirStore.Put(ctx, key, write)
}

// writeKeys writes the 2KiB keys, with their digests file, into a fresh
// directory, and returns the store and the keys' file prefix there.
func writeKeys(t *testing.T) (params.DirStore, string) {
	t.Helper()
	k := *paramstest.Keys(t, "2KiB") // a copy: Write sets its digests
	rec := &recorder{DirStore: params.DirStore{Root: t.TempDir()}}
	if err := k.Write(context.Background(), rec); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(rec.puts, " "); got != "r1cs pk "+params.DigestsFile+" vk" {
		t.Fatalf("written in the order %s: the vk, which marks a complete set, must be last", got)
	}
	return rec.DirStore, filepath.Join(rec.Root, filepath.FromSlash(k.Prefix()))
}

func load(t *testing.T, store params.Store, log *slog.Logger) (*params.Keys, error) {
	t.Helper()
	p, err := porep.LookupProfile("2KiB")
	if err != nil {
		t.Fatal(err)
	}
	return params.LoadExisting(context.Background(), store, p, log)
}

func digests(t *testing.T, dir string) params.Digests {
	t.Helper()
	var d params.Digests
	b, err := os.ReadFile(filepath.Join(dir, params.DigestsFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	return d
}

func flip(t *testing.T, file string, at int, mask byte) {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	b[at] ^= mask
	if err := os.WriteFile(file, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

func quarantined(t *testing.T, file string) []string {
	t.Helper()
	m, _ := filepath.Glob(file + ".bad-*")
	return m
}

func TestDigestsFileRecordsTheFiles(t *testing.T) {
	store, dir := writeKeys(t)
	d := digests(t, dir)
	for _, n := range []string{"r1cs", "pk", "vk"} {
		b, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil {
			t.Fatal(err)
		}
		if f := d.Files[n]; f.SHA256 != hexSum(b) || f.Bytes != int64(len(b)) {
			t.Errorf("%s: recorded %+v, file has SHA-256 %s and %d bytes", n, f, hexSum(b), len(b))
		}
	}
	k, err := load(t, store, nil)
	if err != nil {
		t.Fatal(err)
	}
	if k.PKSHA256 != d.Files["pk"].SHA256 || k.VKSHA256 != d.Files["vk"].SHA256 {
		t.Errorf("loaded keys pin pk %s vk %s, the digests file records %s %s", k.PKSHA256, k.VKSHA256, d.Files["pk"].SHA256, d.Files["vk"].SHA256)
	}
}

// A flipped byte, in a point or in a length, in a directory with nothing
// behind it: the load fails naming the file and both digests, and the
// copy is moved aside; the next load finds no keys.
func TestCorruptKeyWithoutSource(t *testing.T) {
	for name, at := range map[string]int{
		"point":  1 << 20,
		"header": 8 + 5*32 + 1 + 3*96, // the top byte of G1.A's length: 2^31 points
	} {
		t.Run(name, func(t *testing.T) {
			store, dir := writeKeys(t)
			want := digests(t, dir).Files["pk"].SHA256
			pk := filepath.Join(dir, "pk")
			flip(t, pk, at, 0x80)
			b, _ := os.ReadFile(pk)
			_, err := load(t, store, nil)
			if !errors.Is(err, params.ErrMismatch) || errors.Is(err, params.ErrNotFound) {
				t.Fatalf("load: %v", err)
			}
			for _, s := range []string{"/pk:", want, hexSum(b), "moved aside"} {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error does not say %q: %v", s, err)
				}
			}
			if len(quarantined(t, pk)) != 1 {
				t.Errorf("pk not moved aside")
			}
			if _, err := load(t, store, nil); !errors.Is(err, params.ErrNotFound) || !strings.Contains(err.Error(), "circuit setup") {
				t.Errorf("second load: %v", err)
			}
		})
	}
}

// Keys without a digests file (made before it existed) load with a
// warning; a corrupt one is still an error, never a panic.
func TestKeysWithoutDigests(t *testing.T) {
	store, dir := writeKeys(t)
	if err := os.Remove(filepath.Join(dir, params.DigestsFile)); err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	if _, err := load(t, store, slog.New(slog.NewTextHandler(&logs, nil))); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(logs.String(), "level=WARN") || !strings.Contains(logs.String(), params.DigestsFile) {
		t.Errorf("no warning: %s", logs.String())
	}
	flip(t, filepath.Join(dir, "pk"), 8+5*32+1+3*96, 0x80)
	_, err := load(t, store, nil)
	if !errors.Is(err, params.ErrMalformed) || !strings.Contains(err.Error(), "G1.A") || !strings.Contains(err.Error(), "/pk") {
		t.Fatalf("load: %v", err)
	}
}

// pk and vk swapped: the vk is not the file its digests file records.
func TestSwappedKeys(t *testing.T) {
	store, dir := writeKeys(t)
	pk, vk := filepath.Join(dir, "pk"), filepath.Join(dir, "vk")
	if err := os.Rename(pk, pk+".tmp"); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(vk, pk); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(pk+".tmp", vk); err != nil {
		t.Fatal(err)
	}
	_, err := load(t, store, nil)
	if !errors.Is(err, params.ErrMismatch) || !strings.Contains(err.Error(), "/vk:") {
		t.Fatalf("load: %v", err)
	}
}

// A digests file that does not parse, with no source behind it, is an
// error and stays where it is (moving it aside would turn the checks off).
func TestCorruptDigestsFile(t *testing.T) {
	store, dir := writeKeys(t)
	file := filepath.Join(dir, params.DigestsFile)
	flip(t, file, 0, 0xff)
	_, err := load(t, store, nil)
	if !errors.Is(err, params.ErrMalformed) || !strings.Contains(err.Error(), params.DigestsFile) {
		t.Fatalf("load: %v", err)
	}
	if _, err := os.Stat(file); err != nil || len(quarantined(t, file)) != 0 {
		t.Errorf("digests file moved: %v", err)
	}
}
