package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"text/tabwriter"
	"time"

	"github.com/c2flow/c2flow/batch"
	"github.com/c2flow/c2flow/job"
	"github.com/c2flow/c2flow/params"
	"github.com/c2flow/c2flow/porep"
	"github.com/c2flow/c2flow/prover"
	"github.com/c2flow/c2flow/storage"
	"github.com/c2flow/c2flow/worker"
)

func runDemo(ctx context.Context, args []string) error {
	fs := newFlags("demo")
	var d devFlags
	if err := d.add(fs, stackDefaults{dir: ".c2flow/demo", port: 0, s3Addr: "127.0.0.1:0"}); err != nil {
		return err
	}
	profile := fs.String("profile", "32KiB", "profile of the demo sectors")
	sectors := fs.Int("sectors", 2, "sectors in the demo batch")
	direct := fs.Bool("direct", false, "also prove the sectors in direct mode (no Temporal) and compare s/proof")
	proof := fs.String("proof", "", "prove Filecoin sectors of this seal proof (StackedDrg2KiBV1_1, ...) instead of a --profile of the test scheme, with DEVELOPMENT parameters in Filecoin's format")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *proof != "" {
		return runFilecoinDemo(ctx, &d, *proof, *sectors)
	}
	p, err := porep.LookupProfile(*profile)
	if err != nil {
		return err
	}
	shown := d.dir
	logs, err := d.openLogs("demo")
	if err != nil {
		return err
	}
	defer logs.close()
	dir := d.dir

	// 1. Seal.
	c1dir := filepath.Join(dir, "c1")
	if err := os.MkdirAll(c1dir, 0o755); err != nil {
		return err
	}
	first := uint64(time.Now().Unix()) * 100 // fresh sector ids: a demo run proves, it does not find old results
	var files []string
	for i := 0; i < *sectors; i++ {
		s, err := porep.Seal(p, TestSectorInfo(first+uint64(i)))
		if err != nil {
			return err
		}
		f := filepath.Join(c1dir, fmt.Sprintf("%d.c1.json", s.SectorID))
		if err := writeC1(f, s.C1()); err != nil {
			return err
		}
		files = append(files, f)
	}
	fmt.Printf("1. sealed %d %s sectors (%d partitions each) into %s\n", *sectors, p.Name, p.Partitions, c1dir)

	// 2. Stack.
	hc, err := d.hostCfg()
	if err != nil {
		return err
	}
	// Absolute before the embedded S3 server changes the working directory.
	if hc.ParamsDir, err = filepath.Abs(hc.ParamsDir); err != nil {
		return err
	}
	fmt.Println("2. starting the embedded stack: Temporal (SQLite), S3 (versitygw), one worker; keys from the param cache or a development setup")
	t0 := time.Now()
	st, err := d.start(ctx, []string{p.Name}, logs, logs.steps)
	if err != nil {
		return err
	}
	defer st.Stop()
	fmt.Printf("   up in %v: temporal %s, s3 http://%s\n", time.Since(t0).Round(time.Millisecond), st.Temporal.Addr(), st.S3Addr)

	// 3. Submit and wait.
	fmt.Printf("3. submitting; the worker proves up to %d partitions at once (--partition-workers)\n", hc.PartitionWorkers)
	tb := time.Now()
	batchID := fmt.Sprintf("demo-%d", first)
	refs, err := batch.UploadC1(ctx, st.Store, files, batch.TestSchemeC1)
	if err != nil {
		return err
	}
	res, err := submitAndWait(ctx, st.Client, st.Store, refs, hc.ParamsDir, batch.Options{BatchID: batchID}, true)
	if err != nil {
		return err
	}
	wall := time.Since(tb)

	// 4. Verify what storage holds, independently of the workers.
	keys, err := params.LoadExisting(ctx, params.Cache{Local: params.DirStore{Root: hc.ParamsDir}, Remote: st.Store}, p, nil)
	if err != nil {
		return err
	}
	for _, s := range res.Sectors {
		if s.Status != job.StatusProved {
			return fmt.Errorf("sector %d: %s: %s", s.SectorID, s.Status, s.Error)
		}
		if err := verifyStored(ctx, st.Store, keys, filepath.Join(c1dir, fmt.Sprintf("%d.c1.json", s.SectorID)), s.Ref()); err != nil {
			return err
		}
	}
	fmt.Printf("4. every C2 in storage verifies with gnark's verifier (%d sectors)\n", len(res.Sectors))
	summary(res, wall, st.worker.Stats())

	if *direct {
		pr, err := prover.New(keys, nil)
		if err != nil {
			return err
		}
		td := time.Now()
		for _, f := range files {
			c1, err := readC1(f)
			if err != nil {
				return err
			}
			if _, _, err := pr.ProveSector(ctx, st.worker.Slots(), c1, nil); err != nil {
				return err
			}
		}
		dw := time.Since(td)
		ps, ds := wall.Seconds()/float64(len(files)), dw.Seconds()/float64(len(files))
		fmt.Printf("direct mode (same process, no Temporal, partitions in sequence): %.2f s/proof; pipeline %.2f s/proof: ratio %.3f\n", ds, ps, ps/ds)
	}
	afterwards(shown, logs, batchID)
	return nil
}

// afterwards tells where the run's timings are and how to look at its
// batch again: the demo's stack ends with it, and `c2flow dev` on its own
// directory (.c2flow/dev) does not know the batch.
func afterwards(shownDir string, logs *runLogs, batchID string) {
	log := relTo(shownDir, logs.path)
	fmt.Printf("\nthis run's log: %s (phase timings: c2flow bench stats %s)%s\n", log, log, serverLogNote(shownDir, logs))
	fmt.Printf("to look at this batch again: c2flow dev --dir %s, then in another shell: c2flow status %s\n", shownDir, batchID)
}

func verifyStored(ctx context.Context, store *storage.Store, keys *params.Keys, c1file string, ref job.SectorRef) error {
	c1, err := readC1(c1file)
	if err != nil {
		return err
	}
	_, b, err := store.GetC2(ctx, ref.Identity())
	if err != nil {
		return err
	}
	c2, err := prover.UnmarshalC2(b)
	if err != nil {
		return err
	}
	return prover.VerifyC2(keys.VK, c1.Statement(), c2)
}

func summary(res job.BatchResult, wall time.Duration, ws worker.Stats) {
	fmt.Printf("\nbatch: %d sectors in %v: %.2f s/proof\n", len(res.Sectors), wall.Round(time.Millisecond), wall.Seconds()/float64(len(res.Sectors)))
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "sector\tpartition\tsynth ms\tqueue ms\tdevice ms\tfinalize ms\tsyntheses\t")
	for _, s := range res.Sectors {
		fmt.Fprintf(w, "%d\t(%v)\t\t\t\t\t\t\n", s.SectorID, s.Finished.Sub(s.Started).Round(time.Millisecond))
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
