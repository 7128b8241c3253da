package gateway

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"

	"github.com/c2flow/c2flow/gateway/cuzkpb"
	"github.com/c2flow/c2flow/job"
	"github.com/c2flow/c2flow/registry"
	"github.com/c2flow/c2flow/scheme"
)

// GetStatus reports every kind's queue: each kind's running jobs counted
// by the proof name its sector workflow carries (job.SectorMemo, what a
// batch starts them with), a job of a proof no cuzk kind serves under its
// proof name, and one with no proof name (an earlier release's) under
// "unlabelled". The jobs run on a queue no worker polls, so they stay
// running while the test reads them.
func TestStatusCountsEveryKind(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Temporal")
	}
	c, ns := devTemporal(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	set := registry.Schemes(registry.Options{})
	s := New(Config{Temporal: c, Schemes: set, Namespace: ns})

	// A proof of each request kind (from the schemes, not named here), and
	// one that no scheme admits requests of.
	want := map[string]uint32{}
	var proofs []string
	var other string
	for _, sc := range set {
		for _, p := range sc.Proofs() {
			k, ok := set.KindOf(p)
			switch {
			case !ok && other == "":
				other = p
			case ok:
				if name, _ := cuzkName(k); want[name] == 0 {
					want[name] = uint32(len(want) + 1) // a distinct count per kind
					for range want[name] {
						proofs = append(proofs, p)
					}
				}
			}
		}
	}
	if len(want) != len(cuzkKinds) || other == "" {
		t.Fatalf("the registered schemes gave proofs of %d kinds (want %d) and other %q", len(want), len(cuzkKinds), other)
	}
	proofs = append(proofs, other, "")
	want[other], want[unlabelled] = 1, 1
	for i, p := range proofs {
		ref := job.Ref{ProverID: strings.Repeat("e8", 32), SectorID: uint64(i), InputDigest: strings.Repeat("ab", 32), Proof: p}
		if _, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: job.SectorWorkflowID(ref), TaskQueue: "no-worker",
			Memo: job.SectorMemo(ref)}, job.SectorWorkflowName); err != nil {
			t.Fatal(err)
		}
	}

	// Visibility is written after the start: poll until it shows them all.
	var got map[string]uint32
	var order []string
	for ctx.Err() == nil {
		st, err := s.GetStatus(ctx, &cuzkpb.GetStatusRequest{})
		if err != nil {
			t.Fatal(err)
		}
		got, order = map[string]uint32{}, nil
		for _, q := range st.GetQueues() {
			got[q.GetProofKind()] = q.GetInProgress()
			order = append(order, q.GetProofKind())
		}
		if fmt.Sprint(got) == fmt.Sprint(want) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("GetStatus's queues in progress: %v, want %v", got, want)
	}
	// cuzk's kinds first, in cuzk's order (PoRep first).
	var cuzkOrder []string
	for _, k := range slices.Sorted(maps.Keys(cuzkKinds)) {
		cuzkOrder = append(cuzkOrder, kindName(k))
	}
	if !slices.Equal(order[:len(cuzkOrder)], cuzkOrder) {
		t.Errorf("queues in order %v, want cuzk's kinds first, %v", order, cuzkOrder)
	}
	m, err := s.GetMetrics(ctx, &cuzkpb.GetMetricsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for name, n := range want {
		if line := fmt.Sprintf("c2flow_fleet_jobs_running{proof_kind=%q} %d", name, n); !strings.Contains(m.PrometheusText, line) {
			t.Errorf("GetMetrics lacks %q:\n%s", line, m.PrometheusText)
		}
	}
}

// A kind's pending partitions are the synthesis tasks at its priorities:
// an urgent kind's in the urgent queue, each key counted once.
func TestPendingByPriority(t *testing.T) {
	f := fleetStatus{byKey: map[int32]int64{1: 100, 2: 5, 3: 7, 4: 11}, urgent: 13}
	for _, tc := range []struct {
		p    scheme.Priorities
		want int64
	}{
		{scheme.Priorities{High: 3, Normal: 3, Low: 4}, 18},
		{scheme.Priorities{High: 2, Normal: 2, Low: 2}, 5},
		{scheme.Priorities{High: job.PriorityUrgent, Normal: job.PriorityUrgent, Low: job.PriorityUrgent}, 13},
	} {
		if got := f.pending(scheme.Policy{Priorities: tc.p}); got != tc.want {
			t.Errorf("pending at %+v: %d, want %d", tc.p, got, tc.want)
		}
	}
}

// countingClient counts the visibility counts a gateway asks Temporal for.
type countingClient struct {
	client.Client
	mu     sync.Mutex
	counts int
}

func (c *countingClient) CountWorkflow(ctx context.Context, req *workflowservice.CountWorkflowExecutionsRequest) (*workflowservice.CountWorkflowExecutionsResponse, error) {
	c.mu.Lock()
	c.counts++
	c.mu.Unlock()
	return c.Client.CountWorkflow(ctx, req)
}

// Clients polling GetStatus (and GetMetrics) share one reading of the
// fleet every 2 s (issue 55: each call ran its own visibility queries): 10
// calls at once read it once; a call after the TTL reads it again.
func TestStatusReadsTheFleetOnceATTL(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Temporal")
	}
	c, ns := devTemporal(t)
	cc := &countingClient{Client: c}
	s := New(Config{Temporal: cc, Schemes: registry.Schemes(registry.Options{}), Namespace: ns})
	ctx := t.Context()
	var wg sync.WaitGroup
	for range 10 {
		wg.Go(func() {
			if _, err := s.GetStatus(ctx, &cuzkpb.GetStatusRequest{}); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if _, err := s.GetMetrics(ctx, &cuzkpb.GetMetricsRequest{}); err != nil {
		t.Fatal(err)
	}
	if cc.counts != 2 { // completed and failed: one reading
		t.Errorf("10 GetStatus and a GetMetrics at once made %d visibility counts, want 2 (one reading)", cc.counts)
	}
	time.Sleep(statusTTL)
	if _, err := s.GetStatus(ctx, &cuzkpb.GetStatusRequest{}); err != nil {
		t.Fatal(err)
	}
	if cc.counts != 4 {
		t.Errorf("a GetStatus after the TTL made %d counts in all, want 4 (a second reading)", cc.counts)
	}
}
