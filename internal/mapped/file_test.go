package mapped

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestFileRoundTrip(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f.map")
	a := []uint64{1, 2, 3, 1 << 60}
	b := []uint16{7, 8, 9}
	type meta struct{ N int }
	if err := Write(path, "test", meta{N: 4}, Bytes(a), Bytes(b), nil); err != nil {
		t.Fatal(err)
	}
	stamps := Stamps{Dir: filepath.Join(dir, "stamps")}
	f, err := Open(context.Background(), path, "test", stamps)
	if err != nil {
		t.Fatal(err)
	}
	ga, err := Slice[uint64](f.Sections[0], 4)
	if err != nil {
		t.Fatal(err)
	}
	gb, err := Slice[uint16](f.Sections[1], 3)
	if err != nil {
		t.Fatal(err)
	}
	if ga[3] != 1<<60 || gb[2] != 9 || len(f.Sections[2]) != 0 || string(f.Meta) != `{"N":4}` {
		t.Fatalf("read back %v %v %q", ga, gb, f.Meta)
	}
	if _, err := Slice[uint64](f.Sections[1], 1); !errors.Is(err, ErrBadFile) {
		t.Fatalf("a section of the wrong size: %v", err)
	}
	f.Close()
	if _, err := Open(context.Background(), path, "other", stamps); !errors.Is(err, ErrBadFile) {
		t.Fatalf("another kind: %v", err)
	}

	// A byte changed in place (same size, a new stamp) is caught by the digest.
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	raw[len(raw)-40] ^= 1
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(context.Background(), path, "test", stamps); !errors.Is(err, ErrBadFile) {
		t.Fatalf("a corrupt file: %v", err)
	}
	if _, err := Open(context.Background(), filepath.Join(dir, "none"), "test", stamps); err == nil {
		t.Fatal("a missing file opened")
	}
}

func TestStampsFollowTheFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "x")
	if err := os.WriteFile(path, []byte("one"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := Stamps{Dir: filepath.Join(dir, "stamps")}
	before, err := Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Put(path, before, "sum-one"); err != nil {
		t.Fatal(err)
	}
	var v string
	if !s.Get(path, &v) || v != "sum-one" {
		t.Fatalf("got %q", v)
	}
	// Replaced by rename: a new inode and change time.
	tmp := filepath.Join(dir, "y")
	if err := os.WriteFile(tmp, []byte("two"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
	if s.Get(path, &v) {
		t.Fatal("a replaced file kept its old value")
	}
	// Changed after the stamp was taken: nothing is recorded.
	if err := os.WriteFile(path, []byte("three"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := s.Put(path, before, "stale"); !errors.Is(err, ErrChanged) {
		t.Fatalf("a stale stamp recorded: %v", err)
	}
}
