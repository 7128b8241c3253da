package activities

import (
	"context"
	"fmt"
	"sync"

	sdkworker "go.temporal.io/sdk/worker"
)

// Budget is a host's memory backpressure: what the syntheses running and
// the witnesses waiting for (or in) the device phase may hold at once. It
// counts partitions (NewBudget: --partition-workers N) or bytes
// (NewByteBudget: --memory-budget). In bytes, a running synthesis counts
// what it may hold at most (its circuit's PartitionBytes), a synthesized
// witness what it holds, packed (Hold shrinks the one to the other); and
// beside them, once per circuit loaded, its keys and recorded system, and
// the expansion of one device phase per device lane (HoldCircuit).
// It is the slot supplier of the host's synthesis worker, so when the
// budget is full ReserveSlot blocks, the worker stops polling and other
// hosts take the work. A witness's share is held until its device phase
// has computed its quotient from a, b, c (cuzk's semaphore fix), not
// merely until synthesis returns.
//
// A reservation is made before the task, and so its size, is known: it is
// admitted while what is in use, what waiting syntheses asked for, and the
// floor (the smallest partition the host serves) for every reservation not
// yet sized, fit. The synthesis then asks for its partition's own size
// (Acquire), waiting while it does not fit; once it waits, its size is
// counted and no smaller reservation overtakes it.
type Budget struct {
	mu      sync.Mutex
	changed chan struct{} // closed and replaced on every release
	bytes   bool          // units are bytes (else partitions)
	max     int64         // units
	floor   int64         // units a reservation not yet sized counts for
	used    int64         // units acquired by running syntheses and held by witnesses
	keys    int64         // bytes of loaded proving keys, out of a byte budget's max
	systems int64         // bytes of the loaded circuits' recorded systems
	// lanes is how many device phases may run at once on this host (two
	// a device: its ordinary and urgent holders); lane the most any
	// loaded circuit's phase expands to. lanes × lane is held.
	lanes int
	lane  int64
	// laneOnDevice: the host's devices compute the quotient themselves
	// (CircuitBytes.LaneOnDevice is a lane's).
	laneOnDevice bool
	waiting      int64 // units asked by syntheses waiting in Acquire
	// reserved counts slots reserved by the poller (running or polling);
	// sized those whose synthesis called Acquire and has not yet held or
	// given back.
	reserved, sized int
	running         int // slots executing a synthesis
	held            int // witnesses in memory
	converting      int // running syntheses turned into held witnesses, slot not yet released
	peak            int // max of running + held
	heldBytes       int64
	frozen          bool // no new reservations (fault tests)
}

// freeze stops all new reservations: the host takes no more synthesis.
func (b *Budget) freeze() {
	b.mu.Lock()
	b.frozen = true
	b.mu.Unlock()
}

// NewBudget returns a budget of max partitions.
func NewBudget(max int) (*Budget, error) {
	if max < 1 {
		return nil, fmt.Errorf("partition budget must be at least 1, got %d", max)
	}
	return &Budget{max: int64(max), floor: 1, changed: make(chan struct{})}, nil
}

// NewByteBudget returns a budget of max bytes for partitions of at least
// floor bytes each (the smallest the host serves), so at most max/floor
// syntheses are polled for at once.
func NewByteBudget(max, floor int64) (*Budget, error) {
	if floor < 1 || max < floor {
		return nil, fmt.Errorf("memory budget of %d bytes is smaller than the smallest partition served (%d bytes)", max, floor)
	}
	return &Budget{bytes: true, max: max, floor: floor, changed: make(chan struct{})}, nil
}

var _ sdkworker.SlotSupplier = (*Budget)(nil)

// admitsLocked says whether one more reservation fits.
func (b *Budget) admitsLocked() bool {
	unsized := int64(b.reserved - b.sized - b.converting)
	return !b.frozen && b.used+b.waiting+b.staticLocked()+(unsized+1)*b.floor <= b.max
}

// ReserveSlot implements sdkworker.SlotSupplier: it blocks while the budget is full.
func (b *Budget) ReserveSlot(ctx context.Context, _ sdkworker.SlotReservationInfo) (*sdkworker.SlotPermit, error) {
	for {
		b.mu.Lock()
		if b.admitsLocked() {
			b.reserved++
			b.mu.Unlock()
			return &sdkworker.SlotPermit{}, nil
		}
		ch := b.changed
		b.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// TryReserveSlot implements sdkworker.SlotSupplier.
func (b *Budget) TryReserveSlot(sdkworker.SlotReservationInfo) *sdkworker.SlotPermit {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.admitsLocked() {
		b.reserved++
		return &sdkworker.SlotPermit{}
	}
	return nil
}

// MarkSlotUsed implements sdkworker.SlotSupplier: a synthesis starts.
func (b *Budget) MarkSlotUsed(info sdkworker.SlotMarkUsedInfo) {
	info.Permit().UserData = true // used: its release ends a synthesis
	b.mu.Lock()
	b.running++
	b.peak = max(b.peak, b.running+b.held)
	b.mu.Unlock()
}

// ReleaseSlot implements sdkworker.SlotSupplier.
func (b *Budget) ReleaseSlot(info sdkworker.SlotReleaseInfo) {
	b.mu.Lock()
	b.reserved--
	if used, _ := info.Permit().UserData.(bool); used {
		if b.converting > 0 {
			b.converting-- // its running count moved to held already
		} else {
			b.running--
		}
	}
	b.notifyLocked()
	b.mu.Unlock()
}

// MaxSlots implements sdkworker.SlotSupplier: the most syntheses polled
// for at once, max partitions or max/floor.
func (b *Budget) MaxSlots() int { return int(b.max / b.floor) }

// staticLocked is what the loaded circuits take of the budget: their
// keys, systems and lane expansions in a byte budget, nothing in a
// partition budget.
func (b *Budget) staticLocked() int64 {
	if b.bytes {
		return b.keys + b.systems + int64(b.lanes)*b.lane
	}
	return 0
}

// SetLanes says how many device phases may run at once on this host, each
// holding one expansion (HoldCircuit's lane bytes) beside the witnesses,
// and whether its devices compute the quotient themselves (the smaller
// expansion).
func (b *Budget) SetLanes(n int, onDevice bool) {
	b.mu.Lock()
	b.lanes, b.laneOnDevice = n, onDevice
	b.mu.Unlock()
}

// CircuitBytes is what a host holds for a circuit it proves, from the
// first partition on: its proving key's points and recorded constraint
// system, and the memory one device phase of it expands to on the host
// (Lane: NTT vectors and scalars where the host computes the quotient,
// LaneOnDevice where the device does; counted once per device lane, the
// largest of the circuits loaded).
type CircuitBytes struct {
	Keys, System, Lane, LaneOnDevice int64
}

// HoldCircuit counts what a circuit loaded on this host holds: a byte
// budget holds it beside the partitions for as long as the process runs
// (circuits are kept once loaded). It returns an error when what is held
// leaves no room for a partition of floor bytes.
func (b *Budget) HoldCircuit(name string, c CircuitBytes) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.keys += c.Keys
	b.systems += c.System
	lane := c.Lane
	if b.laneOnDevice {
		lane = c.LaneOnDevice
	}
	b.lane = max(b.lane, lane)
	if held := b.staticLocked(); b.bytes && held+b.floor > b.max {
		return fmt.Errorf("the circuits loaded on this host (%s: keys %d, system %d, a device phase %d bytes; %d in all: keys %d, systems %d, %d device lanes × %d) leave less than one partition (%d bytes) of the memory budget of %d bytes",
			name, c.Keys, c.System, c.Lane, held, b.keys, b.systems, b.lanes, b.lane, b.floor, b.max)
	}
	return nil
}

// fits says whether a partition of n bytes could ever be acquired here,
// beside the loaded keys.
func (b *Budget) fits(n int64) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.units(n) <= b.max-b.staticLocked()
}

// units is what a partition of n bytes counts for.
func (b *Budget) units(n int64) int64 {
	if b.bytes {
		return n
	}
	return 1
}

// Acquire takes a synthesizing partition's share, n bytes (one partition
// of a partition budget), from within the synthesis activity, waiting
// while it does not fit. A partition larger than the whole budget is an
// error: this host can never synthesize it. Every Acquire ends in Hold or
// Giveback.
func (b *Budget) Acquire(ctx context.Context, n int64) error {
	u := b.units(n)
	b.mu.Lock()
	if room := b.max - b.staticLocked(); u > room {
		b.mu.Unlock()
		return fmt.Errorf("a partition of %d bytes exceeds this host's memory budget of %d bytes (%d beside the loaded circuits)", n, b.max, room)
	}
	b.sized++
	b.waiting += u
	for b.used+b.staticLocked()+u > b.max {
		if room := b.max - b.staticLocked(); u > room { // circuits loaded meanwhile
			b.waiting -= u
			b.sized--
			b.notifyLocked()
			b.mu.Unlock()
			return fmt.Errorf("a partition of %d bytes exceeds what this host's memory budget of %d bytes leaves beside the loaded circuits (%d)", n, b.max, room)
		}
		ch := b.changed
		b.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			b.mu.Lock()
			b.waiting -= u
			b.sized--
			b.notifyLocked()
			b.mu.Unlock()
			return fmt.Errorf("waiting for %d bytes of the memory budget: %w", n, ctx.Err())
		}
		b.mu.Lock()
	}
	b.waiting -= u
	b.used += u
	b.mu.Unlock()
	return nil
}

// Giveback returns an Acquire's share when the synthesis failed.
func (b *Budget) Giveback(n int64) {
	b.mu.Lock()
	b.used -= b.units(n)
	b.sized--
	b.notifyLocked()
	b.mu.Unlock()
}

// Hold turns a running synthesis, whose Acquire took n bytes, into a held
// witness of held bytes (what it holds, packed: at most n); it must be
// called from the synthesis activity, before it returns. Free frees it
// with held.
func (b *Budget) Hold(n, held int64) {
	b.mu.Lock()
	b.sized--
	b.running--
	b.converting++
	b.held++
	b.heldBytes += held
	if b.bytes && held != n {
		b.used += held - n // what the synthesis reserved and the witness does not hold
		b.notifyLocked()
	}
	b.peak = max(b.peak, b.running+b.held)
	b.mu.Unlock()
}

// Free frees a held witness's share (once per Hold, with its n).
func (b *Budget) Free(n int64) {
	b.mu.Lock()
	b.used -= b.units(n)
	b.held--
	b.heldBytes -= n
	b.notifyLocked()
	b.mu.Unlock()
}

func (b *Budget) notifyLocked() {
	close(b.changed)
	b.changed = make(chan struct{})
}

// BudgetStats is a snapshot of a budget.
type BudgetStats struct {
	// Max is the most partitions in flight (max/floor for a byte budget);
	// MaxBytes the byte budget (0 for a partition budget).
	Max       int   `json:"max"`
	MaxBytes  int64 `json:"max_bytes,omitempty"`
	Running   int   `json:"running"`
	Held      int   `json:"held"`
	InFlight  int   `json:"in_flight"`
	Peak      int   `json:"peak"`
	HeldBytes int64 `json:"held_bytes"` // of the witnesses held, packed
	KeyBytes  int64 `json:"key_bytes"`  // of the proving keys loaded, mapped (held out of a byte budget)
	// SystemBytes are the loaded circuits' recorded constraint systems;
	// ExpansionBytes what the device lanes may hold at once: Lanes times
	// the largest loaded circuit's device-phase expansion.
	SystemBytes    int64 `json:"system_bytes"`
	ExpansionBytes int64 `json:"expansion_bytes"`
	Lanes          int   `json:"lanes,omitempty"`
}

// Stats returns the budget's counters; Peak is the most partitions ever in
// flight at once, recorded as it happened.
func (b *Budget) Stats() BudgetStats {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := BudgetStats{Max: b.MaxSlots(), Running: b.running, Held: b.held, InFlight: b.running + b.held, Peak: b.peak, HeldBytes: b.heldBytes, KeyBytes: b.keys,
		SystemBytes: b.systems, ExpansionBytes: int64(b.lanes) * b.lane, Lanes: b.lanes}
	if b.bytes {
		s.MaxBytes = b.max
	}
	return s
}
