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
// the "cancel" signal cancels the sectors in flight and starts no more;
// the "deadline" signal (a caller joining) extends the batch's deadline
// to the later one: its sectors in flight are told, and those that
// lapsed under the earlier deadline run again.
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
	sel.AddReceive(b.deadlineCh, func(c workflow.ReceiveChannel, _ bool) { b.receiveDeadline(ctx, c) })

	for {
		for b.canStart() {
			b.startNext(ctx, childCtx, sel)
		}
		if b.inFlight == 0 {
			if b.canceled || b.pending() == 0 {
				// A joiner's deadline received meanwhile may bring a
				// lapsed sector back.
				b.drainSignals(ctx)
				if b.canceled || b.pending() == 0 {
					break
				}
				continue
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

	progressCh, cancelCh, deadlineCh workflow.ReceiveChannel
	cancelChildren                   workflow.CancelFunc
	canceled                         bool
	inFlight, next, started          int

	// running is the sectors whose workflow runs, by identity: a later
	// deadline is signalled to them.
	running map[string]job.Ref
	// lapsed is the sectors of this run that failed on an earlier
	// deadline, by identity: a later one runs them again (again).
	lapsed map[string]bool
	again  []rerun
}

// rerun is a sector to run again, in its place in the device order.
type rerun struct {
	ref job.Ref
	seq int
}

func newBatch(ctx workflow.Context, in job.BatchInput) *batch {
	b := &batch{in: in, maxInFlight: in.MaxInFlight, continueAfter: in.ContinueAfter,
		total: len(in.Done) + len(in.Sectors), prog: map[string]*job.Progress{},
		results:    append([]job.SectorResult(nil), in.Done...),
		progressCh: workflow.GetSignalChannel(ctx, job.SignalProgress),
		cancelCh:   workflow.GetSignalChannel(ctx, job.SignalCancel),
		deadlineCh: workflow.GetSignalChannel(ctx, job.SignalDeadline),
		running:    map[string]job.Ref{}, lapsed: map[string]bool{},
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
	for {
		var d job.Deadline
		if !b.deadlineCh.ReceiveAsync(&d) {
			break
		}
		b.extend(ctx, d.At)
	}
}

func (b *batch) receiveDeadline(ctx workflow.Context, c workflow.ReceiveChannel) {
	var d job.Deadline
	c.Receive(ctx, &d)
	b.extend(ctx, d.At)
}

// extend moves the batch's deadline to at where that is later (zero: no
// deadline). The sectors running are told; those that lapsed in this run
// are proved again while the new deadline has not passed. Their inputs
// are still stored: a lapsed sector does not drop its input (retention
// does, once no job of its identity runs).
func (b *batch) extend(ctx workflow.Context, at time.Time) {
	d := job.LaterDeadline(b.in.Deadline, at)
	if d.Equal(b.in.Deadline) {
		return
	}
	workflow.GetLogger(ctx).Info("deadline extended by a caller joining", "batch", b.in.BatchID, "from", b.in.Deadline, "to", d)
	b.in.Deadline = d
	ids := make([]string, 0, len(b.running))
	for id := range b.running {
		ids = append(ids, id)
	}
	sort.Strings(ids) // a deterministic order of signals
	for _, id := range ids {
		// Not waited for: a sector that ended meanwhile has its result
		// in the selector already.
		workflow.SignalExternalWorkflow(ctx, job.SectorWorkflowID(b.running[id]), "", job.SignalDeadline, job.Deadline{At: d})
	}
	if b.canceled || !b.due(ctx) || len(b.lapsed) == 0 {
		return
	}
	kept := b.results[:0]
	for i, r := range b.results {
		if id := r.Ref.Identity(); b.lapsed[id] {
			delete(b.lapsed, id)
			b.again = append(b.again, rerun{ref: r.Ref, seq: len(b.in.Done) + i})
			b.prog[id].Status = job.StatusPending
			continue
		}
		kept = append(kept, r)
	}
	b.results = kept
}

// due reports whether the batch's deadline is still ahead (or none).
func (b *batch) due(ctx workflow.Context) bool {
	return b.in.Deadline.IsZero() || b.in.Deadline.After(workflow.Now(ctx))
}

// pending is how many sectors wait to start.
func (b *batch) pending() int { return len(b.again) + len(b.in.Sectors) - b.next }

func (b *batch) canStart() bool {
	return !b.canceled && b.inFlight < b.maxInFlight && b.pending() > 0 && b.started < b.continueAfter
}

// startNext takes the next sector: first its stored C2 is looked up and
// checked (a sector proved earlier, by any batch, is reported, not proved
// again); then, unless it was valid, the sector's workflow is started.
// Results are recorded as the selector delivers them.
func (b *batch) startNext(ctx, childCtx workflow.Context, sel workflow.Selector) {
	var ref job.Ref
	var seq int
	if len(b.again) > 0 {
		ref, seq = b.again[0].ref, b.again[0].seq
		b.again = b.again[1:]
	} else {
		ref, seq = b.in.Sectors[b.next], len(b.in.Done)+b.next
		b.next++
	}
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
	deadline := b.in.Deadline
	f := workflow.ExecuteChildWorkflow(cctx, job.SectorWorkflowName, job.SectorInput{
		BatchID: b.in.BatchID, Order: job.DeviceOrder{Priority: b.in.Priority, Submitted: b.in.Submitted, Seq: seq}, Ref: ref,
		PartitionRetries: b.in.PartitionRetries, HostLossRetries: b.in.HostLossRetries, Timeouts: b.in.Timeouts, Deadline: deadline})
	id := ref.Identity()
	b.running[id] = ref
	sel.AddFuture(f, func(f workflow.Future) {
		b.inFlight--
		delete(b.running, id)
		r, lapsed := b.sectorResult(ctx, ref, start, f)
		if lapsed && !b.canceled && !b.in.Deadline.Equal(deadline) && b.due(ctx) {
			// It lapsed under the deadline it started with, before the
			// later one reached it: proved again.
			b.again = append(b.again, rerun{ref: ref, seq: seq})
			b.prog[id].Status = job.StatusPending
			return
		}
		b.record(r)
		if lapsed {
			b.lapsed[id] = true
		}
	})
}

// sectorResult reads a finished sector workflow's outcome, and whether it
// failed on its deadline.
func (b *batch) sectorResult(ctx workflow.Context, ref job.Ref, start time.Time, f workflow.Future) (job.SectorResult, bool) {
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
	return r, err != nil && isType(err, job.ErrDeadlinePassed)
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
	next.Sectors = nil
	for _, a := range b.again {
		next.Sectors = append(next.Sectors, a.ref)
	}
	next.Sectors = append(next.Sectors, b.in.Sectors[b.next:]...)
	next.Done = b.results
	next.Canceled = b.canceled
	return next
}

// finish reports every sector, the ones a cancel kept from starting too.
func (b *batch) finish() job.BatchResult {
	for _, a := range b.again {
		b.results = append(b.results, job.SectorResult{Ref: a.ref, Status: job.StatusCanceled})
		b.prog[a.ref.Identity()].Status = job.StatusCanceled
	}
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
