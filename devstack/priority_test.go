package devstack

import (
	"context"
	"fmt"
	"io"
	"sync"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
)

// The embedded server honours priority keys (server v1.32.1: its matcher
// with priority levels is on by default, matching.useNewMatcher, 5 levels,
// as c2flow's priorities 1-5): a priority-1 activity task scheduled after
// three priority-3 ones, all waiting in the queue's backlog, is dispatched
// first; the priority-3 ones follow in the order they came.
func TestPriorityKeysOrderDispatch(t *testing.T) {
	s, err := Start(Options{LogLevel: "warn", Log: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, err := client.DialContext(ctx, client.Options{HostPort: s.Addr(), Namespace: s.Namespace()})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	const wfQueue, actQueue = "prio-wf", "prio-act"
	wf := func(ctx workflow.Context, name string, priority int) error {
		ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{TaskQueue: actQueue, StartToCloseTimeout: time.Minute,
			Priority: temporal.Priority{PriorityKey: priority}})
		return workflow.ExecuteActivity(ctx, "record", name).Get(ctx, nil)
	}
	ww := worker.New(c, wfQueue, worker.Options{})
	ww.RegisterWorkflowWithOptions(wf, workflow.RegisterOptions{Name: "prio"})
	if err := ww.Start(); err != nil {
		t.Fatal(err)
	}
	defer ww.Stop()
	// scheduled waits until the workflow's activity is in the queue.
	scheduled := func(id string) {
		t.Helper()
		for {
			d, err := c.DescribeWorkflowExecution(ctx, id, "")
			if err != nil {
				t.Fatal(err)
			}
			if p := d.PendingActivities; len(p) == 1 && p[0].State == enumspb.PENDING_ACTIVITY_STATE_SCHEDULED {
				return
			}
			if ctx.Err() != nil {
				t.Fatalf("activity of %s never scheduled", id)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	var runs []client.WorkflowRun
	start := func(name string, priority int) {
		t.Helper()
		id := fmt.Sprintf("prio-%s-%d", name, time.Now().UnixNano())
		r, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: wfQueue}, "prio", name, priority)
		if err != nil {
			t.Fatal(err)
		}
		runs = append(runs, r)
		scheduled(id)
	}
	for _, n := range []string{"porep-1", "porep-2", "porep-3"} {
		start(n, 3)
	}
	start("winning", 1)

	// One slot: tasks are taken one at a time, in the order matching
	// dispatches them.
	var mu sync.Mutex
	var order []string
	aw := worker.New(c, actQueue, worker.Options{MaxConcurrentActivityExecutionSize: 1})
	aw.RegisterActivityWithOptions(func(_ context.Context, name string) error {
		mu.Lock()
		order = append(order, name)
		mu.Unlock()
		return nil
	}, activity.RegisterOptions{Name: "record"})
	if err := aw.Start(); err != nil {
		t.Fatal(err)
	}
	defer aw.Stop()
	for _, r := range runs {
		if err := r.Get(ctx, nil); err != nil {
			t.Fatal(err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	want := []string{"winning", "porep-1", "porep-2", "porep-3"}
	if fmt.Sprint(order) != fmt.Sprint(want) {
		t.Fatalf("dispatched %v, want %v: the priority-1 task first", order, want)
	}
}
