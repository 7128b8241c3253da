package lab

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"time"

	"github.com/c2flow/c2flow/cmd/c2flow/internal/cli"
	"github.com/c2flow/c2flow/filecoin/seal"
	"github.com/c2flow/c2flow/registry"
	"github.com/c2flow/c2flow/scheme"
	"github.com/c2flow/c2flow/scheme/testscheme/porep"
)

// RunSeal writes test sectors of either scheme: the scheme that owns
// --profile (c2flow's test profiles) or --proof (Filecoin's registered
// seal proofs) seals them (Scheme.SealTest).
func RunSeal(ctx context.Context, args []string) error {
	fs := cli.NewFlags("seal")
	profile := fs.String("profile", "32KiB", "test-scheme profile: "+fmt.Sprint(porep.ProfileNames()))
	proof := fs.String("proof", "", "seal Filecoin sectors of this registered seal proof (e.g. StackedDrg2KiBV1_1) instead of a --profile; writes <sector-id>.c1.json (SealCommitPhase1Output JSON as filecoin-ffi writes it) and sectors.json (public data)")
	n := fs.Int("sectors", 2, "number of sectors")
	first := fs.Uint64("first-id", 1, "sector id of the first sector")
	fs.Uint64Var(first, "first-sector", 1, "alias of --first-id")
	out := fs.String("out", "c1", "output directory")
	proverID := fs.String("prover-id", "", "the 32-byte prover id in hex (default: the bytes of \"c2flow test prover\"); a sector is (prover id, sector number, C1 digest)")
	sparse := fs.Bool("sparse", false, "with --proof: seal committed-capacity sectors sparsely (only the opened nodes hold real labels; seconds for any size, automatic above 512MiB); see filecoin/seal.SealSparse")
	if err := fs.Parse(args); err != nil {
		return err
	}
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	if given["proof"] && given["profile"] {
		return errors.New("--proof and --profile are exclusive")
	}
	name := *profile
	if given["proof"] {
		name = *proof
	}
	if *n < 1 {
		return fmt.Errorf("--sectors must be at least 1")
	}
	// The ids are first .. first+n-1: one past 2^64-1 would wrap to 0.
	if *first > math.MaxUint64-uint64(*n-1) {
		return fmt.Errorf("--first-id %d with --sectors %d: the last sector id overflows 64 bits", *first, *n)
	}
	prover := scheme.TestProver()
	if *proverID != "" {
		var err error
		if prover, err = seal.ParseHex32(*proverID); err != nil {
			return fmt.Errorf("--prover-id: %w", err)
		}
	}
	sc, err := testSealer(name)
	if err != nil {
		return fmt.Errorf("seal: %w", err)
	}
	_, err = sc.SealTest(ctx, scheme.SealRequest{Proof: name, Prover: prover, First: *first, N: *n, Dir: *out, Sparse: *sparse, Progress: os.Stderr})
	return err
}

// sealFresh seals n test sectors of proof (either scheme's) with fresh
// sector ids into dir, for runs that must prove rather than find earlier
// results (demo, bench batch), and returns their C1 files.
func sealFresh(ctx context.Context, dir, proof string, n int) ([]string, error) {
	if n == 0 {
		return nil, nil
	}
	sc, err := testSealer(proof)
	if err != nil {
		return nil, err
	}
	first := uint64(time.Now().UnixNano()/1e6) * 1000 // below 2^63: Filecoin's bound
	return sc.SealTest(ctx, scheme.SealRequest{Proof: proof, Prover: scheme.TestProver(), First: first, N: n, Dir: dir})
}

// testSealer is the scheme owning proof, as the sealer of its test
// sectors.
func testSealer(proof string) (scheme.TestSealer, error) {
	sc, err := registry.Schemes(registry.Options{}).For(proof)
	if err != nil {
		return nil, err
	}
	return scheme.As[scheme.TestSealer](sc, "test sealer")
}
