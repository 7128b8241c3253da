package activities

import (
	"context"
	"sync"
)

// prioSlots is a pool of n slots whose waiters are served by priority
// (1 most urgent), then in arrival order: a WindowPoSt's finalize or
// validation goes ahead of every PoRep and SnapDeals one waiting on the
// host, as its tasks go ahead in Temporal's queues. (A plain channel
// serves whoever the runtime wakes.)
type prioSlots struct {
	mu      sync.Mutex
	free    int
	seq     uint64
	waiters []*slotWaiter // sorted: priority, then seq
}

type slotWaiter struct {
	priority int
	seq      uint64
	granted  chan struct{} // closed when the slot is handed over
}

func newPrioSlots(n int) *prioSlots { return &prioSlots{free: n} }

// acquire takes a slot, waiting in (priority, arrival) order; it returns
// ctx's error if ctx ends first, holding nothing.
func (s *prioSlots) acquire(ctx context.Context, priority int) error {
	s.mu.Lock()
	if s.free > 0 && len(s.waiters) == 0 {
		s.free--
		s.mu.Unlock()
		return nil
	}
	s.seq++
	w := &slotWaiter{priority: priority, seq: s.seq, granted: make(chan struct{})}
	i := len(s.waiters)
	for i > 0 && s.waiters[i-1].priority > priority {
		i--
	}
	s.waiters = append(s.waiters, nil)
	copy(s.waiters[i+1:], s.waiters[i:])
	s.waiters[i] = w
	s.mu.Unlock()
	select {
	case <-w.granted:
		return nil
	case <-ctx.Done():
		s.mu.Lock()
		for j, o := range s.waiters {
			if o == w {
				s.waiters = append(s.waiters[:j], s.waiters[j+1:]...)
				s.mu.Unlock()
				return ctx.Err()
			}
		}
		s.mu.Unlock()
		// Granted meanwhile: hand it on.
		s.release()
		return ctx.Err()
	}
}

// release gives a slot back: to the first waiter, else to the pool.
func (s *prioSlots) release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.waiters) > 0 {
		w := s.waiters[0]
		s.waiters = s.waiters[1:]
		close(w.granted)
		return
	}
	s.free++
}
