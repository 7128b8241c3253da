package gateway

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/c2flow/c2flow/gateway/cuzkpb"
	"github.com/c2flow/c2flow/registry"
)

// A request_id or a job id over its bound is refused as an invalid
// argument, echoed by its length and start only; a FAILED result never
// echoes the request_id as its job id.
func TestNameBounds(t *testing.T) {
	s := New(Config{Schemes: registry.Schemes(registry.Options{})})
	ctx := context.Background()
	huge := strings.Repeat("x", 16<<20)
	short := func(what string, err error) {
		t.Helper()
		if status.Code(err) != codes.InvalidArgument || len(err.Error()) > 300 || !strings.Contains(err.Error(), what) {
			t.Errorf("%s of 16 MiB: %d-byte error, code %v: %.200s", what, len(err.Error()), status.Code(err), err)
		}
	}
	for _, k := range []cuzkpb.ProofKind{cuzkpb.ProofKind_POREP_SEAL_COMMIT, cuzkpb.ProofKind_SNAP_DEALS_UPDATE, cuzkpb.ProofKind_WINDOW_POST_PARTITION} {
		_, err := s.Prove(ctx, &cuzkpb.ProveRequest{Submit: &cuzkpb.SubmitProofRequest{ProofKind: k, RequestId: huge}})
		short("request_id", err)
		_, err = s.SubmitProof(ctx, &cuzkpb.SubmitProofRequest{ProofKind: k, RequestId: huge})
		short("request_id", err)
	}
	for _, id := range []string{huge, "fwd:" + huge, "porep/" + huge} {
		_, err := s.AwaitProof(ctx, &cuzkpb.AwaitProofRequest{JobId: id})
		short("job_id", err)
		_, err = s.CancelProof(ctx, &cuzkpb.CancelProofRequest{JobId: id})
		short("job_id", err)
	}
	id := strings.Repeat("r", MaxRequestIDBytes)
	res, err := s.Prove(ctx, &cuzkpb.ProveRequest{Submit: &cuzkpb.SubmitProofRequest{ProofKind: cuzkpb.ProofKind_POREP_SEAL_COMMIT, RequestId: id}})
	if err != nil || res.GetResult().GetStatus() != cuzkpb.AwaitProofResponse_FAILED || strings.Contains(res.GetResult().GetJobId(), id) {
		t.Errorf("a malformed request of a %d-byte request_id: %v, %v", len(id), res, err)
	}
}

// timeout_ms up to 2^64-1 is a long wait, never an overflow into a short
// one (18446744073710 ms became 448 µs).
func TestAwaitTimeout(t *testing.T) {
	for _, c := range []struct {
		ms   uint64
		want time.Duration
	}{{0, 0}, {2, 2 * time.Millisecond}, {1500, 1500 * time.Millisecond}} {
		if got := awaitTimeout(c.ms); got != c.want {
			t.Errorf("awaitTimeout(%d) = %v, want %v", c.ms, got, c.want)
		}
	}
	for _, ms := range []uint64{18446744073710, 9223372036854, 9223372036855, 1<<63 - 1, 1 << 63, 1<<64 - 1} {
		if got := awaitTimeout(ms); got < time.Duration(min(ms, 9223372036854))*time.Millisecond || got < 100*365*24*time.Hour {
			t.Errorf("awaitTimeout(%d) = %v: shorter than asked", ms, got)
		}
	}
}

// A gateway remembers the last job of its most recent request_ids, in
// memory and bounded (before: a label object in S3 for every request_id,
// never deleted): the same request_id naming another job is seen, and the
// oldest are forgotten past maxRequestIDs.
func TestRequestIDsBounded(t *testing.T) {
	var r requestIDs
	if _, ok := r.swap("porep-1000-5", "job-a"); ok {
		t.Fatal("a new request_id was known")
	}
	if prev, ok := r.swap("porep-1000-5", "job-b"); !ok || prev != "job-a" {
		t.Errorf("the request_id again: %q %v, want job-a", prev, ok)
	}
	for i := range 2 * maxRequestIDs {
		r.swap(fmt.Sprint("req-", i), "job")
	}
	if n := r.order.Len(); n != maxRequestIDs || len(r.jobs) != maxRequestIDs {
		t.Errorf("%d request_ids remembered (map %d), want %d", n, len(r.jobs), maxRequestIDs)
	}
	if _, ok := r.swap("porep-1000-5", "job-c"); ok {
		t.Error("the oldest request_id was not forgotten")
	}
}
