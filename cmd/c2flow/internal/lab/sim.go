package lab

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"time"

	"github.com/c2flow/c2flow/cmd/c2flow/internal/cli"
	"github.com/c2flow/c2flow/cmd/internal/procflags"
	"github.com/c2flow/c2flow/sim"
)

// RunSim drives the real workflows, Temporal server, budgets and device
// slots with simulated hosts (package sim) and reports how the scheduler
// scales with the number of worker hosts.
func RunSim(ctx context.Context, args []string) error {
	fs := cli.NewFlags("sim")
	workers := fs.String("workers", "1", "worker hosts per run; a list (1,4,16) runs each and prints a table")
	devices := fs.Int("devices-per-worker", 4, "simulated devices (GPUs) per worker")
	sectors := fs.Int("sectors", 0, "sectors per run (0: --sectors-per-device x devices)")
	perDevice := fs.Float64("sectors-per-device", 2, "sectors per device of the run, when --sectors is 0")
	partitions := fs.Int("partitions", 10, "partitions per sector (10: a 32GiB sector)")
	budget := fs.Int("budget", 0, "partition budget per worker (0: two per device)")
	inFlight := fs.Int("max-in-flight", 0, "sectors in flight (0: enough to fill every budget twice)")
	modelLog := fs.String("model", "", "worker or bench log whose GPU_END/SYNTH_END/FINALIZE_END lines are the model (default: the embedded 32KiB CPU measurement)")
	scale := fs.Float64("scale", 1, "multiply every modelled time (< 1: a faster device, a higher task rate)")
	witnessGiB := fs.Float64("witness-gib", 12, "modelled memory of one synthesized partition, counted in the budget (not allocated)")
	arrival := fs.Bool("arrival-order", false, "serve devices first come instead of oldest sector first")
	qparts := fs.Int("queue-partitions", 1, "matching partitions per task queue of the embedded server (Temporal's default is 4)")
	dir := fs.String("dir", ".c2flow/sim", "directory of each run's Temporal SQLite file")
	pg := fs.String("db", "", "run the server on PostgreSQL instead: postgres://USER@HOST:PORT/DBNAME; each run gets a fresh database DBNAME_wW_UNIXTIME")
	shards := fs.Int("history-shards", 1, "history shards of the run's server")
	external := fs.String("temporal", "", "frontend HOST:PORT of a running server (e.g. c2flow server) to use instead of starting one; namespace default")
	out := fs.String("out", "", "write the reports as JSON here")
	var lf procflags.Log
	lf.Add(fs, "error")
	if err := fs.Parse(args); err != nil {
		return err
	}
	ws, err := sim.ParseInts(*workers)
	if err != nil {
		return fmt.Errorf("--workers: %w", err)
	}
	log, err := lf.Logger()
	if err != nil {
		return err
	}
	m := sim.DefaultModel()
	if *modelLog != "" {
		f, err := os.Open(*modelLog)
		if err != nil {
			return err
		}
		m, err = sim.FromLog(f)
		f.Close()
		if err != nil {
			return fmt.Errorf("%s: %w", *modelLog, err)
		}
		m.Source = filepath.Base(*modelLog)
	}
	m.Partitions, m.Scale, m.WitnessBytes = *partitions, *scale, int64(*witnessGiB*(1<<30))
	abs, err := filepath.Abs(*dir)
	if err != nil {
		return err
	}
	if *pg != "" && *external != "" {
		return errors.New("--db and --temporal: give one (--temporal's server has its own database)")
	}
	if *shards < 1 {
		return fmt.Errorf("--history-shards %d: must be at least 1", *shards)
	}
	server := fmt.Sprintf("embedded, %d history shard(s), SQLite", *shards)
	switch {
	case *pg != "":
		server = fmt.Sprintf("embedded, %d history shard(s), PostgreSQL", *shards)
	case *external != "":
		server = "the server at " + *external
	}
	fmt.Fprintf(os.Stderr, "SIMULATION: modelled work, real Temporal (%s), real workflows, budgets and device slots; nothing is proved\n", server)
	var reports []*sim.Report
	for _, w := range ws {
		s := *sectors
		if s == 0 {
			s = max(1, int(*perDevice*float64(w**devices)+0.5))
		}
		runDB := ""
		if *pg != "" {
			u, err := url.Parse(*pg)
			if err != nil {
				return fmt.Errorf("--db: %w", err)
			}
			u.Path += fmt.Sprintf("_w%d_%d", w, time.Now().Unix())
			runDB = u.String()
		}
		t0 := time.Now()
		r, err := sim.Run(ctx, sim.Config{Workers: w, DevicesPerWorker: *devices, Sectors: s, Budget: *budget, MaxInFlight: *inFlight,
			Model: m, Dir: filepath.Join(abs, fmt.Sprintf("w%d", w)), ArrivalOrder: *arrival, QueuePartitions: *qparts, Log: log,
			Postgres: runDB, HistoryShards: *shards, Temporal: *external,
			Progress: func(done, total int) {
				fmt.Fprintf(os.Stderr, "\r  W=%d: %d/%d sectors, %s", w, done, total, time.Since(t0).Round(time.Second))
			}})
		fmt.Fprintln(os.Stderr)
		if err != nil {
			return fmt.Errorf("W=%d: %w", w, err)
		}
		r.Print(os.Stdout)
		fmt.Println()
		reports = append(reports, r)
	}
	if len(reports) > 1 {
		sim.Table(os.Stdout, reports)
	}
	if *out != "" {
		b, _ := json.MarshalIndent(reports, "", "  ")
		if err := os.WriteFile(*out, b, 0o644); err != nil {
			return err
		}
	}
	return nil
}
