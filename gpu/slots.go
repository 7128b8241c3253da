package gpu

import (
	"container/heap"
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"time"
)

// ErrNoHealthyDevice is returned by Run when every device of the pool has
// been quarantined.
var ErrNoHealthyDevice = errors.New("no healthy device: every device is quarantined")

// Slots is a pool of devices, one slot each: the device phase of a
// partition holds a slot for exactly its duration. Waiters are served in
// Order (most urgent, then oldest sector first), not in arrival order: a
// host finishes the sectors it started before it advances younger ones.
// A device that fails is quarantined: it gets no more work and is reported.
type Slots struct {
	all []Backend

	mu          sync.Mutex
	free        []Backend
	waiters     waitHeap
	arrivals    uint64
	busy        map[string]time.Duration
	since       map[string]time.Time
	quarantined map[string]string // device -> the error that took it out
	healthy     int
	changed     chan struct{} // closed when a device is quarantined
}

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
	got     chan Backend // buffered: release never blocks
	index   int          // in the heap; -1 once served or removed
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
		busy: map[string]time.Duration{}, since: map[string]time.Time{}, quarantined: map[string]string{},
		changed: make(chan struct{})}
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
	return s.acquireOrder(ctx, Order{})
}

// acquireOrder waits for a free device, the context's end, or the
// quarantine of the last healthy device. Among waiters the lowest Order is
// served first.
func (s *Slots) acquireOrder(ctx context.Context, o Order) (Backend, error) {
	s.mu.Lock()
	if s.healthy == 0 {
		s.mu.Unlock()
		return nil, ErrNoHealthyDevice
	}
	if len(s.free) > 0 && len(s.waiters) == 0 {
		d := s.free[0] // round robin over the devices
		s.free = s.free[1:]
		s.since[d.Name()] = time.Now()
		s.mu.Unlock()
		return d, nil
	}
	s.arrivals++
	w := &waiter{order: o, arrival: s.arrivals, got: make(chan Backend, 1)}
	heap.Push(&s.waiters, w)
	for {
		changed := s.changed
		s.mu.Unlock()
		select {
		case d := <-w.got:
			return d, nil
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
			s.release(<-w.got)
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		return nil, ErrNoHealthyDevice
	}
}

func (s *Slots) unhold(d Backend) {
	s.busy[d.Name()] += time.Since(s.since[d.Name()])
	delete(s.since, d.Name())
}

// release returns a device to the pool, handing it to the first waiter.
func (s *Slots) release(d Backend) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, held := s.since[d.Name()]; held {
		s.unhold(d)
	}
	if len(s.waiters) > 0 {
		w := heap.Pop(&s.waiters).(*waiter)
		s.since[d.Name()] = time.Now()
		w.got <- d
		return
	}
	s.free = append(s.free, d)
}

// fail quarantines a device that returned err: it is not returned to the
// pool, and work goes to the others.
func (s *Slots) fail(d Backend, err error) {
	s.mu.Lock()
	s.unhold(d)
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
