package lab

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/c2flow/c2flow/cmd/c2flow/internal/cli"
	"github.com/c2flow/c2flow/cmd/internal/cliflags"
	"github.com/c2flow/c2flow/gpu"
	"github.com/c2flow/c2flow/params"
	"github.com/c2flow/c2flow/porep"
	"github.com/c2flow/c2flow/prover"
	"github.com/c2flow/c2flow/scheme"
	"github.com/c2flow/c2flow/scheme/testscheme"
)

// proverFlags are the flags of commands that prove in this process.
type proverFlags struct {
	cliflags.Devices
	cliflags.Log
}

func (f *proverFlags) add(fs *flag.FlagSet) { f.Devices.Add(fs) }

func (f *proverFlags) prover(ctx context.Context, p porep.Profile) (*prover.Prover, *params.Keys, *gpu.Slots, error) {
	log, err := f.Logger()
	if err != nil {
		return nil, nil, nil, err
	}
	// Devices first: a build without CUDA says so before any setup runs.
	slots, err := f.Slots()
	if err != nil {
		return nil, nil, nil, err
	}
	keys, err := params.Load(ctx, params.DirStore{Root: f.Params}, p, log)
	if err != nil {
		return nil, nil, nil, err
	}
	pr, err := prover.New(testscheme.ProverKeys(keys), log)
	if err != nil {
		return nil, nil, nil, err
	}
	pr.EarlyG2 = f.EarlyG2
	return pr, keys, slots, nil
}

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

func RunProve(ctx context.Context, args []string) error {
	fs := cli.NewFlags("prove")
	in := fs.String("c1", "", "C1 file (JSON): c2flow's own, or a Filecoin SealCommitPhase1Output (raw or Commit2In), proved under Filecoin's parameters in --params (then Filecoin's parameter directory; default $FIL_PROOFS_PARAMETER_CACHE, else /var/tmp/filecoin-proof-parameters)")
	out := fs.String("out", "", "C2 output file (default: <c1 without .c1.json>.c2; Filecoin C1: <c1 without .c1.json>.proof, the partitions' 192-byte proofs concatenated)")
	var pf proverFlags
	pf.add(fs)
	pf.Log.Add(fs, "warn")
	var ff filecoinProveFlags
	ff.add(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *in == "" {
		return fmt.Errorf("prove: --c1 is required")
	}
	if ff.vk != "" || ff.pkParams != "" || looksFilecoin(*in) {
		// --params names Filecoin's parameter directory here.
		dir := filecoinParamsDir()
		fs.Visit(func(fl *flag.Flag) {
			if fl.Name == "params" {
				dir = pf.Params
			}
		})
		return proveFilecoin(ctx, *in, *out, dir, &ff, &pf, os.Stdout, os.Stderr)
	}
	c1, err := readC1(*in)
	if err != nil {
		return err
	}
	pr, keys, slots, err := pf.prover(ctx, c1.Profile)
	if err != nil {
		return err
	}
	t0 := time.Now()
	c2, _, err := testscheme.ProveSector(ctx, pr, keys, slots, c1, func(t scheme.PartitionTimes) {
		fmt.Fprintf(os.Stderr, "partition %s: synth %v, device %v, finalize %v (verified)\n",
			t.Partition, t.Synth.Round(time.Millisecond), t.Device.Round(time.Millisecond), t.Finalize.Round(time.Millisecond))
	})
	if err != nil {
		return err
	}
	b, err := c2.MarshalBinary()
	if err != nil {
		return err
	}
	if *out == "" {
		*out = trimSuffix(*in, ".c1.json") + ".c2"
	}
	if err := os.WriteFile(*out, b, 0o644); err != nil {
		return err
	}
	el := time.Since(t0)
	fmt.Printf("sector %d: %d partitions proved and verified in %v (%.2f s/partition) -> %s (%d bytes)\n",
		c1.SectorID, len(c2.Proofs), el.Round(time.Millisecond), el.Seconds()/float64(len(c2.Proofs)), *out, len(b))
	return nil
}

func trimSuffix(s, suf string) string {
	if len(s) > len(suf) && s[len(s)-len(suf):] == suf {
		return s[:len(s)-len(suf)]
	}
	return s
}
