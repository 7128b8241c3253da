package activities

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/temporal"
)

// fakeTemporal answers a keeper's heartbeats from a script, on a clock it
// moves itself: a stall is a jump of the clock while an RPC is in flight.
type fakeTemporal struct {
	mu      sync.Mutex
	clock   time.Time
	answers []answer // one per heartbeat; past the end: nil
	sent    int
}

type answer struct {
	stall time.Duration // the clock jumps by this during the RPC
	err   error
}

func (f *fakeTemporal) now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.clock
}

func (f *fakeTemporal) send(context.Context) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.sent++
	if f.sent > len(f.answers) {
		return nil
	}
	a := f.answers[f.sent-1]
	f.clock = f.clock.Add(a.stall)
	return a.err
}

func (f *fakeTemporal) heartbeats() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.sent
}

func keep(t *testing.T, f *fakeTemporal, canceled func()) (context.Context, func()) {
	t.Helper()
	k := keeper{send: f.send, canceled: canceled, every: time.Millisecond, timeout: 3 * time.Minute, now: f.now,
		log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	return k.run(context.Background())
}

// A heartbeat RPC caught in a 30 s stall fails (its deadline passed while
// the process was stopped), and more fail while the connection recovers:
// the attempt goes on, since Temporal still waits for it (3 min).
func TestHeartbeatRidesOutAStall(t *testing.T) {
	late := serviceerror.NewDeadlineExceeded("context deadline exceeded")
	f := &fakeTemporal{clock: time.Unix(0, 0), answers: []answer{{}, {stall: 30 * time.Second, err: late},
		{err: serviceerror.NewUnavailable("connection reset")}, {}, {stall: 2 * time.Minute, err: late}, {}}}
	work, stop := keep(t, f, nil)
	defer stop()
	for f.heartbeats() < 10 {
		if work.Err() != nil {
			t.Fatalf("the attempt was given up after a stall shorter than the heartbeat timeout: %v", context.Cause(work))
		}
		time.Sleep(time.Millisecond)
	}
	if work.Err() != nil {
		t.Fatalf("the attempt was given up after a stall shorter than the heartbeat timeout: %v", context.Cause(work))
	}
}

// The attempt ends when Temporal says so, or when no heartbeat got through
// for the heartbeat timeout (Temporal has timed it out); a cancel is
// Temporal's, anything else the host's loss.
func TestHeartbeatEndsWhenTemporalDoes(t *testing.T) {
	late := serviceerror.NewDeadlineExceeded("context deadline exceeded")
	for _, tc := range []struct {
		name     string
		answers  []answer
		canceled bool // by Temporal
	}{
		{"canceled", []answer{{}, {err: temporal.NewCanceledError()}}, true},
		{"timed out on the server", []answer{{stall: 4 * time.Minute}, {err: serviceerror.NewNotFound("activity already timed out")}}, false},
		{"unreachable past the timeout", []answer{{stall: time.Minute, err: late}, {stall: time.Minute, err: late}, {stall: 61 * time.Second, err: late}}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeTemporal{clock: time.Unix(0, 0), answers: tc.answers}
			poked := false
			work, stop := keep(t, f, func() { poked = true })
			defer stop()
			select {
			case <-work.Done():
			case <-time.After(time.Minute):
				t.Fatal("the attempt ran on after Temporal ended it")
			}
			cause := context.Cause(work)
			if temporal.IsCanceledError(cause) != tc.canceled || poked != tc.canceled {
				t.Errorf("cause %v (poked the SDK: %v), want Temporal's cancel: %v", cause, poked, tc.canceled)
			}
			if f.heartbeats() != len(tc.answers) {
				t.Errorf("ended after %d heartbeats, want %d", f.heartbeats(), len(tc.answers))
			}
			// A host loss, on the host-loss budget, unless Temporal canceled.
			err := hostCanceled(work, "h", "DevicePhase", work.Err())
			if lost := isAppError(err, "HostLost"); lost == tc.canceled {
				t.Errorf("reported as %v: HostLost %v", err, lost)
			}
			if !tc.canceled && !errors.Is(err, context.Canceled) {
				t.Errorf("%v does not wrap the cancel", err)
			}
		})
	}
}

// An attempt that finishes while its heartbeats fail (its link cut) holds
// its result until a heartbeat gets through: the SDK reports the result
// once and drops it if that report times out on the dead connection.
func TestResultWaitsForAHeartbeatThrough(t *testing.T) {
	var mu sync.Mutex
	up, sent := true, 0
	send := func(context.Context) error {
		mu.Lock()
		defer mu.Unlock()
		sent++
		if !up {
			return serviceerror.NewUnavailable("connection timed out")
		}
		return nil
	}
	count := func() int { mu.Lock(); defer mu.Unlock(); return sent }
	setUp := func(v bool) { mu.Lock(); defer mu.Unlock(); up = v }
	k := keeper{send: send, every: time.Millisecond, timeout: 3 * time.Minute, now: time.Now,
		log: slog.New(slog.NewTextHandler(io.Discard, nil))}

	work, stop := k.run(context.Background())
	for count() < 2 {
		time.Sleep(time.Millisecond)
	}
	setUp(false) // the link is cut
	for n := count(); count() < n+3; {
		time.Sleep(time.Millisecond)
	}
	stopped := make(chan struct{})
	go func() { stop(); close(stopped) }()
	select {
	case <-stopped:
		t.Fatal("the attempt's result went out while no heartbeat got through")
	case <-time.After(50 * time.Millisecond):
	}
	setUp(true)
	select {
	case <-stopped:
	case <-time.After(10 * time.Second):
		t.Fatal("stop did not return once a heartbeat got through")
	}
	if work.Err() == nil {
		t.Fatal("stop left the attempt's context running")
	}

	// With the link up, stop does not wait.
	_, stop = k.run(context.Background())
	for n := count(); count() < n+2; {
		time.Sleep(time.Millisecond)
	}
	before := time.Now()
	stop()
	if d := time.Since(before); d > time.Second {
		t.Errorf("stop took %v with every heartbeat through", d)
	}
}
