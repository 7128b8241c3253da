package workflows

import (
	"errors"
	"sort"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/c2flow/c2flow/job"
)

// BatchWorkflow proves a submission of sectors: one SectorWorkflow child
// per sector, ID c2/<sector-id>, at most MaxInFlight at once. A sector whose
// workflow already completed (an earlier batch proved it) is not proved
// again: its stored C2 is reported instead. Large batches continue as new
// every ContinueAfter sectors, after draining the signals already received
// (a cancel is carried across). The "progress" query reports every sector;
// the "cancel" signal cancels the sectors in flight and starts no more.
func BatchWorkflow(ctx workflow.Context, in job.BatchInput) (job.BatchResult, error) {
	b := newBatch(ctx, in)
	if err := workflow.SetQueryHandler(ctx, job.QueryProgress, b.progress); err != nil {
		return job.BatchResult{}, err
	}
	childCtx, cancelChildren := workflow.WithCancel(ctx)
	b.cancelChildren = cancelChildren
	if in.Canceled { // canceled in an earlier run, before it continued as new
		b.cancel()
	}
	sel := workflow.NewSelector(ctx)
	sel.AddReceive(b.progressCh, func(c workflow.ReceiveChannel, _ bool) { b.receiveProgress(ctx, c) })
	sel.AddReceive(b.cancelCh, func(c workflow.ReceiveChannel, _ bool) { c.Receive(ctx, nil); b.cancel() })

	for {
		for b.canStart() {
			b.startNext(ctx, childCtx, sel)
		}
		if b.inFlight == 0 {
			if b.canceled || b.next == len(b.in.Sectors) {
				break
			}
			if b.started >= b.continueAfter {
				// Signals already received belong to this run: apply them
				// before continuing, or a cancel would be lost.
				b.drainSignals(ctx)
				if !b.canceled {
					return job.BatchResult{}, workflow.NewContinueAsNewError(ctx, job.BatchWorkflowName, b.continued())
				}
				break
			}
		}
		sel.Select(ctx)
	}
	return b.finish(), nil
}

// batch is one run of a BatchWorkflow: the sectors it starts, the results
// it carries, and the signals it has applied.
type batch struct {
	in            job.BatchInput
	maxInFlight   int
	continueAfter int
	total         int
	prog          map[string]*job.Progress // by sector identity
	results       []job.SectorResult

	progressCh, cancelCh    workflow.ReceiveChannel
	cancelChildren          workflow.CancelFunc
	canceled                bool
	inFlight, next, started int
}

func newBatch(ctx workflow.Context, in job.BatchInput) *batch {
	b := &batch{in: in, maxInFlight: in.MaxInFlight, continueAfter: in.ContinueAfter,
		total: len(in.Done) + len(in.Sectors), prog: map[string]*job.Progress{},
		results:    append([]job.SectorResult(nil), in.Done...),
		progressCh: workflow.GetSignalChannel(ctx, job.SignalProgress),
		cancelCh:   workflow.GetSignalChannel(ctx, job.SignalCancel),
	}
	if b.maxInFlight <= 0 {
		b.maxInFlight = 8
	}
	if b.continueAfter <= 0 {
		b.continueAfter = 500
	}
	for _, d := range in.Done {
		n := max(len(d.Partitions), d.NumPartitions)
		b.prog[d.Ref.Identity()] = &job.Progress{Ref: d.Ref,
			Status: d.Status, Partitions: n, PartitionsDone: n}
	}
	for _, s := range in.Sectors {
		if _, ok := b.prog[s.Identity()]; !ok {
			b.prog[s.Identity()] = &job.Progress{Ref: s, Status: job.StatusPending}
		}
	}
	if b.in.Submitted.IsZero() {
		b.in.Submitted = workflow.GetInfo(ctx).WorkflowStartTime
	}
	return b
}

// progress answers the progress query.
func (b *batch) progress() (job.BatchProgress, error) {
	bp := job.BatchProgress{BatchID: b.in.BatchID, Total: b.total, Canceled: b.canceled}
	for _, p := range b.prog {
		bp.Sectors = append(bp.Sectors, *p)
	}
	sort.Slice(bp.Sectors, func(i, j int) bool { return less(bp.Sectors[i].Ref, bp.Sectors[j].Ref) })
	return bp, nil
}

func (b *batch) receiveProgress(ctx workflow.Context, c workflow.ReceiveChannel) {
	var p job.Progress
	c.Receive(ctx, &p)
	b.applyProgress(p)
}

func (b *batch) applyProgress(p job.Progress) {
	if cur, ok := b.prog[p.Ref.Identity()]; ok && cur.Status != job.StatusDuplicate {
		*cur = p
	}
}

// cancel starts no more sectors and cancels those in flight.
func (b *batch) cancel() {
	if !b.canceled {
		b.canceled = true
		b.cancelChildren()
	}
}

// drainSignals applies every signal already received, without blocking.
func (b *batch) drainSignals(ctx workflow.Context) {
	for {
		var p job.Progress
		if !b.progressCh.ReceiveAsync(&p) {
			break
		}
		b.applyProgress(p)
	}
	for b.cancelCh.ReceiveAsync(nil) {
		b.cancel()
	}
}

func (b *batch) canStart() bool {
	return !b.canceled && b.inFlight < b.maxInFlight && b.next < len(b.in.Sectors) && b.started < b.continueAfter
}

// startNext takes the next sector: first its stored C2 is looked up and
// checked (a sector proved earlier, by any batch, is reported, not proved
// again); then, unless it was valid, the sector's workflow is started.
// Results are recorded as the selector delivers them.
func (b *batch) startNext(ctx, childCtx workflow.Context, sel workflow.Selector) {
	ref := b.in.Sectors[b.next]
	seq := len(b.in.Done) + b.next
	b.next++
	b.started++
	b.inFlight++
	b.prog[ref.Identity()].Status = job.StatusRunning
	start := workflow.Now(ctx)
	sel.AddFuture(lookupC2(childCtx, ref, b.in.Timeouts.WithDefaults()), func(f workflow.Future) {
		var lo job.LookupOutput
		err := f.Get(ctx, &lo)
		switch {
		case err == nil && lo.Valid:
			b.inFlight--
			b.record(job.SectorResult{Ref: ref, Status: job.StatusDuplicate,
				C2Key: lo.C2Key, Started: start, Finished: workflow.Now(ctx)})
			return
		case b.canceled:
			b.inFlight--
			b.record(job.SectorResult{Ref: ref, Status: job.StatusCanceled,
				Started: start, Finished: workflow.Now(ctx)})
			return
		case err == nil && lo.Found:
			workflow.GetLogger(ctx).Warn("stored C2 not trusted; proving again", "sector", ref.String(), "reason", lo.Reason)
		}
		b.startChild(ctx, childCtx, sel, ref, seq, start)
	})
}

// lookupC2 checks a sector's stored C2 (job.ActLookupC2).
func lookupC2(ctx workflow.Context, ref job.Ref, t job.Timeouts) workflow.Future {
	return workflow.ExecuteActivity(workflow.WithActivityOptions(ctx, lookupOptions(t)), job.ActLookupC2, ref)
}

// startChild starts a sector's workflow. Its ID is the sector's identity:
// one run at a time per identity, whatever batch submits it; a completed
// one may run again (its C2 was missing or bad).
func (b *batch) startChild(ctx, childCtx workflow.Context, sel workflow.Selector, ref job.Ref, seq int, start time.Time) {
	cctx := workflow.WithChildOptions(childCtx, sectorChildOptions(ref, b.in.Priority))
	f := workflow.ExecuteChildWorkflow(cctx, job.SectorWorkflowName, job.SectorInput{
		BatchID: b.in.BatchID, Order: job.DeviceOrder{Priority: b.in.Priority, Submitted: b.in.Submitted, Seq: seq}, Ref: ref,
		PartitionRetries: b.in.PartitionRetries, HostLossRetries: b.in.HostLossRetries, Timeouts: b.in.Timeouts, Deadline: b.in.Deadline})
	sel.AddFuture(f, func(f workflow.Future) {
		b.inFlight--
		b.record(b.sectorResult(ctx, ref, start, f))
	})
}

// sectorResult reads a finished sector workflow's outcome.
func (b *batch) sectorResult(ctx workflow.Context, ref job.Ref, start time.Time, f workflow.Future) job.SectorResult {
	var r job.SectorResult
	err := f.Get(ctx, &r)
	r.ProverID, r.SectorID, r.InputDigest = ref.ProverID, ref.SectorID, ref.InputDigest
	if r.Started.IsZero() {
		r.Started = start
	}
	switch {
	case err == nil:
	case temporal.IsWorkflowExecutionAlreadyStartedError(err):
		r.Status, r.Finished = job.StatusDuplicate, workflow.Now(ctx)
		r.Error = "sector workflow " + job.SectorWorkflowID(ref) + " is running in another batch"
	default:
		if r.Finished.IsZero() {
			r.Finished = workflow.Now(ctx)
		}
		r.Status, r.Error = job.StatusFailed, brief(err)
		var ce *temporal.CanceledError
		if b.canceled || errors.As(err, &ce) {
			r.Status = job.StatusCanceled
		}
	}
	return r
}

func (b *batch) record(r job.SectorResult) {
	b.prog[r.Ref.Identity()].Status = r.Status
	if b.total > job.FullResultsMax {
		r.NumPartitions, r.Partitions = len(r.Partitions), nil
	}
	b.results = append(b.results, r)
}

// continued is the input of the next run: the sectors not started yet and
// the results so far.
func (b *batch) continued() job.BatchInput {
	next := b.in
	next.Sectors = b.in.Sectors[b.next:]
	next.Done = b.results
	next.Canceled = b.canceled
	return next
}

// finish reports every sector, the ones a cancel kept from starting too.
func (b *batch) finish() job.BatchResult {
	for _, ref := range b.in.Sectors[b.next:] {
		b.results = append(b.results, job.SectorResult{Ref: ref, Status: job.StatusCanceled})
		b.prog[ref.Identity()].Status = job.StatusCanceled
	}
	sort.Slice(b.results, func(i, j int) bool { return less(b.results[i].Ref, b.results[j].Ref) })
	return job.BatchResult{BatchID: b.in.BatchID, Sectors: b.results}
}

// less orders sectors by number, then prover, then C1 digest.
func less(a, b job.Ref) bool {
	if a.SectorID != b.SectorID {
		return a.SectorID < b.SectorID
	}
	if a.ProverID != b.ProverID {
		return a.ProverID < b.ProverID
	}
	return a.InputDigest < b.InputDigest
}

// Register adds the workflows to a registry under their job names.
func Register(r interface {
	RegisterWorkflowWithOptions(w interface{}, options workflow.RegisterOptions)
}) {
	r.RegisterWorkflowWithOptions(BatchWorkflow, workflow.RegisterOptions{Name: job.BatchWorkflowName})
	r.RegisterWorkflowWithOptions(SectorWorkflow, workflow.RegisterOptions{Name: job.SectorWorkflowName})
}
