package lab

import (
	"context"
	"fmt"
	"os"

	"github.com/c2flow/c2flow/cmd/c2flow/internal/cli"
	"github.com/c2flow/c2flow/filecoin/proofs"
	"github.com/c2flow/c2flow/filecoin/seal"
	"github.com/c2flow/c2flow/registry"
	"github.com/c2flow/c2flow/scheme"
)

// RunUpdate is the test updater (the SnapDeals scheme's SealTest): it seals
// committed-capacity sectors of --proof's size, encodes deterministic new
// data into each replica and writes each update's vanilla proofs as Curio
// stores them (<id>.snap-vproof.json) and as c2flow proves them
// (<id>.update.json), with updates.json. Every partition's vanilla proof
// is verified before it is written.
func RunUpdate(ctx context.Context, args []string) error {
	fs := cli.NewFlags("update")
	proof := fs.String("proof", "StackedDrg2KiBV1_1", "the sealed sectors' registered seal proof (dense sealing: 2KiB and 8MiB)")
	n := fs.Int("sectors", 1, "number of sectors")
	first := fs.Uint64("first-id", 1, "sector id of the first sector")
	out := fs.String("out", "update", "output directory")
	proverHex := fs.String("prover-id", "", "the 32-byte prover id in hex (default: the bytes of \"c2flow test prover\")")
	if err := fs.Parse(args); err != nil {
		return err
	}
	info, err := proofs.ByName(*proof)
	if err != nil {
		return fmt.Errorf("update: --proof: %w", err)
	}
	up, err := proofs.UpdateForSectorSize(info.SectorSize)
	if err != nil {
		return fmt.Errorf("update: %w", err)
	}
	prover := scheme.TestProver()
	if *proverHex != "" {
		if prover, err = seal.ParseHex32(*proverHex); err != nil {
			return fmt.Errorf("update: --prover-id: %w", err)
		}
	}
	u, err := cli.UpdaterOf(registry.Schemes(registry.Options{}))
	if err != nil {
		return fmt.Errorf("update: %w", err)
	}
	sealer, err := scheme.As[scheme.TestSealer](u, "test sealer")
	if err != nil {
		return fmt.Errorf("update: %w", err)
	}
	_, err = sealer.SealTest(ctx, scheme.SealRequest{Proof: u.UpdateProofName(up), Prover: prover, First: *first, N: *n, Dir: *out, Progress: os.Stderr})
	return err
}
