package activities

import (
	"context"
	"errors"
	"fmt"

	"github.com/c2flow/c2flow/filecoin/c2"
	"github.com/c2flow/c2flow/gpu"
	"github.com/c2flow/c2flow/params"
	"github.com/c2flow/c2flow/prover"
	"github.com/c2flow/c2flow/scheme"
	"github.com/c2flow/c2flow/scheme/testscheme"
	"github.com/c2flow/c2flow/storage"
)

// Deps are what a worker host runs on, assembled by its process and handed
// to New: the phases that do a partition's work, the device slots and the
// memory budget. The proving host's come from ProverDeps; the simulation
// (package sim) gives modelled ones to the same host code.
type Deps struct {
	Phases Phases
	Slots  *gpu.Slots
	Budget *Budget
}

// ProverDeps assembles a proving host's deps: its devices first (a build
// without CUDA says so before any key loads), then the schemes (c2flow's
// test scheme over ParamsDir and the store, Filecoin's over
// FilecoinParams), the keys of the configured profiles, which size the
// budget, and the phases over them with the host's sector cache.
func ProverDeps(ctx context.Context, store *storage.Store, cfg Config) (Deps, error) {
	if err := cfg.defaults(); err != nil {
		return Deps{}, err
	}
	slots, err := gpu.NewBackendSlots(backendName(cfg.Backend), cfg.Devices, cfg.CPUDevices,
		gpu.WithDeviceMemory(cfg.DeviceMemory), gpu.WithCUDALogger(cfg.Log))
	if err != nil {
		return Deps{}, err
	}
	schemes := scheme.Set{
		testscheme.New(params.Cache{Local: params.DirStore{Root: cfg.ParamsDir}, Remote: store},
			testscheme.WithEarlyG2(cfg.EarlyG2), testscheme.WithLogger(cfg.Log)),
		c2.New(filecoinParams(&cfg, store), cfg.Log),
	}
	budget, err := budgetFor(ctx, schemes, &cfg)
	if err != nil {
		return Deps{}, err
	}
	pp := &ProverPhases{Artifacts: store, Schemes: schemes, Log: cfg.Log, FaultyFinalize: cfg.Hooks != nil && cfg.Hooks.FaultyFinalize,
		Keys: budget}
	// The configured profiles' keys, loaded by budgetFor, are held from
	// the start; others are counted as a synthesis first loads them.
	for _, name := range cfg.Profiles {
		sc, err := schemes.For(name)
		if err != nil {
			return Deps{}, err
		}
		c, err := sc.Circuit(ctx, name)
		if err != nil {
			return Deps{}, fmt.Errorf("profile %s: %w", name, err)
		}
		if err := pp.countKeys(name, c); err != nil {
			return Deps{}, err
		}
	}
	if n := cfg.SectorCache; n >= 0 {
		if n == 0 {
			n = DefaultSectorCache
		}
		pp.Sectors = NewSectorCache(n)
	}
	return Deps{Phases: pp, Slots: slots, Budget: budget}, nil
}

// filecoinParams says where the Filecoin scheme finds its parameters.
func filecoinParams(cfg *Config, store *storage.Store) c2.Params {
	p := c2.Params{Dir: cfg.FilecoinParams}
	if store != nil {
		p.Remote = store // storage.Store.Open: ErrNotFound matches fs.ErrNotExist
	}
	return p
}

// budgetFor loads the configured profiles' keys (a missing key is a
// startup error, not a failed partition later) and returns the host's
// budget: PartitionWorkers partitions, or MemoryBudget bytes, each
// partition counted at its own PartitionBytes, a reservation not yet
// sized at the smallest configured profile's, the loaded keys held beside
// them. A configured profile whose partition does not fit beside the keys
// is refused.
func budgetFor(ctx context.Context, schemes scheme.Set, cfg *Config) (*Budget, error) {
	var largest, smallest, keyBytes int64
	var largestName string
	seen := map[*prover.Keys]bool{}
	for _, name := range cfg.Profiles {
		sc, err := schemes.For(name)
		if err != nil {
			return nil, err
		}
		c, err := sc.Circuit(ctx, name)
		if err != nil {
			return nil, fmt.Errorf("profile %s: %w", name, err)
		}
		if k := c.Prover().Keys; !seen[k] {
			seen[k] = true
			keyBytes += k.Bytes()
		}
		b := c.PartitionBytes()
		if b > largest {
			largest, largestName = b, name
		}
		if smallest == 0 || b < smallest {
			smallest = b
		}
	}
	if cfg.MemoryBudget <= 0 {
		return NewBudget(max(cfg.PartitionWorkers, 1))
	}
	if largest == 0 {
		return nil, errors.New("--memory-budget needs --profiles to size a partition")
	}
	if cfg.MemoryBudget < largest+keyBytes {
		return nil, fmt.Errorf("memory budget of %d bytes is smaller than one partition of profile %s (%d bytes) beside the configured profiles' keys (%d bytes): it could never be synthesized",
			cfg.MemoryBudget, largestName, largest, keyBytes)
	}
	return NewByteBudget(cfg.MemoryBudget, smallest)
}
