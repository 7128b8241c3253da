package lab

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/c2flow/c2flow/activities"
	"github.com/c2flow/c2flow/batch"
	"github.com/c2flow/c2flow/bench"
	"github.com/c2flow/c2flow/cmd/c2flow/internal/cli"
	"github.com/c2flow/c2flow/cmd/c2flow/internal/hosting"
	"github.com/c2flow/c2flow/cmd/c2flow/internal/pipeline"
	"github.com/c2flow/c2flow/cmd/internal/cliflags"
	"github.com/c2flow/c2flow/filecoin/proofs"
	"github.com/c2flow/c2flow/metrics"
	"github.com/c2flow/c2flow/scheme"
	"github.com/c2flow/c2flow/scheme/testscheme"
	"github.com/c2flow/c2flow/scheme/testscheme/porep"
	"github.com/c2flow/c2flow/stats"
	"github.com/c2flow/c2flow/storage"
)

func runBenchBatch(ctx context.Context, args []string) error {
	fs := cli.NewFlags("bench batch")
	var d hosting.StackFlags
	if err := d.Add(fs, hosting.StackDefaults{Dir: ".c2flow/bench", Port: 0, S3Addr: "127.0.0.1:0"}); err != nil {
		return err
	}
	var tf cliflags.Temporal
	tf.Add(fs)
	profile := fs.String("profile", "32KiB", "profile of freshly sealed sectors (ignored with --c1)")
	proof := fs.String("proof", "", "seal and prove Filecoin sectors of this seal proof (StackedDrg2KiBV1_1) instead of --profile, with Filecoin-format DEVELOPMENT parameters published to S3")
	c1 := fs.String("c1", "", "C1 files or directories (distinct sectors) instead of sealing")
	count := fs.Int("count", 6, "proofs (sectors)")
	conc := fs.Int("concurrency", 3, "sectors in flight")
	reps := fs.Int("replicates", 1, "independent runs of the whole batch")
	out := fs.String("out", "run.json", "raw samples and configuration (replicate i of R > 1: run.rI.json)")
	external := fs.Bool("external", false, "use the Temporal at --address and S3 of --s3-* flags with their own workers, not the embedded stack")
	plotPath := fs.String("plot", "", "also draw the device-slot timeline of the (last) run (.svg or .png)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	log, err := d.Log.Logger()
	if err != nil {
		return err
	}
	for _, p := range []*string{out, plotPath, c1, &d.Dir} {
		if *p != "" && !strings.Contains(*p, ",") {
			if *p, err = filepath.Abs(*p); err != nil {
				return err
			}
		}
	}
	hc, err := d.HostCfg()
	if err != nil {
		return err
	}
	// Sectors: sealed fresh (new ids each replicate) or the given files.
	var p porep.Profile
	var files []string
	if *c1 != "" {
		if files, err = pipeline.C1Files(strings.Split(*c1, ",")); err != nil {
			return err
		}
		if len(files) < *count {
			return fmt.Errorf("--count %d but only %d C1 files: a sector is proved once", *count, len(files))
		}
		files = files[:*count]
		first, err := readC1(files[0])
		if err != nil {
			return err
		}
		p = first.Profile
		if *reps > 1 {
			return fmt.Errorf("--replicates needs --profile: the same sectors cannot be proved twice")
		}
	} else if *proof != "" {
		info, err := proofs.ByName(*proof)
		if err != nil {
			return fmt.Errorf("--proof: %w", err)
		}
		p = porep.Profile{Name: info.Name} // a name only: the sectors are Filecoin's
		d.FilecoinParams = filepath.Join(d.Dir, "worker-filecoin-params")
	} else if p, err = porep.LookupProfile(*profile); err != nil {
		return err
	}
	var startProfiles []string
	if *proof == "" {
		startProfiles = []string{p.Name}
	}

	cfg := bench.RunConfig{Profile: p.Name, PartitionWorkers: hc.PartitionWorkers, Backend: "cpu", EarlyG2: hc.Keys.EarlyG2}
	cfg.Environment()
	// An external stack is its client and store; the embedded one has a
	// worker too.
	var (
		c     client.Client
		store *storage.Store
		wk    *activities.Worker
	)
	if *external {
		cfg.Stack = tf.Address
		if store, err = d.S3.Open(ctx); err != nil {
			return err
		}
		if c, err = tf.Dial(ctx, log); err != nil {
			return err
		}
		defer c.Close()
	} else {
		cfg.Stack = "embedded"
		logs, err := d.OpenLogs("bench")
		if err != nil {
			return err
		}
		defer logs.Close()
		st, err := d.Start(ctx, startProfiles, logs, os.Stderr)
		if err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "this run's log: %s%s\n", logs.Path, hosting.ServerLogNote(filepath.Dir(logs.Path), logs))
		defer st.Stop()
		c, store, wk = st.Client, st.Store, st.Worker
		for _, dev := range wk.Slots().Devices() {
			cfg.Devices = append(cfg.Devices, dev.Name())
		}
	}
	for r := 1; r <= *reps; r++ {
		fs := files
		switch {
		case fs == nil && *proof != "":
			if fs, err = sealFresh(ctx, filepath.Join(d.Dir, "bench-c1"), p.Name, *count); err != nil {
				return err
			}
		case fs == nil:
			if fs, err = sealFresh(ctx, filepath.Join(d.Dir, "bench-c1"), p.Name, *count); err != nil {
				return err
			}
		}
		refs, err := batch.UploadC1(ctx, store, fs, pipeline.IdentifyC1(&pipeline.C1Flags{}))
		if err != nil {
			return err
		}
		if err := pipeline.KeySchemes(hc.Keys.ParamsDir, store, log).EnsureKeys(ctx, pipeline.Proofs(refs), true, os.Stderr); err != nil {
			return err
		}
		var sampler *rssSampler
		o := bench.BatchOptions{BatchID: fmt.Sprintf("bench-%d", time.Now().UnixNano()), Concurrency: *conc, Config: cfg,
			Progress: func(l string) { fmt.Fprintln(os.Stderr, l) }}
		if wk != nil {
			sampler = startRSSSampler(100 * time.Millisecond)
			w := wk
			o.Workers = func() []bench.WorkerSample {
				s := w.Stats()
				return []bench.WorkerSample{{ID: s.ID + " (in-process with Temporal and S3)", PeakRSS: max(sampler.stop(), s.PeakRSS), PeakBudget: s.Budget.Peak, Budget: s.Budget.Max}}
			}
		}
		fmt.Fprintf(os.Stderr, "replicate %d/%d: %d %s sectors at concurrency %d\n", r, *reps, len(refs), p.Name, *conc)
		run, err := bench.BatchBench(ctx, c, refs, o)
		if err != nil {
			return err
		}
		path := *out
		if *reps > 1 {
			path = strings.TrimSuffix(*out, ".json") + fmt.Sprintf(".r%d.json", r)
		}
		if err := bench.WriteRun(path, run); err != nil {
			return err
		}
		bench.PrintSummary(os.Stdout, run)
		fmt.Printf("raw samples: %s\n", path)
		if *plotPath != "" && r == *reps {
			if err := bench.PlotTimeline(*plotPath, run); err != nil {
				return err
			}
			fmt.Printf("device timeline: %s\n", *plotPath)
		}
	}
	return nil
}

// rssSampler samples this process's resident set.
type rssSampler struct {
	peak chan int64
	quit chan struct{}
}

func startRSSSampler(every time.Duration) *rssSampler {
	s := &rssSampler{peak: make(chan int64, 1), quit: make(chan struct{})}
	go func() {
		var peak int64
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			peak = max(peak, metrics.RSS())
			select {
			case <-t.C:
			case <-s.quit:
				s.peak <- peak
				return
			}
		}
	}()
	return s
}

func (s *rssSampler) stop() int64 {
	close(s.quit)
	return <-s.peak
}

func runBenchStats(args []string) error {
	fs := cli.NewFlags("bench stats")
	field := fs.String("field", "gpu_ms", "gpu_ms, synth_ms, finalize_ms, queue_ms or prove_ms")
	paths, err := cli.ParseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(paths) == 0 {
		return fmt.Errorf("usage: c2flow bench stats [--field F] LOG|run.json|MANIFEST|DIR ...")
	}
	for _, path := range paths {
		in, err := bench.Load(path)
		if err != nil {
			return err
		}
		v := in.Samples(*field)
		skipped := ""
		if in.Run == nil && in.Manifests == 0 {
			f, _ := os.Open(path)
			ls, _ := stats.ParseLog(f, *field)
			f.Close()
			skipped = fmt.Sprintf(" (%d lines skipped)", ls.Skipped)
		}
		if len(v) == 0 {
			return fmt.Errorf("%s: no %s samples%s", path, *field, skipped)
		}
		fmt.Printf("%s %s [%s%s]: %s\n", path, *field, in.Format, skipped, stats.Summarize(v))
	}
	return nil
}

func runBenchCompare(args []string) error {
	fs := cli.NewFlags("bench compare")
	plotPath := fs.String("plot", "", "draw the CDF and histogram of --plot-field for base vs new (.svg or .png)")
	plotField := fs.String("plot-field", "gpu_ms", "metric of the plot")
	bsDir := fs.String("benchstat", "", "also write base.txt and new.txt in Go benchmark format into this directory")
	pos, err := cli.ParseInterspersed(fs, args)
	if err != nil {
		return err
	}
	base, new, err := splitSides(pos)
	if err != nil {
		return err
	}
	load := func(paths []string) ([]*bench.Input, error) {
		var out []*bench.Input
		for _, p := range paths {
			in, err := bench.Load(p)
			if err != nil {
				return nil, err
			}
			out = append(out, in)
		}
		return out, nil
	}
	b, err := load(base)
	if err != nil {
		return err
	}
	n, err := load(new)
	if err != nil {
		return err
	}
	rep := bench.CompareInputs(b, n)
	fmt.Printf("base: %s\nnew:  %s\n", strings.Join(base, " "), strings.Join(new, " "))
	rep.Print(os.Stdout)
	if *bsDir != "" {
		if err := bench.WriteBenchstat(*bsDir, b, n); err != nil {
			return err
		}
		fmt.Printf("benchstat input: %s/base.txt %s/new.txt\n", *bsDir, *bsDir)
	}
	if *plotPath != "" {
		var bv, nv []float64
		for _, in := range b {
			bv = append(bv, in.Samples(*plotField)...)
		}
		for _, in := range n {
			nv = append(nv, in.Samples(*plotField)...)
		}
		if len(bv) == 0 || len(nv) == 0 {
			return fmt.Errorf("--plot: no %s samples on one side", *plotField)
		}
		if err := bench.PlotCompare(*plotPath, *plotField, bv, nv, "base", "new"); err != nil {
			return err
		}
		fmt.Printf("plot: %s\n", *plotPath)
	}
	return nil
}

// splitSides reads "BASE NEW" or "BASE... -- NEW...".
func splitSides(args []string) ([]string, []string, error) {
	for i, a := range args {
		if a == "--" || a == "vs" {
			if i == 0 || i == len(args)-1 {
				break
			}
			return args[:i], args[i+1:], nil
		}
	}
	if len(args) == 2 {
		return args[:1], args[1:], nil
	}
	return nil, nil, fmt.Errorf("usage: c2flow bench compare BASE NEW, or BASE1 BASE2 ... vs NEW1 NEW2 ... (replicates)")
}

func RunBench(ctx context.Context, args []string) error {
	if len(args) == 0 {
		return fmt.Errorf("usage: c2flow bench prover|batch|witness|stats|compare|load [flags]")
	}
	switch args[0] {
	case "prover":
		return runBenchProver(ctx, args[1:])
	case "batch":
		return runBenchBatch(ctx, args[1:])
	case "witness":
		return runBenchWitness(ctx, args[1:])
	case "stats":
		return runBenchStats(args[1:])
	case "compare":
		return runBenchCompare(args[1:])
	case "load":
		return runBenchLoad(ctx, args[1:])
	}
	return fmt.Errorf("unknown bench command %q (prover, batch, witness, stats, compare, load)", args[0])
}

func runBenchProver(ctx context.Context, args []string) error {
	fs := cli.NewFlags("bench prover")
	profile := fs.String("profile", "32KiB", "profile")
	runs := fs.Int("runs", 3, "alternating runs of each prover")
	var pf proverFlags
	pf.add(fs)
	pf.Log.Add(fs, "warn")
	if err := fs.Parse(args); err != nil {
		return err
	}
	p, err := porep.LookupProfile(*profile)
	if err != nil {
		return err
	}
	pr, keys, slots, err := pf.prover(ctx, p)
	if err != nil {
		return err
	}
	s, err := porep.Seal(p, testscheme.SectorInfo(scheme.TestProver(), 1))
	if err != nil {
		return err
	}
	rep, err := bench.ProverBench(ctx, pr, keys, slots, s.C1(), *runs)
	if err != nil {
		return err
	}
	rep.Print(os.Stdout)
	return nil
}
