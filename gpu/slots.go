package gpu

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"time"
)

// Slots is a pool of devices, one slot each: the device phase of a
// partition holds a slot for exactly its duration.
type Slots struct {
	free chan Backend
	all  []Backend

	mu    sync.Mutex
	busy  map[string]time.Duration
	since map[string]time.Time
}

// NewSlots returns a pool over the given devices.
func NewSlots(devs ...Backend) *Slots {
	s := &Slots{free: make(chan Backend, len(devs)), all: devs,
		busy: map[string]time.Duration{}, since: map[string]time.Time{}}
	for _, d := range devs {
		s.free <- d
	}
	return s
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

// Len is the number of devices.
func (s *Slots) Len() int { return len(s.all) }

// Devices lists the pool's devices.
func (s *Slots) Devices() []Backend { return s.all }

// Acquire waits for a free device or the context's end.
func (s *Slots) Acquire(ctx context.Context) (Backend, error) {
	select {
	case d := <-s.free:
		s.mu.Lock()
		s.since[d.Name()] = time.Now()
		s.mu.Unlock()
		return d, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Release returns a device to the pool.
func (s *Slots) Release(d Backend) {
	s.mu.Lock()
	s.busy[d.Name()] += time.Since(s.since[d.Name()])
	delete(s.since, d.Name())
	s.mu.Unlock()
	s.free <- d
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
