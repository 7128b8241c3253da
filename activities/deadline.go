package activities

import (
	"context"
	"errors"
	"fmt"
	"time"

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
func withinDeadline[T any](ctx context.Context, h *Host, in job.HandleInput, phase string, f func(context.Context) (T, error)) (T, error) {
	op := fmt.Sprintf("%s of %s partition %d", phase, in.Ref, in.Partition)
	ctx, cancel, err := untilDeadline(ctx, in.Deadline, op)
	if err != nil {
		if in.Witness.Spill == "" {
			h.ws.lapse(in.Witness.Handle)
		}
		var zero T
		return zero, err
	}
	defer cancel()
	v, err := f(ctx)
	return v, overDeadline(ctx, in.Deadline, op, err)
}
