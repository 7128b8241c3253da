package snark_test

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/c2flow/c2flow/filecoin/fctest"
	"github.com/c2flow/c2flow/filecoin/snark"
)

// A box converts a circuit's .params once: the first process records the
// circuit and writes the key file, the next ones map both as they are (no
// conversion, no recording). A key file damaged in place is caught by its
// digest and converted again; one made from other parameters is never
// used for these.
func TestKeyFileConvertedOncePerBox(t *testing.T) {
	const proof = "StackedDrg2KiBV1_1"
	ctx := context.Background()
	dir := fctest.DevParams()
	if _, err := snark.DevSetup(ctx, proof, dir, fctest.Setups(), nil); err != nil {
		t.Fatal(err)
	}
	shapes := t.TempDir()
	load := func(what string) (snark.Mapped, string) {
		t.Helper()
		var logs bytes.Buffer
		s := snark.New(snark.Params{Dir: dir, ShapeDir: shapes}, slog.New(slog.NewTextHandler(&logs, nil)))
		m, err := s.Map(ctx, proof, true)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		return m, logs.String()
	}
	first, logs := load("first process")
	if !strings.Contains(logs, "circuit recorded and saved") || !strings.Contains(logs, "parameters converted to a key file") {
		t.Fatalf("the first process did not record and convert:\n%s", logs)
	}
	keys, err := filepath.Glob(filepath.Join(shapes, "keys", "*.gkey"))
	if err != nil || len(keys) != 1 {
		t.Fatalf("key files %v, %v", keys, err)
	}
	st, err := os.Stat(keys[0])
	if err != nil {
		t.Fatal(err)
	}
	if st.Size() != first.KeyBytes || first.KeyBytes < 1<<20 || first.SystemBytes < 1<<20 {
		t.Fatalf("mapped %+v, key file %d bytes", first, st.Size())
	}
	// c2flow plan sizes the key file from the counted circuit alone.
	plan, err := snark.PlanOf(proof)
	if err != nil {
		t.Fatal(err)
	}
	if plan.KeyFileBytes != first.KeyBytes {
		t.Errorf("plan: a key file of %d bytes, made: %d", plan.KeyFileBytes, first.KeyBytes)
	}

	second, logs := load("second process")
	if strings.Contains(logs, "circuit recorded") || strings.Contains(logs, "converted") {
		t.Fatalf("the second process recorded or converted again:\n%s", logs)
	}
	if second.Digest != first.Digest || second.KeyBytes != first.KeyBytes {
		t.Fatalf("second %+v, first %+v", second, first)
	}
	if st2, err := os.Stat(keys[0]); err != nil || !st2.ModTime().Equal(st.ModTime()) {
		t.Fatalf("the key file was rewritten: %v", err)
	}

	// One point's byte flipped in place: a new stamp, so the digest is
	// checked, fails, and the key is converted again.
	f, err := os.OpenFile(keys[0], os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	var b [1]byte
	if _, err := f.ReadAt(b[:], 8192); err != nil {
		t.Fatal(err)
	}
	b[0] ^= 0x40
	if _, err := f.WriteAt(b[:], 8192); err != nil {
		t.Fatal(err)
	}
	f.Close()
	third, logs := load("after damage")
	if !strings.Contains(logs, "key file unusable") || !strings.Contains(logs, "parameters converted to a key file") {
		t.Fatalf("a damaged key file was not converted again:\n%s", logs)
	}
	if third.KeyBytes != first.KeyBytes {
		t.Fatalf("after damage %+v", third)
	}
}
