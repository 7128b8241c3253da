package activities

import (
	"context"
	"testing"
	"time"
)

// Waiters are served by priority, then in arrival order, whatever order
// the runtime would wake them in; a waiter whose context ends holds
// nothing and loses no slot.
func TestPrioSlotsOrder(t *testing.T) {
	s := newPrioSlots(1)
	ctx := context.Background()
	if err := s.acquire(ctx, 3); err != nil {
		t.Fatal(err)
	}
	got := make(chan int, 8)
	start := func(name, priority int) {
		go func() {
			if err := s.acquire(ctx, priority); err != nil {
				t.Error(err)
				return
			}
			got <- name
			s.release()
		}()
		// Queued before the next one arrives.
		for {
			s.mu.Lock()
			n := len(s.waiters)
			s.mu.Unlock()
			if n >= name {
				return
			}
			time.Sleep(time.Millisecond)
		}
	}
	// Arrival: 3 (prio 3), 4 (prio 3), then a canceled one, then 2 (prio 2).
	start(1, 3)
	start(2, 3)
	cctx, cancel := context.WithCancel(ctx)
	done := make(chan error)
	go func() { done <- s.acquire(cctx, 1) }()
	for {
		s.mu.Lock()
		n := len(s.waiters)
		s.mu.Unlock()
		if n == 3 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	cancel()
	if err := <-done; err == nil {
		t.Fatal("a canceled waiter got a slot")
	}
	start(3, 2)
	s.release()
	var order []int
	for range 3 {
		order = append(order, <-got)
	}
	if order[0] != 3 || order[1] != 1 || order[2] != 2 {
		t.Errorf("served %v, want the priority-2 waiter (3) first, then 1 and 2 in arrival order", order)
	}
	if err := s.acquire(ctx, 5); err != nil || s.free != 0 {
		t.Errorf("the slot was lost: free %d, %v", s.free, err)
	}
}
