package lab

import (
	"context"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/c2flow/c2flow/cmd/c2flow/internal/pipeline"
	"github.com/c2flow/c2flow/scheme"
)

// Submission identifies a Filecoin C1 by its prover and sector (the
// sectors.json c2flow seal wrote, or the flags) and verifies it natively
// before anything is uploaded: a C1 without a prover, with the wrong
// prover, or whose proofs do not match it is refused with the reason.
func TestIdentifyFilecoinC1(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	if err := dispatch(ctx, []string{"seal", "--proof", "StackedDrg2KiBV1_1", "--sectors", "1", "--first-id", "9", "--out", dir}); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "9.c1.json")
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	prover := scheme.TestProver()
	ref, _, err := pipeline.IdentifyC1(&pipeline.C1Flags{})(ctx, path, raw)
	if err != nil {
		t.Fatal(err)
	}
	if ref.ProverID != hex.EncodeToString(prover[:]) || ref.SectorID != 9 || ref.Proof != "StackedDrg2KiBV1_1" || len(ref.InputDigest) != 64 {
		t.Fatalf("identity from sectors.json: %+v", ref)
	}

	// The same file elsewhere, no sectors.json: the prover must be given.
	alone := filepath.Join(t.TempDir(), "9.c1.json")
	if err := os.WriteFile(alone, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := pipeline.IdentifyC1(&pipeline.C1Flags{})(ctx, alone, raw); err == nil || !strings.Contains(err.Error(), "--prover-id") {
		t.Fatalf("no prover: %v", err)
	}
	if r, _, err := pipeline.IdentifyC1(&pipeline.C1Flags{ProverID: hex.EncodeToString(prover[:])})(ctx, alone, raw); err != nil || r != ref {
		t.Fatalf("--prover-id and the file name: %+v %v", r, err)
	}
	other := prover
	other[0] ^= 1
	if _, _, err := pipeline.IdentifyC1(&pipeline.C1Flags{ProverID: hex.EncodeToString(other[:])})(ctx, alone, raw); err == nil || !strings.Contains(err.Error(), "replica_id") {
		t.Fatalf("another prover's id: %v", err)
	}
	if _, _, err := pipeline.IdentifyC1(&pipeline.C1Flags{ProverID: hex.EncodeToString(prover[:]), SectorID: "10"})(ctx, alone, raw); err == nil || !strings.Contains(err.Error(), "replica_id") {
		t.Fatalf("another sector id: %v", err)
	}

	// A C1 whose comm_r does not match its proofs decodes but fails the
	// native check.
	i := strings.Index(string(raw), `"comm_r":[`) + len(`"comm_r":[`)
	bad := []byte(string(raw[:i]) + strings.Replace(string(raw[i:]), "1", "2", 1))
	if _, _, err := pipeline.IdentifyC1(&pipeline.C1Flags{ProverID: hex.EncodeToString(prover[:])})(ctx, alone, bad); err == nil || !strings.Contains(err.Error(), "natively") {
		t.Fatalf("a C1 that does not verify: %v", err)
	}
}
