package gateway

import (
	"context"
	"errors"
	"time"

	"go.temporal.io/api/serviceerror"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// ended says whether c is done or its deadline has passed. Temporal's
// client waits under contexts of its own with the same deadline, whose
// timers may fire before c's: its deadline error then comes while c.Err()
// is still nil, and only the clock says the wait is over.
func ended(c context.Context) bool {
	if c.Err() != nil {
		return true
	}
	dl, ok := c.Deadline()
	return ok && !time.Now().Before(dl)
}

// callerEnded is the error of a call whose caller's context ended.
func callerEnded(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return status.FromContextError(err).Err()
	}
	return status.Error(codes.DeadlineExceeded, "the caller's deadline passed")
}

// interrupted says whether err is a wait's interruption (a deadline or a
// cancel, Temporal's or gRPC's) rather than anything about the job: never
// a FAILED result, which is final.
func interrupted(err error) bool {
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return true
	}
	var de *serviceerror.DeadlineExceeded
	var ce *serviceerror.Canceled
	if errors.As(err, &de) || errors.As(err, &ce) {
		return true
	}
	switch status.Code(err) {
	case codes.DeadlineExceeded, codes.Canceled:
		return true
	}
	return false
}
