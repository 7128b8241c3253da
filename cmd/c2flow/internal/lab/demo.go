package lab

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"text/tabwriter"
	"time"

	"github.com/c2flow/c2flow/activities"
	"github.com/c2flow/c2flow/batch"
	"github.com/c2flow/c2flow/cmd/c2flow/internal/cli"
	"github.com/c2flow/c2flow/cmd/c2flow/internal/direct"
	"github.com/c2flow/c2flow/cmd/c2flow/internal/hosting"
	"github.com/c2flow/c2flow/cmd/c2flow/internal/pipeline"
	"github.com/c2flow/c2flow/filecoin/proofs"
	"github.com/c2flow/c2flow/job"
	"github.com/c2flow/c2flow/registry"
	"github.com/c2flow/c2flow/scheme"
	"github.com/c2flow/c2flow/scheme/testscheme"
	"github.com/c2flow/c2flow/scheme/testscheme/params"
	"github.com/c2flow/c2flow/scheme/testscheme/porep"
	"github.com/c2flow/c2flow/storage"
)

// RunDemo is `c2flow demo` (README command one): one batch of
// test-scheme sectors (--profile, --sectors) and Filecoin sectors (--proof,
// --filecoin-sectors: the real StackedCircuit on DEVELOPMENT parameters in
// Filecoin's format, published to S3 for a worker that has none), sealed
// here, proved through the embedded stack, and every stored C2 verified
// from this process against its C1, not the workers'.
func RunDemo(ctx context.Context, args []string) error {
	fs := cli.NewFlags("demo")
	var d hosting.StackFlags
	if err := d.Add(fs, hosting.StackDefaults{Dir: ".c2flow/demo", Port: 0, S3Addr: "127.0.0.1:0"}); err != nil {
		return err
	}
	profile := fs.String("profile", "32KiB", "profile of the test-scheme sectors")
	sectors := fs.Int("sectors", 2, "test-scheme sectors in the demo batch (0: none)")
	proof := fs.String("proof", "StackedDrg2KiBV1_1", "seal proof of the Filecoin sectors, proved with DEVELOPMENT parameters in Filecoin's format (2KiB or 8MiB)")
	fsectors := fs.Int("filecoin-sectors", 2, "Filecoin sectors in the demo batch (0: none)")
	direct := fs.Bool("direct", false, "also prove the sectors in direct mode (no Temporal) and compare s/proof, key loading left out on both sides (one scheme: --sectors 0 or --filecoin-sectors 0)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *sectors < 0 || *fsectors < 0 || *sectors+*fsectors == 0 {
		return fmt.Errorf("demo: --sectors %d and --filecoin-sectors %d: at least one sector, none negative", *sectors, *fsectors)
	}
	if *direct && (*fsectors != 0) == (*sectors != 0) {
		return fmt.Errorf("demo: --direct compares one scheme's pipeline with its direct mode: give --sectors 0 (Filecoin) or --filecoin-sectors 0 (test scheme)")
	}
	// With --direct, one more sector is proved first, untimed: the worker
	// loads its keys then, so the timed batch, like direct mode, leaves
	// key loading out.
	warm := 0
	if *direct {
		warm = 1
	}
	p, err := porep.LookupProfile(*profile)
	if err != nil {
		return fmt.Errorf("--profile: %w", err)
	}
	info, err := proofs.ByName(*proof)
	if err != nil {
		return fmt.Errorf("--proof: %w", err)
	}
	shown := d.Dir
	logs, err := d.OpenLogs("demo")
	if err != nil {
		return err
	}
	defer logs.Close()
	dir := d.Dir

	// 1. Seal.
	c1dir, fcdir := filepath.Join(dir, "c1"), filepath.Join(dir, "filecoin-c1")
	files, err := sealFresh(ctx, c1dir, p.Name, *sectors+warm*min(*sectors, 1))
	if err != nil {
		return err
	}
	var ffiles []string
	if *fsectors > 0 {
		// Fresh sector ids: a demo run proves, it does not find old results.
		if ffiles, err = sealFresh(ctx, fcdir, info.Name, *fsectors+warm*min(*fsectors, 1)); err != nil {
			return err
		}
	}
	fmt.Printf("1. sealed %d test-scheme %s sectors (%d partitions each) into %s and %d Filecoin %s sectors (%d partition each, the real StackedCircuit) into %s\n",
		*sectors, p.Name, p.Partitions, c1dir, *fsectors, info.Name, info.Partitions, fcdir)

	// 2. Stack: the worker's Filecoin parameter directory starts empty.
	hc, err := d.HostCfg()
	if err != nil {
		return err
	}
	// Absolute before the embedded S3 server changes the working directory.
	if hc.Keys.ParamsDir, err = filepath.Abs(hc.Keys.ParamsDir); err != nil {
		return err
	}
	fmt.Println("2. starting the embedded stack: Temporal (SQLite), S3 (versitygw), one worker; test-scheme keys from the param cache or a development setup")
	t0 := time.Now()
	var profiles []string
	if *sectors > 0 {
		profiles = []string{p.Name}
	}
	d.FilecoinParams = filepath.Join(dir, "worker-filecoin-params")
	st, err := d.Start(ctx, profiles, logs, logs.Steps)
	if err != nil {
		return err
	}
	defer st.Stop()
	fmt.Printf("   up in %v: temporal %s, s3 http://%s\n", time.Since(t0).Round(time.Millisecond), st.Temporal.Addr(), st.S3Addr)
	devDir := pipeline.FilecoinDevParamsDir(hc.Keys.ParamsDir)
	if *fsectors > 0 {
		if err := pipeline.KeySchemes(hc.Keys.ParamsDir, st.Store, logs.Log).EnsureKeys(ctx, []string{info.Name}, true, logs.Steps); err != nil {
			return err
		}
		fmt.Printf("   published to s3 %s (the worker downloads them on first use)\n", registry.FilecoinParamsPrefix)
	}

	// 3. Upload (each Filecoin C1 bound to its prover and sector by
	// sectors.json and verified natively first), submit one batch, wait.
	refs, err := batch.UploadC1(ctx, st.Store, files, pipeline.IdentifyC1(&pipeline.C1Flags{}))
	if err != nil {
		return err
	}
	frefs, err := batch.UploadC1(ctx, st.Store, ffiles, pipeline.IdentifyC1(&pipeline.C1Flags{}))
	if err != nil {
		return err
	}
	// The submitted refs name each sector's proof; a result's need not.
	submitted := map[string]demoSector{}
	for i, r := range refs {
		submitted[r.Identity()] = demoSector{r, files[i]}
	}
	for i, r := range frefs {
		submitted[r.Identity()] = demoSector{r, ffiles[i]}
	}
	refs = append(refs, frefs...)
	if warm > 0 {
		t0 := time.Now()
		wres, err := pipeline.SubmitAndWaitSteps(ctx, st.Client, refs[:1], batch.Options{BatchID: fmt.Sprintf("demo-%d-warmup", refs[0].SectorID)}, logs.Steps)
		if err != nil {
			return err
		}
		if len(wres.Sectors) != 1 || wres.Sectors[0].Status != job.StatusProved {
			return fmt.Errorf("demo: the warm-up sector %d was not proved: %+v", refs[0].SectorID, wres.Sectors)
		}
		fmt.Printf("   warm-up: sector %d proved first, untimed (%v): the worker's keys are loaded\n", refs[0].SectorID, time.Since(t0).Round(time.Millisecond))
		refs = refs[1:]
	}
	fmt.Printf("3. submitting one batch of %d sectors; the worker proves up to %d partitions at once (--partition-workers)\n", len(refs), hc.PartitionWorkers)
	tb := time.Now()
	batchID := fmt.Sprintf("demo-%d", refs[0].SectorID)
	res, err := pipeline.SubmitAndWaitSteps(ctx, st.Client, refs, batch.Options{BatchID: batchID}, logs.Steps)
	if err != nil {
		return err
	}
	wall := time.Since(tb)

	// 4. Verify what storage holds, independently of the worker.
	v := demoVerifier{store: st.Store}
	if *sectors > 0 {
		if v.keys, err = params.LoadExisting(ctx, params.Cache{Local: params.DirStore{Root: hc.Keys.ParamsDir}, Remote: st.Store}, p, nil); err != nil {
			return err
		}
	}
	if *fsectors > 0 {
		// The .vk alone, as a user verifies, from the published directory.
		if v.fc, err = registry.Schemes(registry.Options{FilecoinParams: devDir, Log: logs.Log}).For(info.Name); err != nil {
			return err
		}
		if v.fcv, err = v.fc.Verifier(ctx, info.Name); err != nil {
			return err
		}
	}
	for _, s := range res.Sectors {
		sub, ok := submitted[s.Ref.Identity()]
		if !ok {
			return fmt.Errorf("sector %d: in the batch's result, not among the submitted sectors", s.SectorID)
		}
		if s.Status != job.StatusProved {
			return fmt.Errorf("sector %d (%s): %s: %s", s.SectorID, sub.ref.Proof, s.Status, s.Error)
		}
		if err := v.verify(ctx, sub.ref, sub.c1); err != nil {
			return err
		}
	}
	fmt.Printf("4. every C2 in storage verifies, from this process: %d test-scheme sectors with gnark's verifier, %d Filecoin sectors as %d x 192-byte proofs under %s\n",
		*sectors, *fsectors, info.Partitions, v.vkName())
	summary(res, wall, st.Worker.Stats())

	if *direct {
		if err := demoDirect(ctx, st, refs, submitted, hc.Keys.ParamsDir, devDir, wall, logs.Log); err != nil {
			return err
		}
	}
	afterwards(shown, logs, batchID)
	return nil
}

// demoDirect proves the batch's sectors again in direct mode (one
// process, no Temporal, partitions in sequence, scheme.ProveDirect) with
// keys loaded and C1s decoded before the clock starts, and prints its
// s/proof against the pipeline's wall time for them.
func demoDirect(ctx context.Context, st *hosting.Stack, refs []job.Ref, submitted map[string]demoSector, paramsDir, devDir string, wall time.Duration, log *slog.Logger) error {
	set := registry.Schemes(registry.Options{ParamsDir: paramsDir, FilecoinParams: devDir, Remote: st.Store, Log: log})
	sc, err := set.For(refs[0].Proof)
	if err != nil {
		return err
	}
	circ, err := sc.Circuit(ctx, refs[0].Proof)
	if err != nil {
		return err
	}
	var sectors []scheme.Sector
	for _, r := range refs {
		raw, err := os.ReadFile(submitted[r.Identity()].c1)
		if err != nil {
			return err
		}
		sec, err := sc.Decode(raw, r)
		if err != nil {
			return err
		}
		sectors = append(sectors, sec)
	}
	td := time.Now()
	for _, sec := range sectors {
		if _, _, err := scheme.ProveDirect(ctx, circ, sec, st.Worker.Slots(), nil); err != nil {
			return err
		}
	}
	dw := time.Since(td)
	ps, ds := wall.Seconds()/float64(len(refs)), dw.Seconds()/float64(len(refs))
	fmt.Printf("direct mode (%s: same process, no Temporal, partitions in sequence, keys loaded first): %.2f s/proof; pipeline %.2f s/proof (keys warmed by the first sector): ratio %.3f\n",
		refs[0].Proof, ds, ps, ps/ds)
	return nil
}

// demoSector is a submitted sector and its C1 file.
type demoSector struct {
	ref job.Ref
	c1  string
}

// demoVerifier checks a stored C2 against its C1 file with the scheme the
// sector's proof names: the test scheme's keys or Filecoin's .vk.
type demoVerifier struct {
	store *storage.Store
	keys  *params.Keys
	fc    scheme.Scheme
	fcv   scheme.Verifier
}

func (v *demoVerifier) vkName() string {
	if v.fcv == nil {
		return "-"
	}
	return direct.DescribeKey(v.fcv)
}

func (v *demoVerifier) verify(ctx context.Context, ref job.Ref, c1file string) error {
	if _, err := proofs.ByName(ref.Proof); err != nil {
		if err := verifyStored(ctx, v.store, v.keys, c1file, ref); err != nil {
			return fmt.Errorf("sector %d (%s): stored C2: %w", ref.SectorID, ref.Proof, err)
		}
		return nil
	}
	raw, err := os.ReadFile(c1file)
	if err != nil {
		return err
	}
	sec, err := v.fc.Decode(raw, ref)
	if err != nil {
		return err
	}
	_, proof, err := v.store.GetC2(ctx, ref)
	if err != nil {
		return err
	}
	if err := v.fcv.VerifyC2(sec, proof); err != nil {
		return fmt.Errorf("sector %d (%s): stored C2 does not verify: %w", ref.SectorID, ref.Proof, err)
	}
	return nil
}

// afterwards tells where the run's timings are and how to look at its
// batch again: the demo's stack ends with it, and `c2flow dev` on its own
// directory (.c2flow/dev) does not know the batch.
func afterwards(shownDir string, logs *hosting.RunLogs, batchID string) {
	log := hosting.RelTo(shownDir, logs.Path)
	fmt.Printf("\nthis run's log: %s (phase timings: c2flow bench stats %s)%s\n", log, log, hosting.ServerLogNote(shownDir, logs))
	fmt.Printf("to look at this batch again: c2flow dev --dir %s, then in another shell: c2flow status %s\n", shownDir, batchID)
}

func verifyStored(ctx context.Context, store *storage.Store, keys *params.Keys, c1file string, ref job.Ref) error {
	c1, err := readC1(c1file)
	if err != nil {
		return err
	}
	_, b, err := store.GetC2(ctx, ref)
	if err != nil {
		return err
	}
	c2, err := testscheme.UnmarshalC2(b)
	if err != nil {
		return err
	}
	return testscheme.VerifyC2(keys.VK, c1.Statement(), c2)
}

func summary(res job.BatchResult, wall time.Duration, ws activities.Stats) {
	fmt.Printf("\nbatch: %d sectors in %v: %.2f s/proof\n", len(res.Sectors), wall.Round(time.Millisecond), wall.Seconds()/float64(len(res.Sectors)))
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "sector\tpartition\tsynth ms\tqueue ms\tdevice ms\tfinalize ms\tsyntheses\t")
	for _, s := range res.Sectors {
		kind := "test scheme " + s.Proof
		if _, err := proofs.ByName(s.Proof); err == nil {
			kind = "Filecoin " + s.Proof
		}
		fmt.Fprintf(w, "%d %s\t(%v)\t\t\t\t\t\t\n", s.SectorID, kind, s.Finished.Sub(s.Started).Round(time.Millisecond))
		parts := append([]job.PartitionResult(nil), s.Partitions...)
		sort.Slice(parts, func(i, j int) bool { return parts[i].Partition < parts[j].Partition })
		for _, p := range parts {
			fmt.Fprintf(w, "\t%d\t%d\t%d\t%d\t%d\t%d\t\n", p.Partition, p.SynthMS, p.QueueMS, p.DeviceMS, p.FinalizeMS, p.Syntheses)
		}
	}
	w.Flush()
	fmt.Printf("partitions in flight on the worker: max %d, budget %d\n", ws.Budget.Peak, ws.Budget.Max)
	fmt.Printf("peak RSS of this process (Temporal + S3 + worker): %.0f MiB\n", float64(ws.PeakRSS)/(1<<20))
}
