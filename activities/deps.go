package activities

import (
	"context"
	"errors"
	"fmt"

	"github.com/c2flow/c2flow/gpu"
	"github.com/c2flow/c2flow/job"
	"github.com/c2flow/c2flow/scheme"
	"github.com/c2flow/c2flow/storage"
)

// The urgent priority is job's; gpu mirrors it (it imports nothing of the
// orchestration). These fail to compile unless the two agree.
var (
	_ [gpu.Urgent - job.PriorityUrgent]struct{}
	_ [job.PriorityUrgent - gpu.Urgent]struct{}
)

// Deps are what a worker host runs on, assembled by its process and handed
// to New: the phases that do a partition's work, the device slots and the
// memory budget. The proving host's come from ProverDeps; the simulation
// (package sim) gives modelled ones to the same host code.
type Deps struct {
	Phases Phases
	Slots  *gpu.Slots
	Budget *Budget
	// Urgent is the priority-1 synthesis reserve (nil: priority 1 shares
	// Budget).
	Urgent *Budget
}

// ProverDeps assembles a proving host's deps: its devices first (a build
// without CUDA says so before any key loads), then the budget sized by
// the configured profiles' partitions under cfg.Schemes (the composition
// root's registry), and the phases over them with the host's sector
// cache; proving keys load on first use.
func ProverDeps(ctx context.Context, store *storage.Store, cfg Config) (Deps, error) {
	if err := cfg.defaults(); err != nil {
		return Deps{}, err
	}
	slots, err := gpu.NewBackendSlots(backendName(cfg.Backend), cfg.Devices, cfg.CPUDevices,
		gpu.WithDeviceMemory(cfg.DeviceMemory), gpu.WithDeviceType(cfg.DeviceType), gpu.WithCUDALogger(cfg.Log))
	if err != nil {
		return Deps{}, err
	}
	schemes := cfg.Schemes
	if len(schemes) == 0 {
		return Deps{}, errors.New("a proving host needs its proof schemes (Config.Schemes: registry.Schemes)")
	}
	budget, urgent, err := budgetFor(ctx, schemes, &cfg)
	if err != nil {
		return Deps{}, err
	}
	if cfg.has(RoleProve) || cfg.has(RoleDevice) {
		budget.SetLanes(slots.Lanes(), slots.QuotientOnDevice()) // a synthesis-only host runs no device phase
	}
	pp := &ProverPhases{Artifacts: store, Schemes: schemes, Log: cfg.Log, FaultyFinalize: cfg.Hooks != nil && cfg.Hooks.FaultyFinalize,
		Circuits: budget, SynthesisOnly: cfg.has(RoleSynth) && !cfg.has(RoleDevice) && !cfg.has(RoleProve)}
	// Proving keys load on first use, counted in the budget then (a host
	// serving 2KiB and 32GiB sectors does not hold the 32GiB keys until a
	// 32GiB sector comes). A configured profile whose keys are absent is
	// refused now, by its verifying key alone: an operator's error, not a
	// failed sector's.
	for _, name := range cfg.Profiles {
		sc, err := schemes.For(name)
		if err != nil {
			return Deps{}, err
		}
		v, err := sc.Verifier(ctx, name)
		if err != nil {
			return Deps{}, fmt.Errorf("profile %s: %w", name, err)
		}
		// A scheme whose verifier is its circuit (the test scheme's
		// small keys) holds its keys from now: counted from now.
		if c, ok := v.(scheme.Circuit); ok {
			if err := pp.countKeys(name, c); err != nil {
				return Deps{}, err
			}
		}
	}
	if n := cfg.SectorCache; n >= 0 {
		if n == 0 {
			n = DefaultSectorCache
		}
		pp.Sectors = NewSectorCache(n)
	}
	return Deps{Phases: pp, Slots: slots, Budget: budget, Urgent: urgent}, nil
}

// budgetFor returns the host's budget: PartitionWorkers partitions, or
// MemoryBudget bytes, each partition counted at its own PartitionBytes
// (known without the keys), a reservation not yet sized at the smallest
// configured profile's. A configured profile whose partition could never
// fit is refused; circuits (keys, systems, device lanes) are held beside
// the partitions as they load, and a set that leaves no room for a
// partition is refused then (Budget.HoldCircuit).
//
// The urgent reserve (priority 1's syntheses, job.QueueSynthUrgent) is
// carved out of a byte budget, up to UrgentBudget bytes of what one
// partition of the largest profile leaves, so the host's total stays
// MemoryBudget; none when that is less than the smallest partition. A
// partition budget keeps one partition for it beside PartitionWorkers.
func budgetFor(ctx context.Context, schemes scheme.Set, cfg *Config) (main, urgent *Budget, err error) {
	if cfg.MemoryBudget <= 0 {
		if main, err = NewBudget(max(cfg.PartitionWorkers, 1)); err != nil || cfg.UrgentBudget < 0 {
			return main, nil, err
		}
		urgent, err = NewBudget(1)
		return main, urgent, err
	}
	var largest, smallest int64
	var largestName string
	for _, name := range cfg.Profiles {
		sc, err := schemes.For(name)
		if err != nil {
			return nil, nil, err
		}
		b, err := sc.PartitionBytes(ctx, name) // no keys loaded
		if err != nil {
			return nil, nil, fmt.Errorf("profile %s: %w", name, err)
		}
		if b > largest {
			largest, largestName = b, name
		}
		if smallest == 0 || b < smallest {
			smallest = b
		}
	}
	if largest == 0 {
		return nil, nil, errors.New("--memory-budget needs --profiles to size a partition")
	}
	if cfg.MemoryBudget < largest {
		return nil, nil, fmt.Errorf("memory budget of %d bytes is smaller than one partition of profile %s (%d bytes): it could never be synthesized",
			cfg.MemoryBudget, largestName, largest)
	}
	total := cfg.MemoryBudget
	if reserve := min(cfg.urgentBudget(), total-largest); reserve >= smallest {
		if urgent, err = NewByteBudget(reserve, smallest); err != nil {
			return nil, nil, err
		}
		total -= reserve
	}
	main, err = NewByteBudget(total, smallest)
	return main, urgent, err
}
