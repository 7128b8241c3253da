// Package workflows holds c2flow's Temporal workflows: deterministic code
// only, no I/O. Activities are called by name (package job), so this
// package does not import their implementation.
package workflows

import (
	"errors"
	"fmt"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/c2flow/c2flow/job"
)

// SectorWorkflow proves one sector: validate its C1, then every partition
// concurrently (synthesize -> device phase -> finalize, on the host that
// synthesized it), then assemble, verify and store the C2. A partition whose
// witness is lost (host gone, device error) is synthesized again, alone; the
// sector fails only when a partition exhausts its retries or the C1 is bad.
func SectorWorkflow(ctx workflow.Context, in job.SectorInput) (job.SectorResult, error) {
	s := newSectorRun(ctx, in)
	if err := workflow.SetQueryHandler(ctx, job.QueryProgress, func() (job.Progress, error) { return s.prog, nil }); err != nil {
		return s.res, err
	}
	// Every activity of the sector carries the batch's priority.
	ctx = workflow.WithPriority(ctx, temporal.Priority{PriorityKey: job.TaskPriority(in.Order.Priority)})
	jctx := s.untilDeadline(ctx)
	v, err := s.validate(jctx)
	if err != nil {
		return s.failed(ctx, err)
	}
	proofs, err := s.provePartitions(jctx, v)
	if err != nil {
		return s.failed(ctx, err)
	}
	// Canceled (or past its deadline) before storing: nothing is stored.
	// Once the store starts it runs to its end, even if a cancel arrives
	// meanwhile, and the sector reports what happened: proved (stored) or
	// failed. So a canceled batch's result says exactly which C2s were
	// stored.
	if jctx.Err() != nil {
		return s.failed(ctx, temporal.NewCanceledError())
	}
	return s.store(ctx, v, proofs)
}

// untilDeadline returns ctx, canceled when the sector's deadline passes
// (s.lapsed then set): its phases stop as for a cancel, before any
// starts, and its witnesses are released on their hosts at once. A
// "deadline" signal (a caller joining with a later deadline, through the
// batch) moves it before it passes.
func (s *sectorRun) untilDeadline(ctx workflow.Context) workflow.Context {
	jctx, cancel := workflow.WithCancel(ctx)
	if !s.in.Deadline.IsZero() && !s.in.Deadline.After(workflow.Now(ctx)) {
		s.lapsed = true
		cancel()
		return jctx
	}
	ch := workflow.GetSignalChannel(ctx, job.SignalDeadline)
	workflow.Go(ctx, func(gctx workflow.Context) {
		for gctx.Err() == nil {
			sel := workflow.NewSelector(gctx)
			fired := false
			stop := func() {}
			if !s.in.Deadline.IsZero() {
				var tctx workflow.Context
				tctx, stop = workflow.WithCancel(gctx)
				sel.AddFuture(workflow.NewTimer(tctx, s.in.Deadline.Sub(workflow.Now(gctx))), func(f workflow.Future) {
					fired = f.Get(gctx, nil) == nil
				})
			}
			moved := false
			sel.AddReceive(ch, func(c workflow.ReceiveChannel, _ bool) {
				var d job.Deadline
				c.Receive(gctx, &d)
				if later := job.LaterDeadline(s.in.Deadline, d.At); !later.Equal(s.in.Deadline) {
					workflow.GetLogger(gctx).Info("deadline extended", "sector", s.in.Ref.String(), "from", s.in.Deadline, "to", later)
					s.in.Deadline, moved = later, true
				}
			})
			sel.Select(gctx)
			if fired {
				s.lapsed = true
				cancel()
				return
			}
			if moved {
				stop() // the old timer; the loop sets the new one
			}
		}
	})
	return jctx
}

// failed ends the sector on err: past its deadline as DeadlinePassed,
// whatever the cancel that caused made of its phases' errors.
func (s *sectorRun) failed(ctx workflow.Context, err error) (job.SectorResult, error) {
	if s.lapsed || isType(err, job.ErrDeadlinePassed) {
		cause := err // a phase that refused: which one
		if s.lapsed {
			cause = nil // the cancel the deadline caused
		}
		s.dropInput(ctx)
		return s.fail(ctx, job.StatusFailed, temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("%s: its deadline passed at %s", s.in.Ref, s.in.Deadline.UTC().Format(time.RFC3339Nano)), job.ErrDeadlinePassed, cause))
	}
	return s.fail(ctx, statusOf(ctx, err), err)
}

// dropInput deleted a lapsed job's stored input (version 1). It no longer
// does: a caller joining with a later deadline runs the sector again
// from the same input, and retention reclaims inputs once no job of their
// identity runs. Histories from before it (no version) replay without
// it, those of version 1 with it.
func (s *sectorRun) dropInput(ctx workflow.Context) {
	if workflow.GetVersion(ctx, "drop-lapsed-input", workflow.DefaultVersion, 2) != 1 {
		return
	}
	dctx, _ := workflow.NewDisconnectedContext(ctx)
	dctx = workflow.WithActivityOptions(dctx, workflow.ActivityOptions{TaskQueue: job.QueueWorkflow, StartToCloseTimeout: 30 * time.Second,
		RetryPolicy: &temporal.RetryPolicy{MaximumAttempts: 3}})
	if err := workflow.ExecuteActivity(dctx, job.ActDropInput, s.in.Ref).Get(dctx, nil); err != nil {
		workflow.GetLogger(ctx).Warn("the lapsed job's input was not dropped", "sector", s.in.Ref.String(), "error", err)
	}
}

// sectorRun is one sector workflow's state: its input, its retry budget
// and timeouts with defaults filled, and the result and progress it
// reports.
type sectorRun struct {
	in      job.SectorInput
	t       job.Timeouts
	retries partitionRetries
	res     job.SectorResult
	prog    job.Progress
	// lapsed is set when the sector's deadline passed.
	lapsed bool
}

func newSectorRun(ctx workflow.Context, in job.SectorInput) *sectorRun {
	if in.Order.Submitted.IsZero() { // a sector started on its own
		in.Order.Submitted = workflow.GetInfo(ctx).WorkflowStartTime
	}
	return &sectorRun{
		in: in, t: in.Timeouts.WithDefaults(), retries: retriesOf(in),
		res:  job.SectorResult{Ref: in.Ref, Status: job.StatusRunning, Started: workflow.Now(ctx)},
		prog: job.Progress{Ref: in.Ref, Status: job.StatusRunning},
	}
}

// report signals the sector's progress to its batch.
func (s *sectorRun) report(ctx workflow.Context) { notifyParent(ctx, s.prog) }

// fail ends the sector with status and err (the error's type kept).
func (s *sectorRun) fail(ctx workflow.Context, status string, err error) (job.SectorResult, error) {
	if status == job.StatusFailed {
		workflow.GetLogger(ctx).Warn("sector failed", "sector", s.in.Ref.String(), "error", err) // the whole chain
	}
	s.res.Status, s.res.Error, s.res.Finished = status, brief(err), workflow.Now(ctx)
	s.prog.Status = status
	s.report(ctx)
	return s.res, sectorError(err)
}

// validate checks the sector's C1 (ActValidateC1): its proof and
// partition count.
func (s *sectorRun) validate(ctx workflow.Context) (job.ValidateOutput, error) {
	var v job.ValidateOutput
	if err := workflow.ExecuteActivity(workflow.WithActivityOptions(ctx, validateOptions(s.t)), job.ActValidateC1, s.in).Get(ctx, &v); err != nil {
		return v, fmt.Errorf("%s: %w", s.in.Ref, err)
	}
	s.res.Proof = v.Proof
	s.prog.Partitions = v.Partitions
	return v, nil
}

// provePartitions proves every partition concurrently and returns their
// proofs; the first failure cancels the others.
func (s *sectorRun) provePartitions(ctx workflow.Context, v job.ValidateOutput) ([][]byte, error) {
	s.res.Partitions = make([]job.PartitionResult, v.Partitions)
	proofs := make([][]byte, v.Partitions)
	var firstErr error
	wg := workflow.NewWaitGroup(ctx)
	pctx, cancelPartitions := workflow.WithCancel(ctx)
	for k := 0; k < v.Partitions; k++ {
		wg.Add(1)
		workflow.Go(pctx, func(gctx workflow.Context) {
			defer wg.Done()
			p := &partitionRun{in: s.in, deadline: &s.in.Deadline, t: s.t, retries: s.retries, pr: job.PartitionResult{Partition: k}}
			proof, err := p.run(gctx)
			s.res.Partitions[k] = p.pr
			s.prog.Resyntheses += max(0, p.pr.Syntheses-1)
			if err != nil {
				s.prog.PartitionsFailed++
				if firstErr == nil {
					firstErr = fmt.Errorf("%s partition %d: %w", s.in.Ref, k, err)
					cancelPartitions() // the sector has failed: free the hosts
				}
			} else {
				proofs[k] = proof
				s.prog.PartitionsDone++
			}
			s.report(ctx)
		})
	}
	wg.Wait(ctx)
	return proofs, firstErr
}

// store assembles, verifies and writes the C2 (ActStoreC2), disconnected
// from a cancel that arrives meanwhile.
func (s *sectorRun) store(ctx workflow.Context, v job.ValidateOutput, proofs [][]byte) (job.SectorResult, error) {
	storeCtx, _ := workflow.NewDisconnectedContext(ctx)
	// The proof validation found, for a sector submitted without one.
	ref := s.in.Ref
	if ref.Proof == "" {
		ref.Proof = v.Proof
	}
	var so job.StoreOutput
	err := workflow.ExecuteActivity(workflow.WithActivityOptions(storeCtx, storeOptions(s.t)), job.ActStoreC2,
		job.StoreInput{Ref: ref, Proofs: proofs, Partitions: s.res.Partitions}).Get(ctx, &so)
	if err != nil {
		return s.fail(ctx, job.StatusFailed, fmt.Errorf("%s: store C2: %w", s.in.Ref, err))
	}
	s.res.C2Key, s.res.Status, s.res.Finished = so.C2Key, job.StatusProved, workflow.Now(ctx)
	s.prog.Status = job.StatusProved
	s.report(ctx)
	return s.res, nil
}

// partitionRun is one partition's way to a verified proof: syntheses
// (again, on any host, when the device phase or finalize cannot complete
// on the host that holds the witness) counted against the sector's
// budget.
type partitionRun struct {
	in job.SectorInput
	// deadline is the sector's, moved by a joiner's later one: each phase
	// started takes it as it is then.
	deadline *time.Time
	t        job.Timeouts
	retries  partitionRetries
	pr       job.PartitionResult
	// moved holds the releases of witnesses that moved to a device host,
	// settled before the partition reports.
	moved []workflow.Future
}

// run proves the partition and returns its proof.
func (p *partitionRun) run(ctx workflow.Context) ([]byte, error) {
	defer func() {
		for i := len(p.moved) - 1; i >= 0; i-- {
			p.moved[i].Get(ctx, nil)
		}
	}()
	logger := workflow.GetLogger(ctx)
	k := p.pr.Partition
	for {
		so, err := p.synthesize(ctx)
		if err != nil {
			p.pr.Error = brief(err)
			release(ctx, so.Witness) // a completed synthesis reported with the cancel
			if ctx.Err() == nil && hostLost(err) && p.pr.HostLosses < p.retries.hostLoss {
				// Every attempt died with its host: the fleet's fault.
				p.pr.HostLosses++
				logger.Warn("synthesis lost with its host; synthesizing again", "sector", p.in.SectorID, "partition", k, "error", err)
				continue
			}
			return nil, err
		}
		if ctx.Err() != nil {
			release(ctx, so.Witness)
			return nil, temporal.NewCanceledError()
		}
		p.pr.Host, p.pr.SynthMS = so.Witness.Host, so.SynthMS
		proof, held, err := p.prove(ctx, so.Witness)
		if err == nil {
			return proof, nil
		}
		p.pr.Error = brief(err)
		p.releaseFailed(ctx, held, err)
		if ctx.Err() != nil || temporal.IsCanceledError(err) || isType(err, job.ErrDeadlinePassed) {
			return nil, err
		}
		if err := p.count(err); err != nil {
			return nil, err
		}
		logger.Warn("partition lost its witness; synthesizing again", "sector", p.in.Ref.String(), "partition", k, "host", so.Witness.Host,
			"failures", p.pr.Failures, "host_losses", p.pr.HostLosses, "error", err)
	}
}

// versionLostHostRelease gates releaseFailed's not waiting for a lost
// host: histories recorded before it waited for that release.
const versionLostHostRelease = "release-lost-host-unawaited"

// releaseFailed tells the host holding a failed attempt's witness to drop
// it. A host presumed dead (hostLost) is not waited for: its control queue
// has no poller, so the release could only time out (releaseOptions, 30 s),
// and the partition must be synthesized again within its heartbeat
// timeout (a WinningPoSt took 41 s: 10 s of heartbeat, 30 s of this wait).
// A host that does live drops the witness itself: an abandoned device
// phase drops it, an unclaimed one goes at its claim deadline.
func (p *partitionRun) releaseFailed(ctx workflow.Context, w job.WitnessLocation, err error) {
	if w.ControlQueue != "" && hostLost(err) &&
		workflow.GetVersion(ctx, versionLostHostRelease, workflow.DefaultVersion, 1) == 1 {
		startRelease(ctx, w)
		return
	}
	release(ctx, w)
}

// synthesize runs one synthesis (ActSynthesize) on any host with room.
func (p *partitionRun) synthesize(ctx workflow.Context) (job.SynthOutput, error) {
	p.pr.Syntheses++
	var so job.SynthOutput
	err := workflow.ExecuteActivity(workflow.WithActivityOptions(ctx, synthOptions(p.t, p.in.Order.Priority)), job.ActSynthesize,
		job.SynthInput{Ref: p.in.Ref, Partition: p.pr.Partition, ClaimWithin: p.t.HostQueue, Deadline: *p.deadline}).Get(ctx, &so)
	return so, err
}

// prove runs the device phase and finalize on the witness w and returns
// the proof, or the error and the witness's location (where it moved, if
// it did), to be released. The device phase consumes the witness: a
// failed attempt cannot be retried on it, only re-synthesized.
func (p *partitionRun) prove(ctx workflow.Context, w job.WitnessLocation) ([]byte, job.WitnessLocation, error) {
	var do job.DeviceOutput
	order := p.in.Order
	order.Priority = job.TaskPriority(order.Priority)
	err := workflow.ExecuteActivity(workflow.WithActivityOptions(ctx, hostOptions(w.DeviceQueue, p.t.Device, 1, p.t)), job.ActDevicePhase,
		job.HandleInput{Witness: w, Ref: p.in.Ref, Order: order, Partition: p.pr.Partition, Deadline: *p.deadline}).Get(ctx, &do)
	if err != nil {
		return nil, w, err
	}
	p.pr.Device, p.pr.DeviceMS, p.pr.QueueMS = do.Device, do.DeviceMS, do.QueueMS
	p.pr.DeviceStart, p.pr.DeviceEnd = do.Start, do.End
	held := w // the host holding the witness: it finalizes, and releases on failure
	if do.MovedTo != nil {
		// The witness moved to a device host: the synthesis host drops
		// its spill and budget permit, without delaying finalize.
		p.moved = append(p.moved, startRelease(ctx, w))
		held = *do.MovedTo
		p.pr.DeviceHost = held.Host
	}
	var fo job.FinalizeOutput
	if err := workflow.ExecuteActivity(workflow.WithActivityOptions(ctx, hostOptions(held.FinalizeQueue, p.t.Finalize, p.t.FinalizeAttempts, p.t)), job.ActFinalize,
		job.HandleInput{Witness: held, Ref: p.in.Ref, Partition: p.pr.Partition, Deadline: *p.deadline}).Get(ctx, &fo); err != nil {
		return nil, held, err
	}
	p.pr.FinalizeMS, p.pr.Done, p.pr.Error, p.pr.FinalizedAt = fo.FinalizeMS, true, "", workflow.Now(ctx)
	return fo.Proof, held, nil
}

// count charges a lost witness to the partition's budget: to the host-loss
// budget when its host went away, else to its own; past either it returns
// the error that ends the partition.
func (p *partitionRun) count(err error) error {
	if hostLost(err) {
		p.pr.HostLosses++
		if p.pr.HostLosses > p.retries.hostLoss {
			return fmt.Errorf("gave up after %d syntheses, %d lost with their hosts: %w", p.pr.Syntheses, p.pr.HostLosses, err)
		}
		return nil
	}
	p.pr.Failures++
	if p.pr.Failures >= p.retries.logical {
		return fmt.Errorf("gave up after %d syntheses, %d failed: %w", p.pr.Syntheses, p.pr.Failures, err)
	}
	return nil
}

// partitionRetries bounds a partition's syntheses: logical counts its own
// failures, hostLoss the attempts lost with a dead host.
type partitionRetries struct{ logical, hostLoss int }

// hostLost says whether an activity failed because its host went away or
// gave up: it stopped heartbeating, nothing took the task from the host's
// queue in time (a killed or drained worker, whose queues nobody polls), or
// the worker canceled it itself (job.ErrHostLost). A witness missing on a
// host that still answers is the partition's failure.
func hostLost(err error) bool {
	if isType(err, job.ErrHostLost) {
		return true
	}
	var te *temporal.TimeoutError
	if !errors.As(err, &te) {
		return false
	}
	switch te.TimeoutType() {
	case enumspb.TIMEOUT_TYPE_HEARTBEAT, enumspb.TIMEOUT_TYPE_SCHEDULE_TO_START:
		return true
	}
	return false
}

// isType says whether err is, or wraps, an application error of type t.
func isType(err error, t string) bool {
	var ae *temporal.ApplicationError
	return errors.As(err, &ae) && ae.Type() == t
}

// sectorError keeps the type of the application error that failed the
// sector (BadC1, InvalidProof, ...) on the workflow's own error, so callers
// can tell a bad input from a failure of the fleet.
func sectorError(err error) error {
	// The message is the one line people read (brief); the chain is in
	// the sector's log line, not repeated in the error.
	var ae *temporal.ApplicationError
	if errors.As(err, &ae) {
		return temporal.NewNonRetryableApplicationError(brief(err), ae.Type(), nil)
	}
	var ce *temporal.CanceledError
	if errors.As(err, &ce) {
		return err
	}
	return temporal.NewNonRetryableApplicationError(brief(err), "SectorFailed", nil)
}

// release tells the host holding a partition's witness to drop it, so a
// failed or canceled partition gives its budget back at once. Best effort:
// a dead host needs no release, and an unreleased witness expires.
func release(ctx workflow.Context, w job.WitnessLocation) {
	if w.ControlQueue == "" {
		return
	}
	startRelease(ctx, w).Get(ctx, nil)
}

// startRelease schedules a release and returns its future (errors are
// ignored: see release).
func startRelease(ctx workflow.Context, w job.WitnessLocation) workflow.Future {
	dctx, _ := workflow.NewDisconnectedContext(ctx)
	return workflow.ExecuteActivity(workflow.WithActivityOptions(dctx, releaseOptions(w.ControlQueue)), job.ActRelease, job.HandleInput{Witness: w})
}

func statusOf(ctx workflow.Context, err error) string {
	var ce *temporal.CanceledError
	if errors.As(err, &ce) || ctx.Err() != nil {
		return job.StatusCanceled
	}
	return job.StatusFailed
}

// notifyParent signals progress to the batch that started this sector, if any.
func notifyParent(ctx workflow.Context, p job.Progress) {
	parent := workflow.GetInfo(ctx).ParentWorkflowExecution
	if parent == nil {
		return
	}
	// Fire and forget: progress is advisory; a batch that is gone must not
	// fail its sectors. Disconnected so it is sent even while canceling.
	dctx, _ := workflow.NewDisconnectedContext(ctx)
	workflow.SignalExternalWorkflow(dctx, parent.ID, "", job.SignalProgress, p)
}
