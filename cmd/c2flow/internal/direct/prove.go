// Package direct is c2flow's direct mode: prove one C1 in this process,
// no Temporal (c2flow prove). It is its own package, linking no Temporal
// client or server, so that its cuda-tagged test under make test-icicle
// compiles in minutes on a cold machine.
package direct

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/c2flow/c2flow/cmd/c2flow/internal/cli"
	"github.com/c2flow/c2flow/cmd/internal/procflags"
	"github.com/c2flow/c2flow/internal/atomicfile"
	"github.com/c2flow/c2flow/registry"
	"github.com/c2flow/c2flow/scheme"
)

// SchemeFlags say where each scheme of a command that proves or verifies
// in this process finds its keys, and whose sector a C1 file is.
type SchemeFlags struct {
	filecoinParams, vk, pkParams, shapeCache string
	// Hints say whose sector a C1 file is (--prover-id, --sector-id).
	Hints scheme.Hints
}

// Add registers the flags; pair adds those naming one seal proof's key
// pair (prove).
func (f *SchemeFlags) Add(fs *flag.FlagSet, pair bool) {
	fs.StringVar(&f.filecoinParams, "filecoin-params", registry.FilecoinParamsDir(), "Filecoin C1: Filecoin's parameter directory (the proof's .params/.vk, parameters.json)")
	fs.StringVar(&f.Hints.ProverID, "prover-id", "", "Filecoin C1: the prover id (32 bytes hex) the replica id is checked against, with the sector id (--sector-id, else the Commit2In SectorNum, else the N of a file named N.c1.json); default: a sectors.json beside the file")
	fs.StringVar(&f.Hints.SectorID, "sector-id", "", "Filecoin C1: the sector id (with --prover-id)")
	if pair {
		fs.StringVar(&f.vk, "vk", "", "Filecoin C1: the seal proof's verifying key (.vk); with --pk-params, instead of a search of --filecoin-params")
		fs.StringVar(&f.pkParams, "pk-params", "", "Filecoin C1: the seal proof's parameters (.params); with --vk, instead of a search of --filecoin-params")
		fs.StringVar(&f.shapeCache, "shape-cache", "", "Filecoin C1: directory caching the recorded circuit shapes (default: <c2flow parameter cache>/filecoin-shapes)")
	}
}

// Schemes are the schemes a C1 file may be of, over their key sources:
// c2flow's test scheme over the key cache paramsDir (making development
// keys when it has none, if devSetup), Filecoin's over its flags.
func (f *SchemeFlags) Schemes(paramsDir string, devSetup, earlyG2 bool, log *slog.Logger) (scheme.Set, error) {
	o := registry.Options{ParamsDir: paramsDir, FilecoinParams: f.filecoinParams, FilecoinShapes: f.shapeCache, DevSetup: devSetup, EarlyG2: earlyG2, Log: log}
	switch {
	case f.vk != "" && f.pkParams != "":
		o.FilecoinPair = &registry.KeyPair{Params: f.pkParams, VK: f.vk}
	case f.vk != "" || f.pkParams != "":
		return nil, fmt.Errorf("--vk and --pk-params go together")
	}
	return registry.Schemes(o), nil
}

// RunProve is direct mode for a C1 of any scheme: the scheme whose format
// the file is identifies and checks it natively, loads its circuit, and
// scheme.ProveDirect proves the partitions one after another, each
// verified, then the C2 whole; only a verified C2 is written.
func RunProve(ctx context.Context, args []string) error {
	fs := cli.NewFlags("prove")
	in := fs.String("c1", "", "C1 file (JSON): c2flow's own, or a Filecoin SealCommitPhase1Output (raw or Commit2In)")
	out := fs.String("out", "", "C2 output file (default: the C1's name without .c1.json, with the scheme's extension: .c2 for c2flow's own C2, .proof for Filecoin's concatenated 192-byte partition proofs)")
	var dv procflags.Devices
	dv.Add(fs)
	var lf procflags.Log
	lf.Add(fs, "warn")
	var sf SchemeFlags
	sf.Add(fs, true)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *in == "" {
		return fmt.Errorf("prove: --c1 is required")
	}
	log, err := lf.Logger()
	if err != nil {
		return err
	}
	set, err := sf.Schemes(dv.Params, true, dv.EarlyG2, log)
	if err != nil {
		return fmt.Errorf("prove: %w", err)
	}
	// Devices first: a build without CUDA says so before any key loads.
	slots, err := dv.Slots(log)
	if err != nil {
		return err
	}
	t0 := time.Now()
	raw, err := os.ReadFile(*in)
	if err != nil {
		return fmt.Errorf("prove: %w", err)
	}
	sc, ref, canon, err := set.Identify(ctx, *in, raw, sf.Hints)
	if err != nil {
		return fmt.Errorf("prove %s: not proved: %w", *in, err)
	}
	sec, err := sc.Decode(canon, ref)
	if err != nil {
		return fmt.Errorf("prove %s: %w", *in, err)
	}
	fmt.Fprintf(os.Stderr, "%s: %s, %s C1 verified natively in %v\n", *in, ref, ref.Proof, time.Since(t0).Round(time.Millisecond))

	t1 := time.Now()
	circ, err := sc.Circuit(ctx, ref.Proof)
	if err != nil {
		return fmt.Errorf("prove: %w", err)
	}
	keys := DescribeKey(circ)
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
		*in, ref.Proof, parts, el.Round(time.Millisecond), el.Seconds()/float64(parts), *out, len(b), keys)
	return nil
}

func trimSuffix(s, suf string) string {
	if len(s) > len(suf) && s[len(s)-len(suf):] == suf {
		return s[:len(s)-len(suf)]
	}
	return s
}

// DescribeKey names a verifier's key as its scheme names it (the
// verifying key's digest where it names none).
func DescribeKey(v scheme.Verifier) string {
	if d, ok := v.(interface{ Describe() string }); ok {
		return d.Describe()
	}
	vk := v.Digests().VK
	return "vk " + vk[:min(16, len(vk))]
}
