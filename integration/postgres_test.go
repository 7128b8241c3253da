package integration

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"

	"github.com/c2flow/c2flow/batch"
	"github.com/c2flow/c2flow/devstack"
	"github.com/c2flow/c2flow/devstack/pgtest"
	"github.com/c2flow/c2flow/job"
	"github.com/c2flow/c2flow/porep"
	"github.com/c2flow/c2flow/porep/poreptest"
	"github.com/c2flow/c2flow/worker"
)

// usePostgres points the stack at a Temporal server on PostgreSQL (the
// database of pgURL, four history shards) instead of its SQLite one.
// The server's log goes to a file, shown if the test fails: while
// PostgreSQL is down it logs every failed write with its stack.
func (s *stack) usePostgres(pgURL string) {
	s.t.Helper()
	logPath := filepath.Join(s.t.TempDir(), "temporal.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		s.t.Fatal(err)
	}
	s.t.Cleanup(func() {
		logFile.Close()
		if s.t.Failed() {
			b, _ := os.ReadFile(logPath)
			s.t.Logf("temporal server log:\n%s", b)
		}
	})
	srv, err := devstack.Start(devstack.Options{Postgres: pgURL, HistoryShards: 4, Log: logFile, LogLevel: "warn"})
	if err != nil {
		s.t.Fatal(err)
	}
	s.t.Cleanup(srv.Stop)
	c, err := client.Dial(client.Options{HostPort: srv.Addr(), Logger: quietSDKLogger()})
	if err != nil {
		s.t.Fatal(err)
	}
	s.t.Cleanup(c.Close)
	s.temporal, s.client = srv, c
}

// put2KiB puts the C1s of 2KiB test sectors first..last in the store.
func (s *stack) put2KiB(first, last uint64) ([]*porep.C1, []job.SectorRef) {
	var c1s []*porep.C1
	var refs []job.SectorRef
	for id := first; id <= last; id++ {
		c1s = append(c1s, poreptest.Sector(s.t, "2KiB", id).C1())
		refs = append(refs, s.putC1(c1s[len(c1s)-1]))
	}
	return c1s, refs
}

// The production shape: Temporal on PostgreSQL with four history shards, a
// worker process proving a batch, every C2 stored and verified.
func TestPostgresBatch(t *testing.T) {
	pg := pgtest.URL(t, pgtest.Base(t))
	s := newStack(t, "2KiB")
	s.usePostgres(pg)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	w := s.startWorker("w", worker.Config{PartitionWorkers: 2})
	c1s, refs := s.put2KiB(901, 904)
	res := s.run(ctx, batch.Options{BatchID: "pg"}, refs)
	s.expectProved(res, c1s)
	if err := w.stop(); err != nil {
		t.Fatal(err)
	}
}

// PostgreSQL is restarted (pg_ctl stop -m fast, down a few seconds, start)
// while a batch is proving: Temporal rides it out and the batch completes.
func TestPostgresRestartMidBatch(t *testing.T) {
	if os.Getenv("C2FLOW_PG_RESTART") == "" {
		// Known open problem, not a pass: in 3 of 9 runs, after the restart
		// the synthesis tasks stay scheduled and are never dispatched
		// (matching's task-queue user data load failed while the database
		// was down and is not retried, we suspect); see the README.
		t.Skip("PostgreSQL restart mid-batch stalls dispatch in about 1 run of 3 (open, see README); set C2FLOW_PG_RESTART=1 to run it")
	}
	cluster := pgtest.Start(t) // the test's own cluster: its restart disturbs no other test
	s := newStack(t, "2KiB")
	s.usePostgres(pgtest.URL(t, cluster.Base))
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	w := s.startWorker("w", worker.Config{PartitionWorkers: 1})
	c1s, refs := s.put2KiB(911, 916)
	if _, err := batch.Submit(ctx, s.client, refs, batch.Options{BatchID: "pg-restart", Timeouts: faultTimeouts}); err != nil {
		t.Fatal(err)
	}
	w.waitStats(2*time.Minute, func(st worker.Stats) bool { return st.Host.DevicePhases >= 1 })
	cluster.Restart(3 * time.Second)
	// Stats are written as phases end: read now, they are no later than
	// the restart.
	if done, total := w.readStats().Host.DevicePhases, len(c1s)*s.keys.Profile.Partitions; done >= total {
		t.Fatalf("all %d partitions proved before PostgreSQL was back: the restart was not mid-batch", total)
	}
	t.Log("postgres restarted mid-batch")
	var res job.BatchResult
	var err error
	for {
		res, err = batch.Wait(ctx, s.client, "pg-restart", time.Second, nil)
		if err == nil || ctx.Err() != nil {
			break
		}
		time.Sleep(time.Second) // the server reconnects to the database
	}
	if err != nil {
		s.logOpenWorkflows()
		t.Fatal(err)
	}
	s.expectProved(res, c1s)
	if err := w.stop(); err != nil {
		t.Fatal(err)
	}
}

// logOpenWorkflows logs what each open workflow waits for: its pending
// workflow task and activities (a stuck batch's diagnosis).
func (s *stack) logOpenWorkflows() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	list, err := s.client.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Query: "ExecutionStatus = 'Running'"})
	if err != nil {
		s.t.Logf("list open workflows: %v", err)
		return
	}
	for _, e := range list.Executions {
		d, err := s.client.DescribeWorkflowExecution(ctx, e.Execution.WorkflowId, e.Execution.RunId)
		if err != nil {
			s.t.Logf("%s: %v", e.Execution.WorkflowId, err)
			continue
		}
		s.t.Logf("open %s (history %d events), pending workflow task %v", e.Execution.WorkflowId, d.WorkflowExecutionInfo.HistoryLength, d.PendingWorkflowTask)
		for _, a := range d.PendingActivities {
			s.t.Logf("  activity %s %s attempt %d scheduled %v last started %v heartbeat %v last failure %v",
				a.ActivityType.GetName(), a.State, a.Attempt, a.ScheduledTime.AsTime(), a.LastStartedTime.AsTime(), a.LastHeartbeatTime.AsTime(), a.LastFailure.GetMessage())
		}
	}
}
