package integration

import (
	"context"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	taskqueuepb "go.temporal.io/api/taskqueue/v1"
	"go.temporal.io/api/workflowservice/v1"

	"github.com/c2flow/c2flow/activities"
	"github.com/c2flow/c2flow/batch"
	"github.com/c2flow/c2flow/devstack/pgtest"
	"github.com/c2flow/c2flow/job"
	"github.com/c2flow/c2flow/scheme/testscheme/porep"
	"github.com/c2flow/c2flow/scheme/testscheme/porep/poreptest"
)

// put2KiB puts the C1s of 2KiB test sectors first..last in the store.
func (s *stack) put2KiB(first, last uint64) ([]*porep.C1, []job.Ref) {
	var c1s []*porep.C1
	var refs []job.Ref
	for id := first; id <= last; id++ {
		c1s = append(c1s, poreptest.Sector(s.t, "2KiB", id).C1())
		refs = append(refs, s.putC1(c1s[len(c1s)-1]))
	}
	return c1s, refs
}

// The production shape: Temporal on PostgreSQL with four history shards, a
// worker process proving a batch, every C2 stored and verified.
func TestPostgresBatch(t *testing.T) {
	s := newStackAt(t, "2KiB", stackAt{Postgres: pgtest.URL(t, pgtest.Base(t))})
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	w := s.startWorker("w", activities.Config{PartitionWorkers: 2})
	c1s, refs := s.put2KiB(901, 904)
	res := s.run(ctx, batch.Options{BatchID: "pg"}, refs)
	s.expectProved(res, c1s)
	if err := w.stop(); err != nil {
		t.Fatal(err)
	}
}

// PostgreSQL is restarted (pg_ctl stop -m fast, down a few seconds, start)
// while a batch is proving: Temporal rides it out and the batch completes.
// Replies lost in the outage are the hard part: a synthesis whose
// completion never reached Temporal left its witness holding the host's
// budget (1 here), so the host polled no more synthesis until the witness
// TTL (the batch stalled in 3 of 9 runs); such a witness is now dropped
// once no device phase claims it, and a finalize whose completion was lost
// answers its retry with the proof it made.
func TestPostgresRestartMidBatch(t *testing.T) {
	cluster := pgtest.Start(t) // the test's own cluster: its restart disturbs no other test
	s := newStackAt(t, "2KiB", stackAt{Postgres: pgtest.URL(t, cluster.Base)})
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	w := s.startWorker("w", activities.Config{PartitionWorkers: 1})
	c1s, refs := s.put2KiB(911, 916)
	if _, err := batch.Submit(ctx, s.client, refs, batch.Options{BatchID: "pg-restart", Timeouts: faultTimeouts}); err != nil {
		t.Fatal(err)
	}
	w.waitStats(2*time.Minute, func(st activities.Stats) bool { return st.Host.DevicePhases >= 1 })
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
		s.logQueue(job.QueueSynth)
		t.Logf("worker stats: %+v", w.readStats())
		t.Fatal(err)
	}
	s.expectProved(res, c1s)
	if err := w.stop(); err != nil {
		t.Fatal(err)
	}
	st := w.readStats().Host
	t.Logf("after the restart: %d unclaimed witnesses dropped, %d finalizes answered with their earlier proof, %d witnesses lost", st.Unclaimed, st.Replayed, st.WitnessLost)
}

// logQueue logs a task queue's pollers and backlog: whether a stuck
// activity waits for a poller or for the server to hand it out.
func (s *stack) logQueue(name string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	d, err := s.client.WorkflowService().DescribeTaskQueue(ctx, &workflowservice.DescribeTaskQueueRequest{
		Namespace: "default", TaskQueue: &taskqueuepb.TaskQueue{Name: name},
		TaskQueueType: enumspb.TASK_QUEUE_TYPE_ACTIVITY, ReportStats: true,
	})
	if err != nil {
		s.t.Logf("describe task queue %s: %v", name, err)
		return
	}
	for _, p := range d.Pollers {
		s.t.Logf("queue %s: poller %s last access %v", name, p.Identity, p.LastAccessTime.AsTime())
	}
	s.t.Logf("queue %s: %d pollers, stats %v", name, len(d.Pollers), d.Stats)
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
