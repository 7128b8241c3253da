package lab

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/c2flow/c2flow/cmd/c2flow/internal/cli"
	"github.com/c2flow/c2flow/cmd/c2flow/internal/pipeline"
	"github.com/c2flow/c2flow/filecoin/circuit"
	"github.com/c2flow/c2flow/filecoin/commcid"
	"github.com/c2flow/c2flow/filecoin/hash"
	"github.com/c2flow/c2flow/filecoin/update"
	"github.com/c2flow/c2flow/registry"
	"github.com/c2flow/c2flow/scheme"
)

// c2flow update writes, per sector, Curio's snap-vproof.json and the
// commitments (as hex and as the CIDs Curio holds): read back as a
// SnapDeals prover would, every partition's vanilla proof verifies
// against the commitments from the CIDs, and the hex and CID forms agree.
func TestUpdateCommand(t *testing.T) {
	dir := t.TempDir()
	if err := RunUpdate(context.Background(), []string{"--sectors", "2", "--first-id", "40", "--out", dir}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "updates.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m update.Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if len(m.Sectors) != 2 || m.Sectors[1].SectorID != 41 || m.Sectors[0].UpdateProof != "StackedDrg2KiBV1" {
		t.Fatalf("manifest: %+v", m)
	}
	fromCID := func(s string, k commcid.Kind) [32]byte {
		t.Helper()
		c, err := commcid.ParseString(s, k)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	s, err := circuit.UpdateShapeOf(2 << 10)
	if err != nil {
		t.Fatal(err)
	}
	for _, sec := range m.Sectors {
		vb, err := os.ReadFile(filepath.Join(dir, sec.Vanilla))
		if err != nil {
			t.Fatal(err)
		}
		parts, err := update.DecodeCurioVanilla(vb)
		if err != nil {
			t.Fatal(err)
		}
		var pub update.Public
		pub.H = sec.H
		for _, c := range []struct {
			cid, hexv string
			k         commcid.Kind
		}{{sec.SectorKey, sec.CommROld, commcid.Sealed}, {sec.SealedCID, sec.CommRNew, commcid.Sealed}, {sec.UnsealedCID, sec.CommDNew, commcid.Unsealed}} {
			v := fromCID(c.cid, c.k)
			if hex.EncodeToString(v[:]) != c.hexv {
				t.Fatalf("sector %d: CID %s holds %x, hex says %s", sec.SectorID, c.cid, v, c.hexv)
			}
		}
		var err1, err2, err3 error
		pub.CommROld, err1 = hash.ElementFromLE(fromCID(sec.SectorKey, commcid.Sealed))
		pub.CommRNew, err2 = hash.ElementFromLE(fromCID(sec.SealedCID, commcid.Sealed))
		pub.CommDNew, err3 = hash.ElementFromLE(fromCID(sec.UnsealedCID, commcid.Unsealed))
		if err1 != nil || err2 != nil || err3 != nil {
			t.Fatal(err1, err2, err3)
		}
		if len(parts) != s.Partitions() {
			t.Fatalf("sector %d: %d partition proofs", sec.SectorID, len(parts))
		}
		for k, p := range parts {
			if err := p.Verify(s, k, pub); err != nil {
				t.Errorf("sector %d: %v", sec.SectorID, err)
			}
		}
		// submit --snap-vproof with the CIDs admits what submit --c1 of
		// the update input identifies: one job, the same canonical bytes.
		set := registry.Schemes(registry.Options{})
		in, err := pipeline.SnapInput(context.Background(), set, filepath.Join(dir, sec.Vanilla),
			&cli.UpdateFlags{Proof: sec.UpdateProof, CommROld: sec.SectorKey, CommRNew: sec.SealedCID, CommDNew: sec.UnsealedCID},
			&pipeline.C1Flags{ProverID: sec.ProverID, SectorID: fmt.Sprint(sec.SectorID)})
		if err != nil {
			t.Fatalf("sector %d: --snap-vproof: %v", sec.SectorID, err)
		}
		raw, err := os.ReadFile(filepath.Join(dir, sec.Input))
		if err != nil {
			t.Fatal(err)
		}
		_, ref, canon, err := set.Identify(context.Background(), sec.Input, raw, scheme.Hints{})
		if err != nil {
			t.Fatal(err)
		}
		if in.Ref == nil || *in.Ref != ref || !bytes.Equal(in.Raw, canon) {
			t.Errorf("sector %d: --snap-vproof gives %+v, its update input %+v (canonical bytes equal: %v)", sec.SectorID, in.Ref, ref, bytes.Equal(in.Raw, canon))
		}
	}
}
