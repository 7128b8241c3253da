package gateway

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
	tlog "go.temporal.io/sdk/log"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/c2flow/c2flow/devstack"
	"github.com/c2flow/c2flow/gateway/cuzkpb"
	"github.com/c2flow/c2flow/job"
	"github.com/c2flow/c2flow/registry"
	"github.com/c2flow/c2flow/scheme"
)

// AwaitProof's short timeouts on a running job are TIMEOUT, never FAILED
// (final: a client gives up a good job): Temporal's client ends its wait
// under contexts of its own, whose deadline error came while the wait's
// context had not yet ended (5 of 30 calls at 2 ms, 7 of 60 at 150 ms).
// A timeout_ms too long for a time.Duration is a long wait, ended here by
// the caller's own deadline, never a TIMEOUT at once.
func TestAwaitShortTimeoutIsTimeout(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Temporal")
	}
	c, _ := devTemporal(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	j := proofJob{kind: scheme.KindPoRep, ref: job.Ref{ProverID: strings.Repeat("e8", 32), SectorID: 7, InputDigest: strings.Repeat("ab", 32), Proof: "StackedDrg2KiBV1_1"}}
	// The job's batch, running: no worker polls its queue.
	if _, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: job.BatchWorkflowID(j.batchID()), TaskQueue: "no-worker"}, "Batch"); err != nil {
		t.Fatal(err)
	}
	s := New(Config{Temporal: c, Schemes: registry.Schemes(registry.Options{})})
	got := map[string]int{}
	for i := range 120 {
		ms := []uint64{1, 2, 3, 150}[i%4]
		res, err := s.AwaitProof(ctx, &cuzkpb.AwaitProofRequest{JobId: j.id(), TimeoutMs: ms})
		switch {
		case err != nil && status.Code(err) == codes.Unavailable: // retryable: the wait was cut short
			got["Unavailable"]++
		case err != nil:
			t.Fatalf("AwaitProof, timeout %d ms: %v", ms, err)
		default:
			got[res.GetStatus().String()]++
			if res.GetStatus() != cuzkpb.AwaitProofResponse_TIMEOUT {
				t.Errorf("AwaitProof of a running job, timeout %d ms: %v %q", ms, res.GetStatus(), res.GetErrorMessage())
			}
		}
	}
	t.Logf("120 AwaitProofs at 1, 2, 3 and 150 ms on a running job: %v", got)

	cctx, ccancel := context.WithTimeout(ctx, 500*time.Millisecond)
	defer ccancel()
	res, err := s.AwaitProof(cctx, &cuzkpb.AwaitProofRequest{JobId: j.id(), TimeoutMs: 18446744073710})
	if status.Code(err) != codes.DeadlineExceeded {
		t.Errorf("AwaitProof of timeout_ms 18446744073710 under a 500 ms deadline: %v, %v; want the caller's DeadlineExceeded", res, err)
	}
}

// devTemporal is a development Temporal for one test, stopped at its end,
// and a client of its namespace.
func devTemporal(t *testing.T) (client.Client, string) {
	t.Helper()
	srv, err := devstack.Start(devstack.Options{DBFile: filepath.Join(t.TempDir(), "temporal.db"), Log: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Stop)
	c, err := client.Dial(client.Options{HostPort: srv.Addr(), Namespace: srv.Namespace(), Logger: tlog.NewStructuredLogger(slog.New(slog.DiscardHandler))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c, srv.Namespace()
}
