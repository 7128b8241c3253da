package main

import (
	"context"
	"fmt"
	"os"

	"github.com/c2flow/c2flow/batch"
	"github.com/c2flow/c2flow/cmd/internal/cliflags"
	"github.com/c2flow/c2flow/params"
	"github.com/c2flow/c2flow/prover"
)

// runVerify checks a C2 proof file against the public inputs of its C1,
// with the verifying key of the local parameter cache: exit 0 only if
// every partition verifies.
func runVerify(ctx context.Context, args []string) error {
	fs := newFlags("verify")
	c1Path := fs.String("c1", "", "the sector's C1 file")
	proofPath := fs.String("proof", "", "the C2 proof file (as `submit --out` writes it)")
	dir := fs.String("params", params.DefaultDir(), "local parameter cache holding the profile's keys")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *c1Path == "" || *proofPath == "" {
		return fmt.Errorf("verify: --c1 and --proof are required")
	}
	c1, err := readC1(*c1Path)
	if err != nil {
		return err
	}
	raw, err := os.ReadFile(*proofPath)
	if err != nil {
		return fmt.Errorf("verify: %w", err)
	}
	c2, err := prover.UnmarshalC2(raw)
	if err != nil {
		return fmt.Errorf("verify: %s: %w", *proofPath, err)
	}
	keys, err := params.LoadExisting(ctx, params.DirStore{Root: *dir}, c1.Profile, nil)
	if err != nil {
		return fmt.Errorf("verify: %w", err)
	}
	if err := prover.VerifyC2(keys.VK, c1.Statement(), c2); err != nil {
		return fmt.Errorf("verify: %s does not prove %s: %w", *proofPath, *c1Path, err)
	}
	fmt.Printf("%s: ok: %d partition proofs verify for sector %d (%s, vk %s)\n", *proofPath, len(c2.Proofs), c1.SectorID, c1.Profile.Name, keys.VKSHA256[:16])
	return nil
}

// runCancel asks a batch to cancel: sectors not started are not started,
// sectors in flight are canceled; a sector already storing its C2 finishes
// and is reported proved, so the result says exactly what was stored.
func runCancel(ctx context.Context, args []string) error {
	fs := newFlags("cancel")
	var tf cliflags.Temporal
	var lf cliflags.Log
	tf.Add(fs)
	lf.Add(fs, "warn")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return fmt.Errorf("usage: c2flow cancel [flags] BATCH-ID")
	}
	log, err := lf.Logger()
	if err != nil {
		return err
	}
	c, err := tf.Dial(ctx, log)
	if err != nil {
		return err
	}
	defer c.Close()
	if err := batch.Cancel(ctx, c, fs.Arg(0)); err != nil {
		return fmt.Errorf("cancel batch %s: %w", fs.Arg(0), err)
	}
	fmt.Printf("batch %s: cancel requested; `c2flow status %s` shows what was stored\n", fs.Arg(0), fs.Arg(0))
	return nil
}
