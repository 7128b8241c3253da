package activities

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
)

// Heartbeater records an activity attempt's heartbeat by its task token
// and says what Temporal answered (client.Client does).
type Heartbeater interface {
	RecordActivityHeartbeat(ctx context.Context, taskToken []byte, details ...any) error
}

// maxHeartbeatEvery bounds the interval of heartbeats, and so how late a
// cancel reaches a running activity (it comes back in a heartbeat's
// answer).
const maxHeartbeatEvery = 5 * time.Second

// heartbeat keeps the activity of ctx alive until the returned stop is
// called; the activity works under the returned context.
//
// With Host.Heartbeats set (a worker's client), heartbeats go to Temporal
// directly, not through the SDK's activity.RecordHeartbeat: the SDK
// cancels an activity as soon as one heartbeat RPC outlives its throttle
// interval (5 s here), so a host stopped for 30 s (a GC pause, a
// page-fault storm, VM steal, SIGSTOP) while a heartbeat was in flight
// would cancel its own device phase and throw its witness away, though
// Temporal still waits minutes for it (job.Timeouts). Here the work stops
// only when Temporal says so: a cancel, an attempt it no longer runs (its
// heartbeat timeout passed), or no heartbeat taken for as long as that
// timeout; the local and the server's give-up are the same.
func (h *Host) heartbeat(ctx context.Context, details func() any) (context.Context, func()) {
	if !activity.IsActivity(ctx) { // called directly (tests): nothing to keep alive
		return ctx, func() {}
	}
	if h.Heartbeats == nil || !activity.IsActivity(ctx) || activity.GetInfo(ctx).HeartbeatTimeout <= 0 {
		return ctx, Heartbeat(ctx, h.HeartbeatEvery, details)
	}
	info := activity.GetInfo(ctx)
	k := keeper{
		send: func(rctx context.Context) error {
			if details == nil {
				return h.Heartbeats.RecordActivityHeartbeat(rctx, info.TaskToken)
			}
			return h.Heartbeats.RecordActivityHeartbeat(rctx, info.TaskToken, details())
		},
		// The SDK learns of the cancel from its own heartbeat, so the
		// attempt is reported canceled, not failed.
		canceled: func() { activity.RecordHeartbeat(ctx) },
		every:    max(h.HeartbeatEvery, min(maxHeartbeatEvery, info.HeartbeatTimeout/4)),
		timeout:  info.HeartbeatTimeout,
		now:      time.Now,
		log:      h.Log.With("activity", info.ActivityType.Name, "attempt", info.Attempt),
	}
	return k.run(ctx)
}

// keeper heartbeats an activity attempt: send every interval, until
// Temporal ends the attempt or none of its heartbeats got through for
// timeout (Temporal has then timed it out).
type keeper struct {
	send     func(context.Context) error
	canceled func() // Temporal asked for a cancel (optional)
	every    time.Duration
	timeout  time.Duration
	now      func() time.Time
	log      *slog.Logger
}

// run heartbeats until stop is called or the returned context ends: on
// ctx's end, on Temporal's cancel (the cause a temporal.CanceledError), or
// when the attempt is lost (any other cause).
func (k keeper) run(ctx context.Context) (context.Context, func()) {
	work, cancel := context.WithCancelCause(ctx)
	done := make(chan struct{})
	st := &beats{last: k.now()} // the attempt started: Temporal counts from there
	go func() {
		t := time.NewTicker(k.every)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-work.Done():
				return
			case <-t.C:
			}
			// A tick and the end can be ready together, and select picks
			// either: an ended attempt sends no more.
			if work.Err() != nil {
				return
			}
			// One RPC may take the whole timeout: a stall while it is in
			// flight is not a lost host unless Temporal says so.
			rctx, rcancel := context.WithTimeout(work, k.timeout)
			err := k.send(rctx)
			rcancel()
			var notFound *serviceerror.NotFound
			st.record(err, k.now())
			last := st.lastOK()
			switch {
			case err == nil:
			case temporal.IsCanceledError(err), errors.Is(err, activity.ErrActivityPaused), errors.Is(err, activity.ErrActivityReset):
				// An operator's pause or reset ends the attempt as the SDK
				// would.
				if k.canceled != nil {
					k.canceled()
				}
				cancel(err)
			case errors.As(err, &notFound):
				cancel(fmt.Errorf("heartbeat: Temporal no longer runs this attempt (its heartbeat timeout passed, or its workflow moved on): %w", err))
			case work.Err() != nil:
			case k.now().Sub(last) > k.timeout:
				cancel(fmt.Errorf("heartbeat: none reached Temporal for %v, past the heartbeat timeout %v: %w", k.now().Sub(last).Round(time.Second), k.timeout, err))
			default:
				k.log.Warn("heartbeat failed; the attempt goes on until its heartbeat timeout", "since_last", k.now().Sub(last).Round(time.Millisecond), "heartbeat_timeout", k.timeout, "error", err)
			}
		}
	}()
	return work, func() {
		close(done)
		if work.Err() == nil {
			k.settle(work, st)
		}
		cancel(nil)
	}
}

// beats is what the heartbeats of one attempt found: when one last got
// through, and whether the latest failed.
type beats struct {
	mu      sync.Mutex
	last    time.Time
	failing bool
}

func (b *beats) record(err error, now time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.failing = err != nil
	if err == nil {
		b.last = now
	}
}

func (b *beats) lastOK() time.Time {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.last
}

func (b *beats) down() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.failing
}

// settle holds a finished attempt's result while its heartbeats fail,
// until one gets through (or the heartbeat timeout passes, or Temporal
// ends the attempt). The SDK reports a result once: a report caught on a
// dead connection times out, a DeadlineExceeded it does not retry (and
// logs at debug), and the finished work is lost to the heartbeat timeout.
// Measured: a prover container cut off the network for 30 s while its
// device phase ended lost the partition to the 3-minute timeout
// (docs/failure-modes.md); a heartbeat through first puts the report on a
// connection that works.
func (k keeper) settle(ctx context.Context, st *beats) {
	if !st.down() {
		return
	}
	k.log.Warn("the attempt finished while its heartbeats fail: its result waits for one to get through", "since_last", k.now().Sub(st.lastOK()).Round(time.Millisecond))
	for st.down() && ctx.Err() == nil && k.now().Sub(st.lastOK()) <= k.timeout {
		rctx, rcancel := context.WithTimeout(ctx, k.timeout)
		err := k.send(rctx)
		rcancel()
		st.record(err, k.now())
		var notFound *serviceerror.NotFound
		switch {
		case err == nil:
			k.log.Info("heartbeat through again: reporting the attempt's result")
			return
		case errors.As(err, &notFound), temporal.IsCanceledError(err):
			return // the attempt is over: nothing to report it to
		}
		select {
		case <-ctx.Done():
		case <-time.After(k.every):
		}
	}
}

// Heartbeat records a heartbeat (with details(), if details is set) every
// interval through the SDK until the returned stop is called or ctx ends.
func Heartbeat(ctx context.Context, every time.Duration, details func() any) (stop func()) {
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				if details != nil {
					activity.RecordHeartbeat(ctx, details())
				} else {
					activity.RecordHeartbeat(ctx)
				}
			}
		}
	}()
	return func() { close(done) }
}
