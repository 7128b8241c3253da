package lab

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/c2flow/c2flow/cmd/c2flow/internal/cli"
	"github.com/c2flow/c2flow/registry"
)

// RunPlan prints what a box needs for a proof: disk, keys and system in
// memory, per partition and per device, from the circuit's counts alone
// (a 32GiB circuit is counted in a minute, nothing recorded).
func RunPlan(ctx context.Context, args []string) error {
	fs := cli.NewFlags("plan")
	proof := fs.String("proof", "", "a registered seal proof (StackedDrg32GiBV1_1), update proof (UpdateStackedDrg32GiBV1) or PoSt proof (StackedDrgWindow32GiBV1_2, StackedDrgWinning32GiBV1)")
	processes := fs.Int("processes", 1, "worker processes on the box (c2flow-worker@N.service: one per GPU)")
	partitions := fs.Int("partition-workers", 2, "partitions in flight on the box")
	gpus := fs.Int("gpus", 1, "devices on the box")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 0 || *proof == "" {
		fs.Usage()
		return errors.New("plan: usage: c2flow plan --proof P [--processes N] [--partition-workers N] [--gpus N]")
	}
	if *processes < 1 || *partitions < 1 || *gpus < 0 {
		return fmt.Errorf("plan: --processes %d, --partition-workers %d, --gpus %d: at least 1, 1 and 0", *processes, *partitions, *gpus)
	}
	p, err := registry.PlanOf(*proof)
	if err != nil {
		return err
	}
	return p.Write(os.Stdout, *processes, *partitions, *gpus)
}
