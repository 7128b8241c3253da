package gpu

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"time"
)

// ErrNoHealthyDevice is returned by Acquire when every device of the pool
// has been quarantined.
var ErrNoHealthyDevice = errors.New("no healthy device: every device is quarantined")

// Slots is a pool of devices, one slot each: the device phase of a
// partition holds a slot for exactly its duration. A device that fails is
// quarantined: it gets no more work and is reported.
type Slots struct {
	free chan Backend
	all  []Backend

	mu          sync.Mutex
	busy        map[string]time.Duration
	since       map[string]time.Time
	quarantined map[string]string // device -> the error that took it out
	healthy     int
	changed     chan struct{} // closed when a device is quarantined
}

// NewSlots returns a pool over the given devices.
func NewSlots(devs ...Backend) *Slots {
	s := &Slots{free: make(chan Backend, len(devs)), all: devs, healthy: len(devs),
		busy: map[string]time.Duration{}, since: map[string]time.Time{}, quarantined: map[string]string{},
		changed: make(chan struct{})}
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

// Acquire waits for a free device, the context's end, or the quarantine of
// the last healthy device.
func (s *Slots) Acquire(ctx context.Context) (Backend, error) {
	for {
		s.mu.Lock()
		if s.healthy == 0 {
			s.mu.Unlock()
			return nil, ErrNoHealthyDevice
		}
		changed := s.changed
		s.mu.Unlock()
		select {
		case d := <-s.free:
			s.mu.Lock()
			s.since[d.Name()] = time.Now()
			s.mu.Unlock()
			return d, nil
		case <-changed:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

func (s *Slots) unhold(d Backend) {
	s.busy[d.Name()] += time.Since(s.since[d.Name()])
	delete(s.since, d.Name())
}

// Release returns a device to the pool.
func (s *Slots) Release(d Backend) {
	s.mu.Lock()
	s.unhold(d)
	s.mu.Unlock()
	s.free <- d
}

// Fail quarantines a device that returned err: it is not returned to the
// pool, and work goes to the others.
func (s *Slots) Fail(d Backend, err error) {
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
