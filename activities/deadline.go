package activities

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/c2flow/c2flow/job"
)

// lapsed counts and logs, once, a witness dropped because its job's
// deadline passed: held (dropped at the deadline) or synthesized late
// (never stored).
func (h *Host) lapsed(ref job.Ref, k int, deadline time.Time, how string) {
	h.count(func(s *HostStats) { s.Lapsed++ })
	h.Log.Warn("WITNESS_LAPSED: witness dropped, its job's deadline passed", "sector", ref.String(), "partition", k, "deadline", deadline.UTC(), "witness", how)
}

// deadlinePassed refuses op on a job whose deadline has passed: its proof
// is worthless, so it is not retried.
func deadlinePassed(op string, deadline time.Time) error {
	return temporal.NewNonRetryableApplicationError(fmt.Sprintf("%s: its job's deadline passed at %s, %v ago", op,
		deadline.UTC().Format(time.RFC3339Nano), time.Since(deadline).Round(time.Millisecond)), job.ErrDeadlinePassed, nil)
}

// untilDeadline bounds ctx by a job's deadline (zero: none), or refuses
// op at once past it.
func untilDeadline(ctx context.Context, deadline time.Time, op string) (context.Context, context.CancelFunc, error) {
	if deadline.IsZero() {
		return ctx, func() {}, nil
	}
	if !time.Now().Before(deadline) {
		return ctx, func() {}, deadlinePassed(op, deadline)
	}
	ctx, cancel := context.WithDeadline(ctx, deadline)
	return ctx, cancel, nil
}

// overDeadline names err, an activity's end under untilDeadline's ctx, as
// DeadlinePassed when the job's deadline ended it.
func overDeadline(ctx context.Context, deadline time.Time, op string, err error) error {
	if err == nil || deadline.IsZero() || !errors.Is(ctx.Err(), context.DeadlineExceeded) || time.Now().Before(deadline) {
		return err
	}
	return deadlinePassed(op, deadline)
}

// withinDeadline runs a phase of a held witness (f) until its job's
// deadline; past it, the phase is refused and the witness dropped at once.
func withinDeadline[T any](ctx context.Context, h *Host, in job.HandleInput, phase string, f func(context.Context, job.HandleInput) (T, error)) (T, error) {
	op := fmt.Sprintf("%s of %s partition %d", phase, in.Ref, in.Partition)
	in.Deadline = h.hostDeadline(ctx, in.Deadline)
	ctx, cancel, err := untilDeadline(ctx, in.Deadline, op)
	if err != nil {
		if in.Witness.Spill == "" {
			h.ws.lapse(in.Witness.Handle)
		}
		var zero T
		return zero, err
	}
	defer cancel()
	v, err := f(ctx, in)
	return v, overDeadline(ctx, in.Deadline, op, err)
}

// clockSlack is the offset from Temporal's clock a host's clock may have
// before its deadlines are moved: below it, the offset is the poll's
// latency (seconds on a loaded host) as much as the clock's.
const clockSlack = 5 * time.Second

// temporalClockOffset is how far this host's clock runs ahead of
// Temporal's, measured at the start of ctx's activity: the local time less
// the time Temporal says it started the attempt.
func temporalClockOffset(ctx context.Context) time.Duration {
	if !activity.IsActivity(ctx) {
		return 0
	}
	started := activity.GetInfo(ctx).StartedTime
	if started.IsZero() {
		return 0
	}
	return time.Since(started)
}

// hostDeadline is a job's deadline (Temporal's time: the batch's clock) on
// this host's clock. A host whose clock runs fast (or slow) by more than
// clockSlack would otherwise refuse, non-retryably, a phase still in time
// (or run one past it). Measured at an activity's start.
func (h *Host) hostDeadline(ctx context.Context, deadline time.Time) time.Time {
	if deadline.IsZero() {
		return deadline
	}
	offset := temporalClockOffset(ctx)
	if h.ClockOffset != nil {
		offset = h.ClockOffset(ctx)
	}
	if offset > -clockSlack && offset < clockSlack {
		return deadline
	}
	return deadline.Add(offset)
}
