package gpu

import (
	"container/heap"
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"time"

	"github.com/c2flow/c2flow/internal/yield"
)

// ErrNoHealthyDevice is returned by Run when every device of the pool has
// been quarantined.
var ErrNoHealthyDevice = errors.New("no healthy device: every device is quarantined")

// Slots is a pool of devices, one slot each: the device phase of a
// partition holds a slot for exactly its duration. Waiters are served in
// Order (most urgent, then oldest sector first), not in arrival order: a
// host finishes the sectors it started before it advances younger ones.
// A device that fails is quarantined: it gets no more work and is reported.
//
// Priority 1 (Urgent: a WinningPoSt's deadline is a block) never waits
// behind lower priorities: while every device is held, a priority-1 phase
// takes a healthy device's urgent lane, a second holder beside the phase
// already on it, one per device. A phase takes minutes; a missed block is
// lost for good, so the device is shared for that while, and the phase
// already on it yields: it starts no device operation while the urgent
// one holds the device (Run's Held waits between operations).
type Slots struct {
	all []Backend

	mu       sync.Mutex
	free     []Backend
	waiters  waitHeap
	arrivals uint64
	busy     map[string]time.Duration
	// since is when a device's current holding began (it is held while
	// holders > 0: busy counts wall time held, not time per holder).
	since       map[string]time.Time
	holders     map[string]int
	urgent      map[string]bool   // the device's urgent lane is taken
	laneFreed   chan struct{}     // closed when an urgent lane is given back
	yielding    int               // ordinary holders waiting for an urgent one
	quarantined map[string]string // device -> the error that took it out
	healthy     int
	changed     chan struct{} // closed when a device is quarantined
}

// Urgent is the priority that takes a device's urgent lane: job.PriorityUrgent,
// mirrored here because gpu imports nothing of the orchestration.
const Urgent = 1

// Order ranks a partition's claim on a device: lower priority value first
// (1 is most urgent), then the older submission, then the earlier sector
// of that submission, then the lower partition. The zero Order ranks with
// every other zero Order in arrival order.
type Order struct {
	Priority  int   `json:"priority,omitempty"`
	Submitted int64 `json:"submitted,omitempty"` // unix nanoseconds of the batch's submission
	Seq       int   `json:"seq,omitempty"`       // the sector's index in its batch
	Partition int   `json:"partition,omitempty"`
}

// Less reports whether o is served before p.
func (o Order) Less(p Order) bool {
	if o.Priority != p.Priority {
		return o.Priority < p.Priority
	}
	if o.Submitted != p.Submitted {
		return o.Submitted < p.Submitted
	}
	if o.Seq != p.Seq {
		return o.Seq < p.Seq
	}
	return o.Partition < p.Partition
}

type waiter struct {
	order   Order
	arrival uint64
	got     chan grant // buffered: release never blocks
	index   int        // in the heap; -1 once served or removed
}

// grant is a device handed to a waiter, in its ordinary or urgent lane.
type grant struct {
	dev    Backend
	urgent bool
}

type waitHeap []*waiter

func (h waitHeap) Len() int { return len(h) }
func (h waitHeap) Less(i, j int) bool {
	if h[i].order != h[j].order {
		return h[i].order.Less(h[j].order)
	}
	return h[i].arrival < h[j].arrival
}
func (h waitHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index, h[j].index = i, j
}
func (h *waitHeap) Push(x any) {
	w := x.(*waiter)
	w.index = len(*h)
	*h = append(*h, w)
}
func (h *waitHeap) Pop() any {
	old := *h
	w := old[len(old)-1]
	*h, w.index = old[:len(old)-1], -1
	return w
}

// NewSlots returns a pool over the given devices.
func NewSlots(devs ...Backend) *Slots {
	return &Slots{free: append([]Backend(nil), devs...), all: devs, healthy: len(devs),
		busy: map[string]time.Duration{}, since: map[string]time.Time{}, holders: map[string]int{}, urgent: map[string]bool{},
		quarantined: map[string]string{}, changed: make(chan struct{}), laneFreed: make(chan struct{})}
}

// CPUSlots returns n CPU pseudo-devices sharing cores (0: all of this
// host's), each limited to its share.
func CPUSlots(n, cores int) (*Slots, error) {
	if n < 1 {
		return nil, fmt.Errorf("cpu devices: need at least one, got %d", n)
	}
	if cores <= 0 {
		cores = runtime.NumCPU()
	}
	devs := make([]Backend, n)
	for i := range devs {
		devs[i] = &CPU{ID: i, Tasks: max(1, cores/n)}
	}
	return NewSlots(devs...), nil
}

// Len is the number of devices, quarantined ones included.
func (s *Slots) Len() int { return len(s.all) }

// Devices lists the pool's devices.
func (s *Slots) Devices() []Backend { return s.all }

// Lanes is the most device phases that may run at once: two a device,
// its ordinary holder and its urgent lane's. A host's memory budget holds
// one device phase's expansion for each.
func (s *Slots) Lanes() int { return 2 * len(s.all) }

// Healthy is the number of devices not quarantined.
func (s *Slots) Healthy() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.healthy
}

// Waiting is the number of partitions waiting for a device.
func (s *Slots) Waiting() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.waiters)
}

// acquire waits for a free device in arrival order (see acquireOrder).
func (s *Slots) acquire(ctx context.Context) (Backend, error) {
	d, _, err := s.acquireOrder(ctx, Order{})
	return d, err
}

// acquireOrder waits for a free device, the context's end, or the
// quarantine of the last healthy device. Among waiters the lowest Order is
// served first. An Urgent order finding no free device takes a held
// device's urgent lane (urgent is then true) if one is open.
func (s *Slots) acquireOrder(ctx context.Context, o Order) (d Backend, urgent bool, err error) {
	s.mu.Lock()
	if s.healthy == 0 {
		s.mu.Unlock()
		return nil, false, ErrNoHealthyDevice
	}
	if len(s.free) > 0 && len(s.waiters) == 0 {
		d := s.free[0] // round robin over the devices
		s.free = s.free[1:]
		s.holdLocked(d)
		s.mu.Unlock()
		return d, false, nil
	}
	if o.Priority == Urgent {
		if d := s.urgentLaneLocked(); d != nil {
			s.urgent[d.Name()] = true
			s.holdLocked(d)
			s.mu.Unlock()
			return d, true, nil
		}
	}
	s.arrivals++
	w := &waiter{order: o, arrival: s.arrivals, got: make(chan grant, 1)}
	heap.Push(&s.waiters, w)
	for {
		changed := s.changed
		s.mu.Unlock()
		select {
		case g := <-w.got:
			return g.dev, g.urgent, nil
		case <-changed:
			s.mu.Lock()
			if s.healthy > 0 {
				continue
			}
		case <-ctx.Done():
			s.mu.Lock()
		}
		// Leaving: give back a device handed over meanwhile.
		if w.index >= 0 {
			heap.Remove(&s.waiters, w.index)
			s.mu.Unlock()
		} else {
			s.mu.Unlock()
			g := <-w.got
			s.releaseLane(g.dev, g.urgent)
		}
		if err := ctx.Err(); err != nil {
			return nil, false, err
		}
		return nil, false, ErrNoHealthyDevice
	}
}

// urgentLaneLocked is a healthy, held device whose urgent lane is open,
// or nil.
func (s *Slots) urgentLaneLocked() Backend {
	for _, d := range s.all {
		n := d.Name()
		if _, q := s.quarantined[n]; !q && s.holders[n] > 0 && !s.urgent[n] {
			return d
		}
	}
	return nil
}

func (s *Slots) holdLocked(d Backend) {
	if s.holders[d.Name()] == 0 {
		s.since[d.Name()] = time.Now()
	}
	s.holders[d.Name()]++
}

func (s *Slots) unholdLocked(d Backend) {
	n := d.Name()
	if s.holders[n] == 0 {
		return
	}
	if s.holders[n]--; s.holders[n] == 0 {
		s.busy[n] += time.Since(s.since[n])
		delete(s.since, n)
	}
}

// freeLaneLocked gives d's urgent lane back and wakes the ordinary
// holders yielding to it.
func (s *Slots) freeLaneLocked(d Backend) {
	s.urgent[d.Name()] = false
	close(s.laneFreed)
	s.laneFreed = make(chan struct{})
}

// yield waits while an urgent phase holds the device named dev, or until
// ctx ends.
func (s *Slots) yield(ctx context.Context, dev string) error {
	if err := yield.Point(ctx); err != nil {
		return err
	}
	for {
		s.mu.Lock()
		if !s.urgent[dev] {
			s.mu.Unlock()
			return nil
		}
		ch := s.laneFreed
		s.yielding++
		s.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
		}
		s.mu.Lock()
		s.yielding--
		s.mu.Unlock()
		if err := ctx.Err(); err != nil {
			return err
		}
	}
}

// release returns a device held in its ordinary lane to the pool.
func (s *Slots) release(d Backend) { s.releaseLane(d, false) }

// releaseLane returns a device to the pool, handing it to the first
// waiter: the ordinary lane to any, the urgent lane to an Urgent one. A
// quarantined device (its other holder failed on it) goes to nobody.
func (s *Slots) releaseLane(d Backend, urgent bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.unholdLocked(d)
	if urgent {
		s.freeLaneLocked(d)
	}
	if _, q := s.quarantined[d.Name()]; q {
		return
	}
	if len(s.waiters) > 0 && (!urgent || s.waiters[0].order.Priority == Urgent) {
		w := heap.Pop(&s.waiters).(*waiter)
		s.holdLocked(d)
		if urgent {
			s.urgent[d.Name()] = true
		}
		w.got <- grant{dev: d, urgent: urgent}
		return
	}
	if !urgent {
		s.free = append(s.free, d)
	}
}

// fail quarantines a device held in its ordinary lane that returned err.
func (s *Slots) fail(d Backend, err error) { s.failLane(d, false, err) }

// failLane quarantines a device that returned err: it is not returned to
// the pool, and work goes to the others.
func (s *Slots) failLane(d Backend, urgent bool, err error) {
	s.mu.Lock()
	s.unholdLocked(d)
	if urgent {
		s.freeLaneLocked(d)
	}
	if _, ok := s.quarantined[d.Name()]; !ok {
		s.quarantined[d.Name()] = err.Error()
		s.healthy--
		close(s.changed)
		s.changed = make(chan struct{})
	}
	s.mu.Unlock()
}

// Quarantined reports the quarantined devices and why.
func (s *Slots) Quarantined() map[string]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]string, len(s.quarantined))
	for k, v := range s.quarantined {
		out[k] = v
	}
	return out
}

// Busy returns the time each device has been held, in-flight holds included.
func (s *Slots) Busy() map[string]time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]time.Duration, len(s.all))
	for _, d := range s.all {
		out[d.Name()] = s.busy[d.Name()]
		if t, ok := s.since[d.Name()]; ok {
			out[d.Name()] += time.Since(t)
		}
	}
	return out
}

// NewBackendSlots returns the device slots of a backend by name: "cpu"
// pseudo-devices (cpuDevices of them), or the listed CUDA devices (all
// visible when none are listed; a build without the cuda tag says so).
func NewBackendSlots(backend string, devices []int, cpuDevices int, opts ...CUDAOption) (*Slots, error) {
	switch backend {
	case "", "cpu":
		if len(devices) > 0 {
			return nil, fmt.Errorf("--devices selects CUDA devices; the cpu backend takes --cpu-devices")
		}
		return CPUSlots(max(1, cpuDevices), 0)
	case "cuda":
		return CUDASlots(devices, opts...)
	}
	return nil, fmt.Errorf("unknown backend %q (cpu or cuda)", backend)
}
