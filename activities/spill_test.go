package activities

import (
	"context"
	"errors"
	"io"
	"os"
	"testing"
)

func writeString(s string) func(io.Writer) error {
	return func(w io.Writer) error {
		_, err := io.WriteString(w, s)
		return err
	}
}

func TestDirSpill(t *testing.T) {
	ctx := context.Background()
	d := DirSpill{Root: t.TempDir()}
	if err := d.Put(ctx, "7/0/abc", 7, writeString("witness")); err != nil {
		t.Fatal(err)
	}
	r, err := d.Get(ctx, "7/0/abc")
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(r)
	r.Close()
	if err != nil || string(got) != "witness" {
		t.Fatalf("get: %q, %v", got, err)
	}
	// A writer that fails half-way leaves nothing: no spill, no temp file.
	broken := errors.New("synthesis host out of memory")
	if err := d.Put(ctx, "7/1/abc", 100, func(w io.Writer) error {
		io.WriteString(w, "half")
		return broken
	}); !errors.Is(err, broken) {
		t.Fatalf("failed write: %v", err)
	}
	if _, err := d.Get(ctx, "7/1/abc"); !errors.Is(err, ErrSpillMissing) {
		t.Fatalf("a failed spill is there: %v", err)
	}
	if left, _ := os.ReadDir(d.Root + "/7/1"); len(left) != 0 {
		t.Fatalf("temp files left: %v", left)
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
		if err := d.Put(ctx, bad, 0, writeString("")); err == nil {
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
