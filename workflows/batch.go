package workflows

import (
	"errors"
	"sort"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/c2flow/c2flow/job"
)

// BatchWorkflow proves a submission of sectors: one SectorWorkflow child
// per sector, ID c2/<sector-id>, at most MaxInFlight at once. A sector whose
// workflow already completed (an earlier batch proved it) is not proved
// again: its stored C2 is reported instead. Large batches continue as new
// every ContinueAfter sectors. The "progress" query reports every sector;
// the "cancel" signal cancels the sectors in flight and starts no more.
func BatchWorkflow(ctx workflow.Context, in job.BatchInput) (job.BatchResult, error) {
	maxInFlight := in.MaxInFlight
	if maxInFlight <= 0 {
		maxInFlight = 8
	}
	continueAfter := in.ContinueAfter
	if continueAfter <= 0 {
		continueAfter = 500
	}
	total := len(in.Done) + len(in.Sectors)
	prog := map[uint64]*job.Progress{}
	for _, d := range in.Done {
		prog[d.SectorID] = &job.Progress{SectorID: d.SectorID, Status: d.Status, Partitions: max(len(d.Partitions), d.NumPartitions), PartitionsDone: max(len(d.Partitions), d.NumPartitions)}
	}
	for _, s := range in.Sectors {
		if _, ok := prog[s.SectorID]; !ok {
			prog[s.SectorID] = &job.Progress{SectorID: s.SectorID, Status: job.StatusPending}
		}
	}
	if in.Submitted.IsZero() {
		in.Submitted = workflow.GetInfo(ctx).WorkflowStartTime
	}
	canceled := false
	err := workflow.SetQueryHandler(ctx, job.QueryProgress, func() (job.BatchProgress, error) {
		bp := job.BatchProgress{BatchID: in.BatchID, Total: total, Canceled: canceled}
		for _, p := range prog {
			bp.Sectors = append(bp.Sectors, *p)
		}
		sort.Slice(bp.Sectors, func(i, j int) bool { return bp.Sectors[i].SectorID < bp.Sectors[j].SectorID })
		return bp, nil
	})
	if err != nil {
		return job.BatchResult{}, err
	}

	results := append([]job.SectorResult(nil), in.Done...)
	childCtx, cancelChildren := workflow.WithCancel(ctx)
	sel := workflow.NewSelector(ctx)
	sel.AddReceive(workflow.GetSignalChannel(ctx, job.SignalProgress), func(c workflow.ReceiveChannel, _ bool) {
		var p job.Progress
		c.Receive(ctx, &p)
		if cur, ok := prog[p.SectorID]; ok && cur.Status != job.StatusDuplicate {
			*cur = p
		}
	})
	sel.AddReceive(workflow.GetSignalChannel(ctx, job.SignalCancel), func(c workflow.ReceiveChannel, _ bool) {
		c.Receive(ctx, nil)
		if !canceled {
			canceled = true
			cancelChildren()
		}
	})

	inFlight, next, started := 0, 0, 0
	for {
		for !canceled && inFlight < maxInFlight && next < len(in.Sectors) && started < continueAfter {
			ref := in.Sectors[next]
			seq := len(in.Done) + next
			next++
			started++
			inFlight++
			prog[ref.SectorID].Status = job.StatusRunning
			cctx := workflow.WithChildOptions(childCtx, workflow.ChildWorkflowOptions{
				WorkflowID:            job.SectorWorkflowID(ref.SectorID),
				TaskQueue:             job.QueueWorkflow,
				WorkflowIDReusePolicy: enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE_FAILED_ONLY,
				WaitForCancellation:   true,
				Priority:              temporal.Priority{PriorityKey: job.TaskPriority(in.Priority)},
			})
			start := workflow.Now(ctx)
			f := workflow.ExecuteChildWorkflow(cctx, job.SectorWorkflowName, job.SectorInput{
				BatchID: in.BatchID, Priority: in.Priority, Submitted: in.Submitted, Seq: seq, SectorRef: ref, PartitionRetries: in.PartitionRetries, Timeouts: in.Timeouts})
			sel.AddFuture(f, func(f workflow.Future) {
				inFlight--
				var r job.SectorResult
				err := f.Get(ctx, &r)
				switch {
				case err == nil:
				case temporal.IsWorkflowExecutionAlreadyStartedError(err):
					r = duplicate(ctx, ref, start)
				default:
					if r.SectorID == 0 {
						r = job.SectorResult{SectorID: ref.SectorID, Started: start, Finished: workflow.Now(ctx)}
					}
					r.Status, r.Error = job.StatusFailed, err.Error()
					var ce *temporal.CanceledError
					if canceled || errors.As(err, &ce) {
						r.Status = job.StatusCanceled
					}
				}
				p := prog[ref.SectorID]
				p.Status = r.Status
				if total > job.FullResultsMax {
					r.NumPartitions, r.Partitions = len(r.Partitions), nil
				}
				results = append(results, r)
			})
		}
		if inFlight == 0 {
			if canceled || next == len(in.Sectors) {
				break
			}
			if started >= continueAfter {
				// Drain pending progress signals into the carried results, then
				// start afresh with the rest.
				return job.BatchResult{}, workflow.NewContinueAsNewError(ctx, job.BatchWorkflowName, job.BatchInput{
					BatchID: in.BatchID, Sectors: in.Sectors[next:], MaxInFlight: in.MaxInFlight,
					PartitionRetries: in.PartitionRetries, Timeouts: in.Timeouts, ContinueAfter: in.ContinueAfter, Done: results, Priority: in.Priority, Submitted: in.Submitted})
			}
		}
		sel.Select(ctx)
	}
	for _, ref := range in.Sectors[next:] { // not started because of a cancel
		results = append(results, job.SectorResult{SectorID: ref.SectorID, Status: job.StatusCanceled})
		prog[ref.SectorID].Status = job.StatusCanceled
	}
	sort.Slice(results, func(i, j int) bool { return results[i].SectorID < results[j].SectorID })
	return job.BatchResult{BatchID: in.BatchID, Sectors: results}, nil
}

// duplicate reports a sector whose workflow already ran: its stored C2 if
// there is one.
func duplicate(ctx workflow.Context, ref job.SectorRef, start time.Time) job.SectorResult {
	r := job.SectorResult{SectorID: ref.SectorID, Status: job.StatusDuplicate, Started: start, Finished: workflow.Now(ctx)}
	lctx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		TaskQueue: job.QueueWorkflow, StartToCloseTimeout: time.Minute,
		RetryPolicy: &temporal.RetryPolicy{MaximumAttempts: 5},
	})
	var lo job.LookupOutput
	if err := workflow.ExecuteActivity(lctx, job.ActLookupC2, ref).Get(ctx, &lo); err != nil {
		r.Error = "lookup of the stored C2 failed: " + err.Error()
		return r
	}
	if lo.Found {
		r.C2Key = lo.C2Key
	} else {
		r.Error = "sector workflow " + job.SectorWorkflowID(ref.SectorID) + " is running in another batch"
	}
	return r
}

// Register adds the workflows to a registry under their job names.
func Register(r interface {
	RegisterWorkflowWithOptions(w interface{}, options workflow.RegisterOptions)
}) {
	r.RegisterWorkflowWithOptions(BatchWorkflow, workflow.RegisterOptions{Name: job.BatchWorkflowName})
	r.RegisterWorkflowWithOptions(SectorWorkflow, workflow.RegisterOptions{Name: job.SectorWorkflowName})
}
