package yield

import (
	"context"
	"errors"
	"testing"
	"time"
)

// pointReturns reports whether Point(ctx) returns within d.
func pointReturns(ctx context.Context, d time.Duration) (bool, error) {
	ch := make(chan error, 1)
	go func() { ch <- Point(ctx) }()
	select {
	case err := <-ch:
		return true, err
	case <-time.After(d):
		return false, nil
	}
}

// Lower-priority work waits at a checkpoint while urgent work holds the
// gate and through the linger after it, then goes on; work not marked,
// and work marked on an open gate, never waits.
func TestPointWaitsWhileHeld(t *testing.T) {
	g := New(200*time.Millisecond, time.Minute)
	ctx := Yielding(context.Background(), g)
	if ok, err := pointReturns(ctx, time.Second); !ok || err != nil {
		t.Fatalf("an open gate: returned %v, %v", ok, err)
	}
	release := g.Hold()
	if ok, _ := pointReturns(context.Background(), time.Second); !ok {
		t.Fatal("work not marked as yielding waited")
	}
	ch := make(chan time.Time, 1)
	go func() {
		if err := Point(ctx); err != nil {
			t.Error(err)
		}
		ch <- time.Now()
	}()
	select {
	case <-ch:
		t.Fatal("a checkpoint passed a held gate")
	case <-time.After(300 * time.Millisecond):
	}
	released := time.Now()
	release()
	release() // twice is harmless
	select {
	case at := <-ch:
		if at.Sub(released) < 150*time.Millisecond {
			t.Errorf("the gate opened %v after its release, before the linger (200ms)", at.Sub(released))
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the checkpoint still waits after the release and its linger")
	}
	st := g.Stats()
	if st.Yields != 1 || st.YieldedMS < 300 || st.Closed || st.ClosedMS < 300 {
		t.Errorf("stats %+v", st)
	}
}

// Holds nest: the gate opens only after the last holder's release; a
// hold during the linger keeps it closed.
func TestHoldsNest(t *testing.T) {
	g := New(50*time.Millisecond, time.Minute)
	ctx := Yielding(context.Background(), g)
	r1, r2 := g.Hold(), g.Hold()
	r1()
	if ok, _ := pointReturns(ctx, 200*time.Millisecond); ok {
		t.Fatal("the gate opened with a holder left")
	}
	r2()
	time.Sleep(20 * time.Millisecond)
	r3 := g.Hold() // within the linger
	if ok, _ := pointReturns(ctx, 200*time.Millisecond); ok {
		t.Fatal("the gate opened while held again during the linger")
	}
	r3()
	if ok, _ := pointReturns(ctx, 2*time.Second); !ok {
		t.Fatal("the gate did not open after the last release")
	}
}

// A piece of work yields at most its allowance in all, however long the
// gate stays closed: a stream of urgent work cannot starve it. Another
// piece of work has its own allowance.
func TestYieldIsBounded(t *testing.T) {
	g := New(time.Millisecond, 300*time.Millisecond)
	defer g.Hold()()
	ctx := Yielding(context.Background(), g)
	t0 := time.Now()
	for range 3 {
		if err := Point(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if d := time.Since(t0); d < 250*time.Millisecond || d > 3*time.Second {
		t.Errorf("three checkpoints under a held gate took %v in all, want about the 300ms allowance", d)
	}
	if ok, _ := pointReturns(ctx, 100*time.Millisecond); !ok {
		t.Error("work past its allowance still waits")
	}
	if ok, _ := pointReturns(Yielding(context.Background(), g), 100*time.Millisecond); ok {
		t.Error("new work did not yield")
	}
}

// A canceled context ends the wait with its error.
func TestPointCanceled(t *testing.T) {
	g := New(0, 0)
	defer g.Hold()()
	ctx, cancel := context.WithCancel(Yielding(context.Background(), g))
	go func() { time.Sleep(50 * time.Millisecond); cancel() }()
	if err := Point(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Point: %v, want context.Canceled", err)
	}
}
