package lab

import (
	"context"
	"flag"
	"fmt"
	"os"

	"github.com/c2flow/c2flow/cmd/internal/procflags"
	"github.com/c2flow/c2flow/gpu"
	"github.com/c2flow/c2flow/prover"
	"github.com/c2flow/c2flow/scheme/testscheme"
	"github.com/c2flow/c2flow/scheme/testscheme/params"
	"github.com/c2flow/c2flow/scheme/testscheme/porep"
)

// proverFlags are bench prover's: it proves in this process.
type proverFlags struct {
	procflags.Devices
	procflags.Log
}

func (f *proverFlags) add(fs *flag.FlagSet) { f.Devices.Add(fs) }

// prover is bench prover's: the test scheme's keys of p (a development
// setup when the cache has none) and the devices.
func (f *proverFlags) prover(ctx context.Context, p porep.Profile) (*prover.Prover, *params.Keys, *gpu.Slots, error) {
	log, err := f.Logger()
	if err != nil {
		return nil, nil, nil, err
	}
	// Devices first: a build without CUDA says so before any setup runs.
	slots, err := f.Slots(log)
	if err != nil {
		return nil, nil, nil, err
	}
	keys, err := params.Load(ctx, params.DirStore{Root: f.Params}, p, log)
	if err != nil {
		return nil, nil, nil, err
	}
	pk, err := testscheme.ProverKeys(keys)
	if err != nil {
		return nil, nil, nil, err
	}
	pr, err := prover.New(pk, log)
	if err != nil {
		return nil, nil, nil, err
	}
	pr.EarlyG2 = f.EarlyG2
	return pr, keys, slots, nil
}

// readC1 reads and checks a test-scheme C1 file (bench and demo seal
// their own).
func readC1(path string) (*porep.C1, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	c1, err := porep.DecodeC1(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if err := c1.Verify(porep.NewHasher()); err != nil {
		return nil, fmt.Errorf("%s: c1 does not verify: %w", path, err)
	}
	return c1, nil
}
