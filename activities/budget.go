package activities

import (
	"context"
	"fmt"
	"sync"

	sdkworker "go.temporal.io/sdk/worker"
)

// Budget is a host's memory backpressure: at most Max synthesized
// partitions in flight, counting syntheses running and witnesses waiting
// for (or in) the device phase. It is the slot supplier of the host's
// synthesis worker, so when the budget is full ReserveSlot blocks, the
// worker stops polling and other hosts take the work. A witness's permit is
// held until the device phase has freed its a, b, c vectors (cuzk's
// semaphore fix), not merely until synthesis returns.
type Budget struct {
	mu         sync.Mutex
	changed    chan struct{} // closed and replaced on every release
	max        int
	reserved   int // slots reserved by the poller (running or polling)
	running    int // slots executing a synthesis
	held       int // witnesses in memory
	converting int // running syntheses turned into held witnesses, slot not yet released
	peak       int // max of running + held
	heldBytes  int64
	frozen     bool // no new reservations (fault tests)
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
	return &Budget{max: max, changed: make(chan struct{})}, nil
}

var _ sdkworker.SlotSupplier = (*Budget)(nil)

// ReserveSlot implements sdkworker.SlotSupplier: it blocks while the budget is full.
func (b *Budget) ReserveSlot(ctx context.Context, _ sdkworker.SlotReservationInfo) (*sdkworker.SlotPermit, error) {
	for {
		b.mu.Lock()
		if !b.frozen && b.reserved+b.held < b.max {
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
	if !b.frozen && b.reserved+b.held < b.max {
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

// MaxSlots implements sdkworker.SlotSupplier.
func (b *Budget) MaxSlots() int { return b.max }

// Hold turns a running synthesis into a held witness of n bytes; it must
// be called from the synthesis activity, before it returns.
func (b *Budget) Hold(n int64) {
	b.mu.Lock()
	b.running--
	b.converting++
	b.held++
	b.heldBytes += n
	b.peak = max(b.peak, b.running+b.held)
	b.mu.Unlock()
}

// Free frees a held witness's permit (once per Hold).
func (b *Budget) Free(n int64) {
	b.mu.Lock()
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
	Max       int   `json:"max"`
	Running   int   `json:"running"`
	Held      int   `json:"held"`
	InFlight  int   `json:"in_flight"`
	Peak      int   `json:"peak"`
	HeldBytes int64 `json:"held_bytes"`
}

// Stats returns the budget's counters; Peak is the most partitions ever in
// flight at once, recorded as it happened.
func (b *Budget) Stats() BudgetStats {
	b.mu.Lock()
	defer b.mu.Unlock()
	return BudgetStats{Max: b.max, Running: b.running, Held: b.held, InFlight: b.running + b.held, Peak: b.peak, HeldBytes: b.heldBytes}
}
