package activities

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
	"sync/atomic"
	"time"

	"go.temporal.io/sdk/client"
	sdkworker "go.temporal.io/sdk/worker"

	"github.com/c2flow/c2flow/gpu"
	"github.com/c2flow/c2flow/internal/yield"
	"github.com/c2flow/c2flow/metrics"
	"github.com/c2flow/c2flow/retention"
	"github.com/c2flow/c2flow/scheme"
	"github.com/c2flow/c2flow/storage"
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
	Profiles []string // size the memory budget; their keys are checked at start, loaded on first use
	// PartitionWorkers is the partition budget; MemoryBudget (bytes), when
	// set, is a byte budget instead, each partition counted at its own
	// synthesis memory.
	PartitionWorkers int
	MemoryBudget     int64
	// UrgentBudget is the most of MemoryBudget (bytes) kept for priority
	// 1's syntheses (0: DefaultUrgentBudget; negative: none, priority 1
	// then shares the budget).
	UrgentBudget int64
	// SectorCache bounds the decoded sectors kept across phases, in bytes
	// of C1 (0: DefaultSectorCache; negative: none).
	SectorCache   int64
	Backend       string // cpu (default) or cuda (a build with -tags cuda)
	Devices       []int  // cuda: device indices (empty: all visible)
	CPUDevices    int    // cpu: pseudo-devices sharing the cores
	FinalizeSlots int    // concurrent finalizes (0: one per device)
	// DeviceMemory caps each cuda device's memory use (gpu.WithDeviceMemory).
	DeviceMemory int64
	// DeviceType is the cuda backend's icicle device type
	// (gpu.WithDeviceType; empty: CUDA).
	DeviceType   string
	WitnessTTL   time.Duration    // idle witnesses are dropped after it (0: 15m)
	DrainTimeout time.Duration    // on stop, time given to witnesses in memory to finish (0: 2m)
	StatsFile    string           // if set, JSON stats are written here every second and at exit
	Hooks        *Hooks           // tests only: fault injection (nil in production)
	Metrics      *metrics.Metrics `json:"-"` // optional: Prometheus metrics (the client's SDK handler too)
	Log          *slog.Logger
	// Spill is where split roles pass witnesses: "dir:PATH" (a disk every
	// host mounts) or "s3" (the artifact store, under spill/).
	Spill string
	// Schemes are the proof schemes the host runs, over its keys: the
	// composition root's (registry.Schemes). A proving host needs them.
	Schemes scheme.Set `json:"-"`
	// ArrivalOrder serves devices first come (simulation comparisons).
	ArrivalOrder bool
	// Retention is how long a workflow-role worker keeps what jobs left
	// in the store (inputs, orphaned spills); it sweeps every
	// RetentionEvery (0: retention.DefaultEvery; negative: never).
	Retention      retention.Policy
	RetentionEvery time.Duration
}

// DefaultUrgentBudget is a host's default priority-1 synthesis reserve:
// room for a couple of small partitions (a 2KiB WinningPoSt's, the test
// scheme's), not for a 32GiB one, which waits for the main budget.
const DefaultUrgentBudget = 1 << 30

func (cfg *Config) urgentBudget() int64 {
	if cfg.UrgentBudget == 0 {
		return DefaultUrgentBudget
	}
	return cfg.UrgentBudget
}

// DefaultSectorCache is a host's default bound on decoded sectors kept:
// six sparse 32GiB C1s of 38.6 MB.
const DefaultSectorCache = 256 << 20

// Stats is what a worker process reports about itself.
type Stats struct {
	ID      string      `json:"id"`
	Roles   []string    `json:"roles"`
	Devices []string    `json:"devices"`
	Budget  BudgetStats `json:"budget"`
	// Urgent is the priority-1 synthesis reserve, if the host has one.
	Urgent  *BudgetStats             `json:"urgent_budget,omitempty"`
	Host    HostStats                `json:"host"`
	Sectors SectorCacheStats         `json:"sector_cache"`
	Busy    map[string]time.Duration `json:"device_busy"`
	// Quarantined devices and the error that took each out.
	Quarantined map[string]string `json:"quarantined,omitempty"`
	// DeviceMemory is each device's accounting, where its backend keeps
	// one (icicle's).
	DeviceMemory map[string]gpu.DeviceMemory `json:"device_memory,omitempty"`
	// Yield is what the host's urgency gate did: how often and how long
	// lower-priority work waited for priority-1 work.
	Yield   *yield.Stats `json:"yield,omitempty"`
	PeakRSS int64        `json:"peak_rss_bytes"`
	At      time.Time    `json:"at"`
}

// Worker is a configured worker process, ready to run.
type Worker struct {
	cfg    Config
	store  *storage.Store // where its stats are published for c2flow fleet (nil: not)
	client client.Client
	// publishing is set while a publish is in flight.
	publishing atomic.Bool
	host       *Host
	budget     *Budget
	slots      *gpu.Slots
	workers    []sdkworker.Worker
	synth      []sdkworker.Worker // stopped first on shutdown
}

// New validates the configuration, builds the host over deps (its phases,
// devices and budget, assembled by the process: ProverDeps, or the
// simulation's) with the spill and witness table, and registers its roles'
// Temporal workers. Errors here are startup errors: bad flags, a missing
// spill.
func New(c client.Client, store *storage.Store, cfg Config, deps Deps) (*Worker, error) {
	if err := cfg.defaults(); err != nil {
		return nil, err
	}
	h, err := newHost(store, &cfg, deps)
	if err != nil {
		return nil, err
	}
	h.Heartbeats = c
	w := &Worker{cfg: cfg, host: h, budget: h.Budget, slots: h.Slots, store: store, client: c}
	if cfg.Metrics != nil {
		cfg.Metrics.Bind(func() metrics.Budget {
			s := h.Budget.Stats()
			return metrics.Budget{Max: s.Max, Running: s.Running, Held: s.Held, Peak: s.Peak, HeldBytes: s.HeldBytes,
				KeyBytes: s.KeyBytes, SystemBytes: s.SystemBytes, ExpansionBytes: s.ExpansionBytes}
		}, h.Slots.Busy)
	}
	if err := w.register(c); err != nil {
		return nil, err
	}
	cfg.Log.Info("worker ready", "id", cfg.ID, "roles", cfg.Roles, "devices", w.deviceNames(), "partition_budget", h.Budget.Stats().Max, "key_bytes", h.Budget.Stats().KeyBytes, "backend", backendName(cfg.Backend))
	return w, nil
}

func (cfg *Config) defaults() error {
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
			return fmt.Errorf("unknown role %q (workflow, prove, synth or device)", r)
		}
	}
	if cfg.has(RoleProve) && cfg.has(RoleSynth) {
		return errors.New("roles prove and synth exclude each other: prove keeps witnesses on this host, synth spills them")
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
	return nil
}

func (cfg *Config) has(role string) bool { return slices.Contains(cfg.Roles, role) }

// newHost builds the host over deps: its spill (which split roles need),
// its witness table and finalize slots.
func newHost(store *storage.Store, cfg *Config, deps Deps) (*Host, error) {
	if deps.Phases == nil || deps.Slots == nil || deps.Budget == nil {
		return nil, errors.New("worker host: phases, device slots and a budget are all needed")
	}
	spill, err := ParseSpill(cfg.Spill, store)
	if err != nil {
		return nil, err
	}
	if spill == nil && (cfg.has(RoleSynth) || cfg.has(RoleDevice)) {
		return nil, errors.New("roles synth and device need --spill (dir:PATH on a shared disk, or s3)")
	}
	h := NewHost(cfg.ID, deps.Phases, deps.Slots, deps.Budget, cfg.Log)
	h.Urgent = deps.Urgent
	h.Hooks, h.Metrics, h.ArrivalOrder = cfg.Hooks, cfg.Metrics, cfg.ArrivalOrder
	h.SetSpill(spill, cfg.has(RoleSynth))
	fin := cfg.FinalizeSlots
	if fin <= 0 {
		fin = deps.Slots.Len()
	}
	h.SetFinalizeSlots(fin)
	return h, nil
}

func (w *Worker) deviceNames() []string {
	names := []string{}
	for _, d := range w.slots.Devices() {
		names = append(names, d.Name())
	}
	return names
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

// Gate is the worker's urgency gate (Host.Gate): what else in its process
// serves urgent work holds it too (c2flow dev's gateway).
func (w *Worker) Gate() *yield.Gate { return w.host.Gate }

// Stats returns the worker's counters.
func (w *Worker) Stats() Stats {
	var sc SectorCacheStats
	if pp, ok := w.host.Phases.(*ProverPhases); ok && pp.Sectors != nil {
		sc = pp.Sectors.Stats()
	}
	st := Stats{ID: w.cfg.ID, Roles: w.cfg.Roles, Devices: w.deviceNames(), Budget: w.budget.Stats(), Host: w.host.Stats(), Sectors: sc,
		Busy: w.slots.Busy(), Quarantined: w.slots.Quarantined(), DeviceMemory: w.slots.Memory(), PeakRSS: metrics.PeakRSS(), At: time.Now()}
	if g := w.host.Gate; g != nil {
		y := g.Stats()
		st.Yield = &y
	}
	if w.host.Urgent != nil {
		u := w.host.Urgent.Stats()
		st.Urgent = &u
	}
	return st
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
	go w.host.ExpireWitnesses(ctx, w.cfg.WitnessTTL)
	if w.cfg.RetentionEvery >= 0 {
		// Every orchestrator sweeps the store (a second sweep of the same
		// objects finds them gone: it costs a listing); every host with
		// a spill directory sweeps it.
		p := w.cfg.Retention
		if dir, ok := strings.CutPrefix(w.cfg.Spill, "dir:"); ok && p.SpillDir == "" {
			p.SpillDir = dir
		}
		store := w.store
		if !w.cfg.has(RoleWorkflow) {
			store = nil
		}
		if store != nil || p.SpillDir != "" {
			go retention.Every(ctx, w.cfg.RetentionEvery, store, retention.TemporalJobs{Client: w.client}, p, w.cfg.Log)
		}
	}
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	var published time.Time
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
		if !done && time.Since(published) >= PublishEvery && w.publishing.CompareAndSwap(false, true) {
			// Off the loop: a store that does not answer delays
			// nothing here.
			go func() {
				defer w.publishing.Store(false)
				w.publish(ctx)
			}()
			published = time.Now()
		}
	}
	w.unpublish()
	w.drain()
	for i := len(w.workers) - 1; i >= 0; i-- {
		if !slices.Contains(w.synth, w.workers[i]) {
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
	if len(w.synth) == 0 {
		return
	}
	// The bound counts from the stop, the wait for running syntheses
	// included, so a supervisor's stop timeout can be sized from the flag.
	start := time.Now()
	deadline := start.Add(w.cfg.DrainTimeout)
	for _, s := range w.synth {
		s.Stop() // waits for running syntheses to return (WorkerStopTimeout)
	}
	// Say what the stop waits for, and again every 10 s: a silent wait
	// looks like a hang.
	said, held := time.Now(), w.host.Witnesses()
	if held > 0 {
		w.cfg.Log.Warn("stopping: the partitions synthesized here finish their device phase and finalize first", "witnesses", held, "at_most", time.Until(deadline).Round(time.Second))
	}
	for w.host.Witnesses() > 0 && time.Now().Before(deadline) {
		if w.cfg.StatsFile != "" {
			w.writeStats()
		}
		if time.Since(said) >= 10*time.Second {
			w.cfg.Log.Warn("stopping: still waiting for partitions to finish", "witnesses", w.host.Witnesses(), "left", time.Until(deadline).Round(time.Second))
			said = time.Now()
		}
		time.Sleep(100 * time.Millisecond)
	}
	if n := w.host.Witnesses(); n > 0 {
		w.cfg.Log.Warn("stopping with witnesses not finished: their partitions are synthesized again elsewhere", "witnesses", n, "ms", time.Since(start).Milliseconds())
	} else {
		w.cfg.Log.Info("drained: every synthesized partition finished on this host", "witnesses", held, "ms", time.Since(start).Milliseconds())
	}
}

// PublishEvery is how often a worker writes its stats to the artifact
// store for c2flow fleet (HostReportKey).
const PublishEvery = 15 * time.Second

// HostReportKey is where a worker publishes its Stats (JSON): fleet/<id>.json.
func HostReportKey(id string) string { return "fleet/" + id + ".json" }

// publish writes the worker's stats under HostReportKey; a store that
// does not answer is no reason to stop proving, so it is only logged.
func (w *Worker) publish(ctx context.Context) {
	if w.store == nil {
		return
	}
	b, _ := json.Marshal(w.Stats())
	pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := w.store.Put(pctx, HostReportKey(w.cfg.ID), b); err != nil && ctx.Err() == nil {
		w.cfg.Log.Debug("stats not published for c2flow fleet", "error", err)
	}
}

// unpublish removes the worker's report as it stops.
func (w *Worker) unpublish() {
	if w.store == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	w.store.Delete(ctx, HostReportKey(w.cfg.ID))
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
