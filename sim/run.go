package sim

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/c2flow/c2flow/activities"
	"github.com/c2flow/c2flow/batch"
	"github.com/c2flow/c2flow/devstack"
	"github.com/c2flow/c2flow/job"
	"github.com/c2flow/c2flow/stack"
)

// Config of one simulation run.
type Config struct {
	Workers          int // worker hosts, each with its own Temporal client, pollers and budget
	DevicesPerWorker int
	Sectors          int
	// Budget is each worker's partition budget (0: two per device, so a
	// device always has its next witness ready).
	Budget int
	// MaxInFlight is the batch's sectors in flight (0: enough to fill every
	// budget twice over).
	MaxInFlight int
	Model       Model
	// Dir holds the run's Temporal SQLite file, created afresh.
	Dir string
	// ArrivalOrder serves devices first come instead of oldest sector
	// first (the comparison for the ordering).
	ArrivalOrder bool
	// QueuePartitions of the embedded server's task queues (0: 1; 4 is
	// Temporal's default, where matching is not first-come).
	QueuePartitions int
	// Postgres, if set, persists the run's server to this PostgreSQL
	// database (devstack.Options.Postgres) instead of a SQLite file in
	// Dir; a fresh database: the batch's ID is fixed.
	Postgres string
	// HistoryShards of the run's server (0: 1).
	HistoryShards int
	// Temporal, if set, is the frontend of a server already running (its
	// namespace "default"): none is started, and the server's own CPU and
	// memory can be measured apart from the simulated hosts.
	Temporal string
	Log      *slog.Logger
	// Progress, if set, is called every few seconds while the batch runs.
	Progress func(done, total int)
}

func (c *Config) defaults() error {
	if c.Workers < 1 || c.DevicesPerWorker < 1 || c.Sectors < 1 {
		return fmt.Errorf("sim: workers %d, devices per worker %d, sectors %d: each must be at least 1", c.Workers, c.DevicesPerWorker, c.Sectors)
	}
	if err := c.Model.Validate(); err != nil {
		return err
	}
	if c.Budget == 0 {
		c.Budget = 2 * c.DevicesPerWorker
	}
	if c.Budget < 1 {
		return fmt.Errorf("sim: budget %d", c.Budget)
	}
	if c.MaxInFlight == 0 {
		c.MaxInFlight = max(2, (2*c.Workers*c.Budget+c.Model.Partitions-1)/c.Model.Partitions)
	}
	if c.Log == nil {
		c.Log = slog.New(slog.DiscardHandler)
	}
	if c.Dir == "" {
		return errors.New("sim: Dir is required")
	}
	return nil
}

// simulator gives activities.New the simulated devices and phases.
type simulator struct {
	cfg *Config
	rec *Recorder
}

// deps are a simulated host's: its modelled devices and phases, and the
// real partition budget.
func (s *simulator) deps(id string) (activities.Deps, error) {
	slots, err := Slots(id, s.cfg.DevicesPerWorker)
	if err != nil {
		return activities.Deps{}, err
	}
	budget, err := activities.NewBudget(max(s.cfg.Budget, 1))
	if err != nil {
		return activities.Deps{}, err
	}
	return activities.Deps{Phases: NewPhases(id, s.cfg.Model, s.rec), Slots: slots, Budget: budget}, nil
}

// Run starts an embedded Temporal server (one history shard, SQLite, unless
// Config says otherwise),
// Workers worker hosts in this process and a batch of Sectors simulated
// sectors through the real BatchWorkflow, and reports what the scheduler
// did.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	if err := cfg.defaults(); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(cfg.Dir, 0o755); err != nil {
		return nil, err
	}
	st, err := stack.Start(ctx, stack.Options{Dir: cfg.Dir, FreshDB: true, NoS3: true, Log: cfg.Log, TemporalAddr: cfg.Temporal,
		Temporal: devstack.Options{QueuePartitions: cfg.QueuePartitions, Postgres: cfg.Postgres, HistoryShards: cfg.HistoryShards}})
	if err != nil {
		return nil, err
	}
	defer st.Stop()
	sim := &simulator{cfg: &cfg, rec: NewRecorder()}
	var workers []*activities.Worker
	for i := 0; i < cfg.Workers; i++ {
		// Each host polls through its own client, as separate hosts do.
		id := fmt.Sprintf("sim%02d", i)
		deps, err := sim.deps(id)
		if err != nil {
			return nil, fmt.Errorf("sim worker %d: %w", i, err)
		}
		w, err := st.AddWorkerWith(ctx, activities.Config{ID: id, PartitionWorkers: cfg.Budget, Backend: "sim",
			DrainTimeout: time.Second, ArrivalOrder: cfg.ArrivalOrder, Log: cfg.Log}, deps, true)
		if err != nil {
			return nil, fmt.Errorf("sim worker %d: %w", i, err)
		}
		workers = append(workers, w)
	}
	refs := make([]job.Ref, cfg.Sectors)
	for i := range refs {
		refs[i] = job.Ref{ProverID: "51", SectorID: uint64(i + 1), InputDigest: "sim"}
	}
	submitted := time.Now()
	if _, err := batch.Submit(ctx, st.Client, refs, batch.Options{BatchID: "sim", MaxInFlight: cfg.MaxInFlight}); err != nil {
		return nil, err
	}
	var progress func(job.BatchProgress)
	if cfg.Progress != nil {
		progress = func(p job.BatchProgress) {
			done := 0
			for _, s := range p.Sectors {
				if s.Status == job.StatusProved {
					done++
				}
			}
			cfg.Progress(done, p.Total)
		}
	}
	res, err := batch.Wait(ctx, st.Client, "sim", 5*time.Second, progress)
	if err != nil {
		return nil, fmt.Errorf("sim batch: %w", err)
	}
	finished := time.Now()
	if err := st.StopWorkers(); err != nil {
		cfg.Log.Error("sim workers", "error", err)
	}
	var failed int
	for _, s := range res.Sectors {
		if s.Status != job.StatusProved {
			failed++
		}
	}
	var hs []activities.Stats
	busy := time.Duration(0)
	for _, w := range workers {
		st := w.Stats()
		hs = append(hs, st)
		for _, b := range st.Busy {
			busy += b
		}
	}
	return newReport(cfg, sim.rec, hs, busy, submitted, finished, failed), nil
}
