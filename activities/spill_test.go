package activities

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestDirSpill(t *testing.T) {
	ctx := context.Background()
	d := DirSpill{Root: t.TempDir()}
	if err := d.Put(ctx, "7/0/abc", []byte("witness")); err != nil {
		t.Fatal(err)
	}
	got, err := d.Get(ctx, "7/0/abc")
	if err != nil || string(got) != "witness" {
		t.Fatalf("get: %q, %v", got, err)
	}
	if _, err := os.Stat(filepath.Join(d.Root, "7/0/abc.tmp")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("temp file left: %v", err)
	}
	if err := d.Delete(ctx, "7/0/abc"); err != nil {
		t.Fatal(err)
	}
	if err := d.Delete(ctx, "7/0/abc"); err != nil {
		t.Fatalf("deleting twice: %v", err)
	}
	if _, err := d.Get(ctx, "7/0/abc"); !errors.Is(err, ErrSpillMissing) {
		t.Fatalf("deleted spill: %v", err)
	}
	for _, bad := range []string{"", "../x", "/etc/passwd", "a/../../b"} {
		if err := d.Put(ctx, bad, nil); err == nil {
			t.Errorf("key %q accepted", bad)
		}
	}
	for spec, ok := range map[string]bool{"": true, "dir:/tmp/x": true, "s3": false, "dir:": false, "nfs:/x": false} {
		_, err := ParseSpill(spec, nil)
		if (err == nil) != ok {
			t.Errorf("ParseSpill(%q): %v", spec, err)
		}
	}
}
