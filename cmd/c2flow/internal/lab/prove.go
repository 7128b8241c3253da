package lab

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/c2flow/c2flow/cmd/c2flow/internal/cli"
	"github.com/c2flow/c2flow/cmd/internal/cliflags"
	"github.com/c2flow/c2flow/filecoin/snark"
	"github.com/c2flow/c2flow/gpu"
	"github.com/c2flow/c2flow/internal/atomicfile"
	"github.com/c2flow/c2flow/prover"
	"github.com/c2flow/c2flow/registry"
	"github.com/c2flow/c2flow/scheme"
	"github.com/c2flow/c2flow/scheme/testscheme"
	"github.com/c2flow/c2flow/scheme/testscheme/params"
	"github.com/c2flow/c2flow/scheme/testscheme/porep"
)

// proverFlags are the flags of commands that prove in this process.
type proverFlags struct {
	cliflags.Devices
	cliflags.Log
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
	pr, err := prover.New(testscheme.ProverKeys(keys), log)
	if err != nil {
		return nil, nil, nil, err
	}
	pr.EarlyG2 = f.EarlyG2
	return pr, keys, slots, nil
}

// schemeFlags say where each scheme of a command that proves or verifies
// in this process finds its keys, and whose sector a C1 file is.
type schemeFlags struct {
	filecoinParams, vk, pkParams, shapeCache string
	hints                                    scheme.Hints
}

func (f *schemeFlags) add(fs *flag.FlagSet, pair bool) {
	fs.StringVar(&f.filecoinParams, "filecoin-params", snark.DefaultDir(), "Filecoin C1: Filecoin's parameter directory (the proof's .params/.vk, parameters.json)")
	fs.StringVar(&f.hints.ProverID, "prover-id", "", "Filecoin C1: the prover id (32 bytes hex) the replica id is checked against, with the sector id (--sector-id, else the Commit2In SectorNum, else the N of a file named N.c1.json); default: a sectors.json beside the file")
	fs.StringVar(&f.hints.SectorID, "sector-id", "", "Filecoin C1: the sector id (with --prover-id)")
	if pair {
		fs.StringVar(&f.vk, "vk", "", "Filecoin C1: the seal proof's verifying key (.vk); with --pk-params, instead of a search of --filecoin-params")
		fs.StringVar(&f.pkParams, "pk-params", "", "Filecoin C1: the seal proof's parameters (.params); with --vk, instead of a search of --filecoin-params")
		fs.StringVar(&f.shapeCache, "shape-cache", "", "Filecoin C1: directory caching the recorded circuit shapes (default: <c2flow parameter cache>/filecoin-shapes)")
	}
}

// schemes are the schemes a C1 file may be of, over their key sources:
// c2flow's test scheme over the key cache paramsDir (making development
// keys when it has none, if devSetup), Filecoin's over its flags.
func (f *schemeFlags) schemes(paramsDir string, devSetup, earlyG2 bool, log *slog.Logger) (scheme.Set, error) {
	o := registry.Options{ParamsDir: paramsDir, FilecoinParams: f.filecoinParams, FilecoinShapes: f.shapeCache, DevSetup: devSetup, EarlyG2: earlyG2, Log: log}
	switch {
	case f.vk != "" && f.pkParams != "":
		o.FilecoinPair = &snark.Files{Params: f.pkParams, VK: f.vk}
	case f.vk != "" || f.pkParams != "":
		return nil, fmt.Errorf("--vk and --pk-params go together")
	}
	return registry.Schemes(o), nil
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

// RunProve is direct mode for a C1 of any scheme: the scheme whose format
// the file is identifies and checks it natively, loads its circuit, and
// scheme.ProveDirect proves the partitions one after another, each
// verified, then the C2 whole; only a verified C2 is written.
func RunProve(ctx context.Context, args []string) error {
	fs := cli.NewFlags("prove")
	in := fs.String("c1", "", "C1 file (JSON): c2flow's own, or a Filecoin SealCommitPhase1Output (raw or Commit2In)")
	out := fs.String("out", "", "C2 output file (default: the C1's name without .c1.json, with the scheme's extension: .c2 for c2flow's own C2, .proof for Filecoin's concatenated 192-byte partition proofs)")
	var pf proverFlags
	pf.add(fs)
	pf.Log.Add(fs, "warn")
	var sf schemeFlags
	sf.add(fs, true)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *in == "" {
		return fmt.Errorf("prove: --c1 is required")
	}
	log, err := pf.Logger()
	if err != nil {
		return err
	}
	set, err := sf.schemes(pf.Params, true, pf.EarlyG2, log)
	if err != nil {
		return fmt.Errorf("prove: %w", err)
	}
	// Devices first: a build without CUDA says so before any key loads.
	slots, err := pf.Slots(log)
	if err != nil {
		return err
	}
	t0 := time.Now()
	raw, err := os.ReadFile(*in)
	if err != nil {
		return fmt.Errorf("prove: %w", err)
	}
	sc, ref, canon, err := set.Identify(ctx, *in, raw, sf.hints)
	if err != nil {
		return fmt.Errorf("prove %s: not proved: %w", *in, err)
	}
	sec, err := sc.Decode(canon, ref)
	if err != nil {
		return fmt.Errorf("prove %s: %w", *in, err)
	}
	fmt.Fprintf(os.Stderr, "%s: %s, %s C1 verified natively in %v\n", *in, ref, ref.Profile, time.Since(t0).Round(time.Millisecond))

	t1 := time.Now()
	circ, err := sc.Circuit(ctx, ref.Profile)
	if err != nil {
		return fmt.Errorf("prove: %w", err)
	}
	keys := describeKey(circ)
	fmt.Fprintf(os.Stderr, "keys: %s, loaded in %v\n", keys, time.Since(t1).Round(time.Millisecond))

	parts := sec.Partitions()
	tProve := time.Now()
	b, _, err := scheme.ProveDirect(ctx, circ, sec, slots, func(t scheme.PartitionTimes) {
		fmt.Fprintf(os.Stderr, "partition %s: synth %v, device %v (NTT %v, MSM %v), finalize %v (verified)\n", t.Partition,
			t.Synth.Round(time.Millisecond), t.Device.Round(time.Millisecond), t.NTT.Round(time.Millisecond),
			t.MSM.Round(time.Millisecond), t.Finalize.Round(time.Millisecond))
	})
	if err != nil {
		return fmt.Errorf("prove %s: nothing written: %w", *in, err)
	}
	if *out == "" {
		*out = trimSuffix(trimSuffix(*in, ".json"), ".c1") + sc.C2Ext()
	}
	if err := atomicfile.WriteBytes(*out, b); err != nil {
		return fmt.Errorf("prove: %w", err)
	}
	el := time.Since(tProve)
	fmt.Printf("%s: %s, %d partitions proved and verified in %v (%.2f s/partition) -> %s (%d bytes); keys %s\n",
		*in, ref.Profile, parts, el.Round(time.Millisecond), el.Seconds()/float64(parts), *out, len(b), keys)
	return nil
}

func trimSuffix(s, suf string) string {
	if len(s) > len(suf) && s[len(s)-len(suf):] == suf {
		return s[:len(s)-len(suf)]
	}
	return s
}
