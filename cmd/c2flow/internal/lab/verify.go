package lab

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/c2flow/c2flow/cmd/c2flow/internal/cli"
	"github.com/c2flow/c2flow/cmd/c2flow/internal/pipeline"
	"github.com/c2flow/c2flow/filecoin/c2"
	"github.com/c2flow/c2flow/filecoin/groth"
	"github.com/c2flow/c2flow/params"
	"github.com/c2flow/c2flow/scheme/testscheme"
)

// RunVerify checks a C2 proof file against the public inputs of its C1,
// with the verifying key of the local parameter cache: exit 0 only if
// every partition verifies.
func RunVerify(ctx context.Context, args []string) error {
	fs := cli.NewFlags("verify")
	c1Path := fs.String("c1", "", "the sector's C1 file")
	proofPath := fs.String("proof", "", "the C2 proof file (as `submit --out` writes it)")
	dir := fs.String("params", params.DefaultDir(), "local parameter cache holding the profile's keys")
	fcDir := fs.String("filecoin-params", c2.DefaultDir(), "Filecoin C1: Filecoin's parameter directory (the proof's .vk and parameters.json)")
	var cf pipeline.C1Flags
	cf.Add(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *c1Path == "" || *proofPath == "" {
		return fmt.Errorf("verify: --c1 and --proof are required")
	}
	if looksFilecoin(*c1Path) {
		return verifyFilecoin(ctx, *c1Path, *proofPath, *fcDir, &cf)
	}
	c1, err := readC1(*c1Path)
	if err != nil {
		return err
	}
	raw, err := readProofFile(*proofPath, testscheme.C2Size(c1.Profile.Name, c1.Profile.Partitions), fmt.Sprintf("a %s C2 of %d partitions", c1.Profile.Name, c1.Profile.Partitions))
	if err != nil {
		return err
	}
	c2, err := testscheme.UnmarshalC2(raw)
	if err != nil {
		return fmt.Errorf("verify: %s: %w", *proofPath, err)
	}
	keys, err := params.LoadExisting(ctx, params.DirStore{Root: *dir}, c1.Profile, nil)
	if err != nil {
		return fmt.Errorf("verify: %w", err)
	}
	if err := testscheme.VerifyC2(keys.VK, c1.Statement(), c2); err != nil {
		return fmt.Errorf("verify: %s does not prove %s: %w", *proofPath, *c1Path, err)
	}
	fmt.Printf("%s: ok: %d partition proofs verify for sector %d (%s, vk %s)\n", *proofPath, len(c2.Proofs), c1.SectorID, c1.Profile.Name, keys.VKSHA256[:16])
	return nil
}

// verifyFilecoin checks a Filecoin C2 (the concatenated 192-byte
// partition proofs, as SealCommitPhase2 returns them) against its C1's
// public inputs for the sector's identity, under the proof's .vk of dir.
func verifyFilecoin(ctx context.Context, c1Path, proofPath, dir string, cf *pipeline.C1Flags) error {
	raw, err := os.ReadFile(c1Path)
	if err != nil {
		return fmt.Errorf("verify: %w", err)
	}
	ref, err := pipeline.IdentifyC1(cf)(ctx, c1Path, raw)
	if err != nil {
		return fmt.Errorf("verify: %s: %w", c1Path, err)
	}
	fc := c2.New(c2.Params{Dir: dir}, nil)
	s, err := fc.Decode(raw, ref)
	if err != nil {
		return fmt.Errorf("verify: %s: %w", c1Path, err)
	}
	proof, err := readProofFile(proofPath, int64(s.Partitions())*groth.ProofSize, fmt.Sprintf("a Filecoin C2 of %d partitions", s.Partitions()))
	if err != nil {
		return err
	}
	circ, err := fc.LoadVerifier(ctx, ref.Profile) // the .vk alone
	if err != nil {
		return fmt.Errorf("verify: %w", err)
	}
	if err := circ.VerifyC2(s, proof); err != nil {
		return fmt.Errorf("verify: %s does not prove %s: %w", proofPath, c1Path, err)
	}
	dev := ""
	if circ.Dev() {
		dev = " (DEVELOPMENT SETUP)"
	}
	fmt.Printf("%s: ok: %d partition proofs verify for %s (%s, %s%s)\n", proofPath, s.Partitions(), ref, ref.Profile, filepath.Base(circ.Files().VK), dev)
	return nil
}

// readProofFile reads a proof file of at most max bytes (what is
// expected, a C2 of so many partitions): a longer file is refused before
// it is read, never held in memory whole.
func readProofFile(path string, max int64, expected string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("verify: %w", err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() && fi.Size() > max {
		return nil, fmt.Errorf("verify: proof file %s is %d bytes; %s is %d: not its proof", path, fi.Size(), expected, max)
	}
	b, err := io.ReadAll(io.LimitReader(f, max+1)) // a pipe, or a file that grew
	if err != nil {
		return nil, fmt.Errorf("verify: read proof file %s: %w", path, err)
	}
	if int64(len(b)) > max {
		return nil, fmt.Errorf("verify: proof file %s is over %d bytes; %s is %d: not its proof", path, max, expected, max)
	}
	return b, nil
}
