// Package host runs a c2flow worker process: the Temporal workers of its
// roles over one set of activities, device slots and memory budget.
package host

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"

	"github.com/c2flow/c2flow/activities"
	"github.com/c2flow/c2flow/gpu"
	"github.com/c2flow/c2flow/job"
	"github.com/c2flow/c2flow/metrics"
	"github.com/c2flow/c2flow/params"
	"github.com/c2flow/c2flow/porep"
	"github.com/c2flow/c2flow/storage"
	"github.com/c2flow/c2flow/workflows"
)

// Roles a worker process can take.
const (
	RoleWorkflow = "workflow" // workflows, C1 validation, C2 storage
	RoleProve    = "prove"    // synthesis, device phase and finalize of this host's witnesses
	// Split roles, for fleets whose CPU and GPU boxes differ: witnesses
	// travel through the spill (Config.Spill).
	RoleSynth  = "synth"  // synthesis only: witnesses spilled for device hosts
	RoleDevice = "device" // device phase and finalize of spilled witnesses
)

// Config of a worker process.
type Config struct {
	ID       string   // unique per process; empty: hostname-pid-random
	Roles    []string // empty: all
	Profiles []string // keys loaded at start; sizes the memory budget
	// PartitionWorkers is the partition budget; MemoryBudget (bytes), when
	// set, derives it from the largest profile's synthesis memory instead.
	PartitionWorkers int
	MemoryBudget     int64
	Backend          string // cpu (default) or cuda (a build with -tags cuda)
	Devices          []int  // cuda: device indices (empty: all visible)
	CPUDevices       int    // cpu: pseudo-devices sharing the cores
	FinalizeSlots    int    // concurrent finalizes (0: one per device)
	EarlyG2          bool
	WitnessTTL       time.Duration     // idle witnesses are dropped after it (0: 15m)
	DrainTimeout     time.Duration     // on stop, time given to witnesses in memory to finish (0: 2m)
	ParamsDir        string            // local parameter cache
	StatsFile        string            // if set, JSON stats are written here every second and at exit
	Hooks            *activities.Hooks // tests only: fault injection (nil in production)
	Metrics          *metrics.Metrics  `json:"-"` // optional: Prometheus metrics (the client's SDK handler too)
	Log              *slog.Logger
	// Spill is where split roles pass witnesses: "dir:PATH" (a disk every
	// host mounts) or "s3" (the artifact store, under spill/).
	Spill string
	// Sim, if set, replaces proving with a simulation (package sim): its
	// devices and activities run under this process's real workers,
	// queues and budget. Only the simulation command and its tests set it.
	Sim Simulator `json:"-"`
}

// Activities are what a worker process registers on its queues: the
// prover's (activities.Host) or a simulation's.
type Activities interface {
	job.Activities
	// Witnesses is the number of synthesized partitions in memory.
	Witnesses() int
	ExpireWitnesses(ctx context.Context, ttl time.Duration)
	Stats() activities.HostStats
}

// Simulator builds a simulated host's devices and activities.
type Simulator interface {
	Slots(id string) (*gpu.Slots, error)
	Host(id string, budget *activities.Budget, slots *gpu.Slots, log *slog.Logger) Activities
}

// Stats is what a worker process reports about itself.
type Stats struct {
	ID      string                   `json:"id"`
	Roles   []string                 `json:"roles"`
	Devices []string                 `json:"devices"`
	Budget  activities.BudgetStats   `json:"budget"`
	Host    activities.HostStats     `json:"host"`
	Busy    map[string]time.Duration `json:"device_busy"`
	// Quarantined devices and the error that took each out.
	Quarantined map[string]string `json:"quarantined,omitempty"`
	PeakRSS     int64             `json:"peak_rss_bytes"`
	At          time.Time         `json:"at"`
}

// Worker is a configured worker process, ready to run.
type Worker struct {
	cfg     Config
	acts    Activities
	budget  *activities.Budget
	slots   *gpu.Slots
	workers []worker.Worker
	synth   worker.Worker // stopped first on shutdown
}

// New validates the configuration, loads the profiles' keys and builds the
// Temporal workers. Errors here are startup errors: a budget smaller than
// one partition, missing keys, bad flags.
func New(ctx context.Context, c client.Client, store *storage.Store, cfg Config) (*Worker, error) {
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	if cfg.ID == "" {
		cfg.ID = NewID()
	}
	if len(cfg.Roles) == 0 {
		cfg.Roles = []string{RoleWorkflow, RoleProve}
	}
	for _, r := range cfg.Roles {
		if r != RoleWorkflow && r != RoleProve && r != RoleSynth && r != RoleDevice {
			return nil, fmt.Errorf("unknown role %q (workflow, prove, synth or device)", r)
		}
	}
	if slices.Contains(cfg.Roles, RoleProve) && slices.Contains(cfg.Roles, RoleSynth) {
		return nil, errors.New("roles prove and synth exclude each other: prove keeps witnesses on this host, synth spills them")
	}
	spill, err := activities.ParseSpill(cfg.Spill, store)
	if err != nil {
		return nil, err
	}
	if spill == nil && (slices.Contains(cfg.Roles, RoleSynth) || slices.Contains(cfg.Roles, RoleDevice)) {
		return nil, errors.New("roles synth and device need --spill (dir:PATH on a shared disk, or s3)")
	}
	if cfg.WitnessTTL == 0 {
		cfg.WitnessTTL = 15 * time.Minute
	}
	if cfg.DrainTimeout == 0 {
		cfg.DrainTimeout = 2 * time.Minute
	}
	if cfg.CPUDevices == 0 {
		cfg.CPUDevices = 1
	}
	// Devices first: a build without CUDA says so before any key loads.
	var slots *gpu.Slots
	if cfg.Sim != nil {
		cfg.Backend = "sim"
		slots, err = cfg.Sim.Slots(cfg.ID)
	} else {
		slots, err = gpu.NewBackendSlots(backendName(cfg.Backend), cfg.Devices, cfg.CPUDevices)
	}
	if err != nil {
		return nil, err
	}
	keys := &activities.KeyCache{Store: storage.ParamCache{Local: params.DirStore{Root: cfg.ParamsDir}, S3: store}, Log: cfg.Log, EarlyG2: cfg.EarlyG2}

	budgetN := cfg.PartitionWorkers
	var largest int64
	var largestName string
	for _, name := range cfg.Profiles {
		p, err := porep.LookupProfile(name)
		if err != nil {
			return nil, err
		}
		pr, err := keys.Prover(ctx, p)
		if err != nil {
			return nil, fmt.Errorf("profile %s: %w", name, err)
		}
		if b := params.SynthBytes(pr.Keys.CCS); b > largest {
			largest, largestName = b, name
		}
	}
	if cfg.MemoryBudget > 0 {
		if largest == 0 {
			return nil, errors.New("--memory-budget needs --profiles to size a partition")
		}
		budgetN = int(cfg.MemoryBudget / largest)
		if budgetN < 1 {
			return nil, fmt.Errorf("memory budget of %d bytes is smaller than one partition of profile %s (%d bytes): nothing could ever be synthesized", cfg.MemoryBudget, largestName, largest)
		}
	}
	if budgetN == 0 {
		budgetN = 1
	}
	budget, err := activities.NewBudget(budgetN)
	if err != nil {
		return nil, err
	}
	w := &Worker{cfg: cfg, slots: slots, budget: budget}
	var h Activities
	if cfg.Sim != nil {
		h = cfg.Sim.Host(cfg.ID, budget, slots, cfg.Log)
	} else {
		ph := activities.NewHost(cfg.ID, store, keys, slots, budget, cfg.Log)
		ph.Hooks, ph.Metrics = cfg.Hooks, cfg.Metrics
		ph.SetSpill(spill, slices.Contains(cfg.Roles, RoleSynth))
		fin := cfg.FinalizeSlots
		if fin <= 0 {
			fin = slots.Len()
		}
		ph.SetFinalizeSlots(fin)
		h = ph
	}
	w.acts = h
	if cfg.Metrics != nil {
		cfg.Metrics.Bind(func() (int, int, int, int64, int) {
			s := budget.Stats()
			return s.Max, s.Running, s.Held, s.HeldBytes, s.Peak
		}, slots.Busy)
	}
	devNames := []string{}
	for _, d := range slots.Devices() {
		devNames = append(devNames, d.Name())
	}
	// The identity is what Temporal shows for every poller and attempt of
	// this worker (c2flow fleet, the UI, activity history).
	hn, _ := os.Hostname()
	identity := fmt.Sprintf("%s host=%s roles=%s devices=%s budget=%d", cfg.ID, hn, strings.Join(cfg.Roles, ","), strings.Join(devNames, ","), budgetN)
	// Heartbeats go out at most every 2 s. The SDK gives a heartbeat RPC
	// no longer than the throttle interval (1 s at least) before it cancels
	// the activity, so a shorter throttle turns a CPU-starved Temporal
	// frontend (MSMs saturate the cores) into spurious cancellations; a
	// cancel therefore reaches an activity within about 2 s.
	base := worker.Options{Identity: identity, MaxHeartbeatThrottleInterval: 2 * time.Second, WorkerStopTimeout: 30 * time.Second}
	reg := func(wk worker.Worker, name string, f any) {
		wk.RegisterActivityWithOptions(f, activity.RegisterOptions{Name: name})
	}
	if slices.Contains(cfg.Roles, RoleWorkflow) {
		o := base
		wk := worker.New(c, job.QueueWorkflow, o)
		workflows.Register(wk)
		reg(wk, job.ActValidateC1, h.ValidateC1)
		reg(wk, job.ActStoreC2, h.StoreC2)
		reg(wk, job.ActLookupC2, h.LookupC2)
		w.workers = append(w.workers, wk)
	}
	prove, synthOnly, device := slices.Contains(cfg.Roles, RoleProve), slices.Contains(cfg.Roles, RoleSynth), slices.Contains(cfg.Roles, RoleDevice)
	if prove || synthOnly || device {
		o := base
		o.DisableWorkflowWorker, o.MaxConcurrentActivityExecutionSize = true, 16
		ctl := worker.New(c, job.ControlQueue(cfg.ID), o)
		reg(ctl, job.ActRelease, h.Release)
		// Host queues first: a synthesized witness must find its host's
		// queues polled.
		w.workers = append(w.workers, ctl)
	}
	if prove {
		// Every witness in memory may wait here for a device (the budget),
		// beside those on a device past the point where they left the
		// budget (one per slot): the slots, not Temporal's queue, decide
		// which runs next (oldest sector first).
		w.workers = append(w.workers, deviceWorker(c, base, job.DeviceQueue(cfg.ID), budgetN+slots.Len(), h))
	}
	if device {
		// Spilled witnesses are loaded when their device phase starts:
		// one on each device and one loaded, waiting, per device.
		w.workers = append(w.workers, deviceWorker(c, base, job.QueueDevice, 2*slots.Len(), h))
	}
	if prove || device {
		o := base
		// Every witness may wait for its finalize inside the activity
		// (heartbeating) for one of fin CPU slots: the host's queue is
		// always drained, so a finalize left in it means the host is gone.
		o.DisableWorkflowWorker, o.MaxConcurrentActivityExecutionSize = true, budgetN+2*slots.Len()
		fw := worker.New(c, job.FinalizeQueue(cfg.ID), o)
		reg(fw, job.ActFinalize, h.Finalize)
		w.workers = append(w.workers, fw)
	}
	if prove || synthOnly {
		fixed := func(n int) worker.SlotSupplier {
			s, _ := worker.NewFixedSizeSlotSupplier(n)
			return s
		}
		tuner, err := worker.NewCompositeTuner(worker.CompositeTunerOptions{
			WorkflowSlotSupplier: fixed(1), ActivitySlotSupplier: budget,
			LocalActivitySlotSupplier: fixed(1), NexusSlotSupplier: fixed(1), SessionActivitySlotSupplier: fixed(1)})
		if err != nil {
			return nil, err
		}
		o := base
		o.Tuner, o.DisableWorkflowWorker = tuner, true
		synth := worker.New(c, job.QueueSynth, o)
		reg(synth, job.ActSynthesize, h.Synthesize)
		w.workers = append(w.workers, synth)
		w.synth = synth
	}
	cfg.Log.Info("worker ready", "id", cfg.ID, "host", hn, "roles", cfg.Roles, "devices", devNames, "partition_budget", budgetN, "backend", backendName(cfg.Backend))
	return w, nil
}

func deviceWorker(c client.Client, base worker.Options, queue string, concurrency int, h Activities) worker.Worker {
	o := base
	o.DisableWorkflowWorker, o.MaxConcurrentActivityExecutionSize = true, concurrency
	wk := worker.New(c, queue, o)
	wk.RegisterActivityWithOptions(h.DevicePhase, activity.RegisterOptions{Name: job.ActDevicePhase})
	return wk
}

func backendName(b string) string {
	if b == "" {
		return "cpu"
	}
	return b
}

// ID is the worker's identity.
func (w *Worker) ID() string { return w.cfg.ID }

// Slots are the worker's device slots.
func (w *Worker) Slots() *gpu.Slots { return w.slots }

// Stats returns the worker's counters.
func (w *Worker) Stats() Stats {
	var devs []string
	for _, d := range w.slots.Devices() {
		devs = append(devs, d.Name())
	}
	return Stats{ID: w.cfg.ID, Roles: w.cfg.Roles, Devices: devs, Budget: w.budget.Stats(), Host: w.acts.Stats(),
		Busy: w.slots.Busy(), Quarantined: w.slots.Quarantined(), PeakRSS: metrics.PeakRSS(), At: time.Now()}
}

// Run starts the workers and blocks until ctx ends, then stops them:
// polling stops, in-flight activities get WorkerStopTimeout to finish.
func (w *Worker) Run(ctx context.Context) error {
	for i, wk := range w.workers {
		if err := wk.Start(); err != nil {
			for _, s := range w.workers[:i] {
				s.Stop()
			}
			return fmt.Errorf("start worker: %w", err)
		}
	}
	go w.acts.ExpireWitnesses(ctx, w.cfg.WitnessTTL)
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for done := false; !done; {
		select {
		case <-ctx.Done():
			done = true
		case <-tick.C:
		}
		if w.cfg.StatsFile != "" {
			if err := w.writeStats(); err != nil {
				w.cfg.Log.Warn("stats file", "error", err)
			}
		}
	}
	w.drain()
	for i := len(w.workers) - 1; i >= 0; i-- {
		if w.workers[i] != w.synth {
			w.workers[i].Stop()
		}
	}
	if w.cfg.StatsFile != "" {
		return w.writeStats()
	}
	return nil
}

// drain is the graceful half of a stop: no new synthesis, then the
// witnesses already in this host's memory run their device phase and
// finalize here (their queues are still polled), so a removed worker hands
// back finished partitions instead of lost ones. DrainTimeout bounds it;
// what is left is synthesized again elsewhere.
func (w *Worker) drain() {
	if w.synth == nil {
		return
	}
	w.synth.Stop() // waits for running syntheses to return
	deadline := time.Now().Add(w.cfg.DrainTimeout)
	for w.acts.Witnesses() > 0 && time.Now().Before(deadline) {
		if w.cfg.StatsFile != "" {
			w.writeStats()
		}
		time.Sleep(100 * time.Millisecond)
	}
	if n := w.acts.Witnesses(); n > 0 {
		w.cfg.Log.Warn("stopping with witnesses not finished: their partitions are synthesized again elsewhere", "witnesses", n)
	} else {
		w.cfg.Log.Info("drained: every synthesized partition finished on this host")
	}
}

func (w *Worker) writeStats() error {
	b, _ := json.MarshalIndent(w.Stats(), "", "  ")
	tmp := w.cfg.StatsFile + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, w.cfg.StatsFile)
}

// NewID returns a process-unique worker id: hostname, pid and a random tag.
func NewID() string {
	hn, _ := os.Hostname()
	var b [3]byte
	rand.Read(b[:])
	return fmt.Sprintf("%s-%d-%s", sanitize(hn), os.Getpid(), hex.EncodeToString(b[:]))
}

func sanitize(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' {
			return r
		}
		return '-'
	}, s)
}
