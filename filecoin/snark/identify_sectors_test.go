package snark_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/c2flow/c2flow/filecoin/c1"
	"github.com/c2flow/c2flow/filecoin/proofs"
	"github.com/c2flow/c2flow/filecoin/seal"
	"github.com/c2flow/c2flow/filecoin/snark"
	"github.com/c2flow/c2flow/scheme"
)

// Identify (what `c2flow submit` runs) checks a Filecoin C1 against every
// public datum its sectors.json gives, as `c2flow c1 check` does: a
// comm_r or proof the C1 does not match is refused, not submitted.
func TestIdentifyChecksSectorsJSON(t *testing.T) {
	s, err := seal.Seal(context.Background(), seal.TestParams(proofs.StackedDrg2KiBV1_1, proofs.ProverID(1000), 3))
	if err != nil {
		t.Fatal(err)
	}
	var raw bytes.Buffer
	if err := c1.Encode(&raw, s.C1); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name   string
		change func(*seal.Manifest)
		want   string // "" accepts
	}{
		{"as sealed", func(*seal.Manifest) {}, ""},
		{"comm_r edited", func(m *seal.Manifest) { m.Sectors[0].CommR = "0x" + strings.Repeat("11", 32) }, "does not verify natively"},
		{"another proof", func(m *seal.Manifest) { m.Proof = "StackedDrg8MiBV1_1" }, "StackedDrg8MiBV1_1"},
		{"another prover", func(m *seal.Manifest) { m.Sectors[0].ProverID = "0x" + strings.Repeat("22", 32) }, "replica"},
	} {
		dir := t.TempDir()
		file := filepath.Join(dir, "3.c1.json")
		if err := os.WriteFile(file, raw.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		m := &seal.Manifest{Proof: "StackedDrg2KiBV1_1", Sectors: []seal.ManifestEntry{seal.EntryOf(s.Public, "3.c1.json")}}
		c.change(m)
		if err := seal.WriteManifest(filepath.Join(dir, "sectors.json"), m); err != nil {
			t.Fatal(err)
		}
		ref, _, err := snark.New(snark.Params{}, nil).Identify(context.Background(), file, raw.Bytes(), scheme.Hints{})
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.want == "" && (ref.SectorID != 3 || ref.Profile != "StackedDrg2KiBV1_1"):
			t.Errorf("%s: %+v", c.name, ref)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: %v, want an error saying %q", c.name, err, c.want)
		}
	}
}
