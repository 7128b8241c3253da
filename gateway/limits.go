package gateway

import (
	"math"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/c2flow/c2flow/internal/clip"
)

// Bounds on the names a client sends. A c2flow job id is at most about
// 220 bytes (porep/<proof>/<64 hex>/<20 digits>/<64 hex>), a forwarded
// one fwd:<cuzk's id> (a UUID); Curio's request ids are a few dozen bytes.
// A name over its bound is refused unread, and only its length and its
// start are ever logged or echoed.
const (
	MaxRequestIDBytes = 256
	MaxJobIDBytes     = 256
)

// checkName refuses a name (request_id, job_id) over max bytes,
// naming its length and its start only.
func checkName(what, v string, max int) error {
	if len(v) <= max {
		return nil
	}
	return status.Errorf(codes.InvalidArgument, "%s of %d bytes (starting %q): at most %d", what, len(v), clip.Head(v, 32), max)
}

// maxWait is the longest timeout_ms a wait honours as given: a longer one
// (up to 2^64-1 ms, which time.Duration cannot hold) is this, a wait as
// good as unbounded, never an overflow into a short one.
const maxWait = time.Duration(math.MaxInt64)

// awaitTimeout is AwaitProof's timeout_ms as a duration (0: none).
func awaitTimeout(ms uint64) time.Duration {
	if ms > uint64(maxWait/time.Millisecond) {
		return maxWait
	}
	return time.Duration(ms) * time.Millisecond
}
