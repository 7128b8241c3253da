package workflows

import (
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/c2flow/c2flow/job"
)

// Every option of every activity and child workflow the workflows start,
// and their defaults, in one place (the shape of Temporal's
// service/worker/batcher). Changing a value here changes what new
// schedules carry, not the commands a workflow issues: histories of
// batches in flight still replay (TestReplayRecordedHistories).

// Defaults of a sector's retry budget (SectorInput.PartitionRetries and
// HostLossRetries when zero). Timeouts default in job.Timeouts.WithDefaults.
const (
	defaultPartitionRetries = 3
	defaultHostLossRetries  = 20
)

// The workflow queue's activities heartbeat like the hosts' (t.Heartbeat),
// so a workflow worker that dies in one is given up as soon as a prove
// worker would be, not at the start-to-close timeout (minutes).

// lookupOptions: a batch checks a sector's stored C2 (ActLookupC2).
func lookupOptions(t job.Timeouts) workflow.ActivityOptions {
	return workflow.ActivityOptions{
		TaskQueue: job.QueueWorkflow, StartToCloseTimeout: 5 * time.Minute, HeartbeatTimeout: t.Heartbeat,
		RetryPolicy: &temporal.RetryPolicy{MaximumAttempts: 5},
	}
}

// validateOptions: a sector's C1 checked (ActValidateC1); a bad C1 is
// final.
func validateOptions(t job.Timeouts) workflow.ActivityOptions {
	return workflow.ActivityOptions{
		TaskQueue:           job.QueueWorkflow,
		StartToCloseTimeout: 10 * time.Minute,
		HeartbeatTimeout:    t.Heartbeat,
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 5, NonRetryableErrorTypes: []string{job.ErrBadC1, job.ErrBadPriority}},
	}
}

// storeOptions: the C2 assembled, verified and written (ActStoreC2); a
// proof that does not verify is final.
func storeOptions(t job.Timeouts) workflow.ActivityOptions {
	return workflow.ActivityOptions{
		TaskQueue:           job.QueueWorkflow,
		StartToCloseTimeout: 10 * time.Minute,
		HeartbeatTimeout:    t.Heartbeat,
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 10, NonRetryableErrorTypes: []string{job.ErrInvalidProof}},
	}
}

// retriesOf is a sector's retry budget, defaults filled.
func retriesOf(in job.SectorInput) partitionRetries {
	r := partitionRetries{logical: in.PartitionRetries, hostLoss: in.HostLossRetries}
	if r.logical <= 0 {
		r.logical = defaultPartitionRetries
	}
	if r.hostLoss <= 0 {
		r.hostLoss = defaultHostLossRetries
	}
	return r
}

// synthOptions: a partition synthesized on any host with room
// (ActSynthesize); priority 1 on the urgent synthesis queue, whose hosts
// keep memory for it (the queue is an option, not a command: histories
// replay whatever queue they were scheduled on).
func synthOptions(t job.Timeouts, priority int) workflow.ActivityOptions {
	return workflow.ActivityOptions{
		TaskQueue:           job.SynthQueue(priority),
		StartToCloseTimeout: t.Synth,
		HeartbeatTimeout:    t.Heartbeat,
		// A synthesis that completes as the sector is canceled still
		// reports its handle, so its witness is released, not leaked.
		WaitForCancellation: true,
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 3, NonRetryableErrorTypes: []string{job.ErrBadC1, job.ErrNoKeys}},
	}
}

// hostOptions: a step on the host that holds the witness (ActDevicePhase,
// ActFinalize) through its queue, attempts at most. A lost witness is not
// retried there: the partition is synthesized again.
func hostOptions(queue string, startToClose time.Duration, attempts int32, t job.Timeouts) workflow.ActivityOptions {
	toStart := t.HostQueue
	if queue == job.QueueDevice {
		// The device hosts' shared queue waits for fleet capacity, not for
		// one host: no host-loss timeout there.
		toStart = 0
	}
	return workflow.ActivityOptions{
		TaskQueue:              queue,
		ScheduleToStartTimeout: toStart,
		StartToCloseTimeout:    startToClose,
		HeartbeatTimeout:       t.Heartbeat,
		RetryPolicy: &temporal.RetryPolicy{MaximumAttempts: attempts,
			NonRetryableErrorTypes: []string{job.ErrWitnessLost, job.ErrNoKeys}},
	}
}

// releaseOptions: a host told to drop a witness (ActRelease), briefly:
// a dead host needs no release.
func releaseOptions(controlQueue string) workflow.ActivityOptions {
	return workflow.ActivityOptions{
		TaskQueue: controlQueue, ScheduleToCloseTimeout: 30 * time.Second, StartToCloseTimeout: 10 * time.Second,
		RetryPolicy: &temporal.RetryPolicy{MaximumAttempts: 3},
	}
}

// sectorChildOptions: a batch's sector workflow, its ID the sector's
// identity (one run at a time per identity, whatever batch submits it; a
// completed one may run again when its C2 was missing or bad). A batch
// that closes with sectors in flight (its deadline, its execution timeout,
// passed; an operator terminated it) cancels them rather than terminating
// them: a canceled sector releases the witnesses it left on hosts, a
// terminated one cannot. Its memo names its proof (status counts jobs by
// kind). Neither the policy nor the memo is part of the command replay
// checks.
func sectorChildOptions(ref job.Ref, priority int) workflow.ChildWorkflowOptions {
	return workflow.ChildWorkflowOptions{
		WorkflowID:            job.SectorWorkflowID(ref),
		TaskQueue:             job.QueueWorkflow,
		WorkflowIDReusePolicy: enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE,
		WaitForCancellation:   true,
		ParentClosePolicy:     enumspb.PARENT_CLOSE_POLICY_REQUEST_CANCEL,
		Priority:              temporal.Priority{PriorityKey: job.TaskPriority(priority)},
		Memo:                  job.SectorMemo(ref),
	}
}
