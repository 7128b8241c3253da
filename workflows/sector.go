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
	t := in.Timeouts.WithDefaults()
	if in.Order.Submitted.IsZero() { // a sector started on its own
		in.Order.Submitted = workflow.GetInfo(ctx).WorkflowStartTime
	}
	retries := partitionRetries{logical: in.PartitionRetries, hostLoss: in.HostLossRetries}
	if retries.logical <= 0 {
		retries.logical = 3
	}
	if retries.hostLoss <= 0 {
		retries.hostLoss = 20
	}
	res := job.SectorResult{ProverID: in.ProverID, SectorID: in.SectorID, C1Digest: in.C1Digest, Status: job.StatusRunning, Started: workflow.Now(ctx)}
	prog := job.Progress{ProverID: in.ProverID, SectorID: in.SectorID, C1Digest: in.C1Digest, Status: job.StatusRunning}
	if err := workflow.SetQueryHandler(ctx, job.QueryProgress, func() (job.Progress, error) { return prog, nil }); err != nil {
		return res, err
	}
	report := func() { notifyParent(ctx, prog) }
	// Every activity of the sector carries the batch's priority.
	ctx = workflow.WithPriority(ctx, temporal.Priority{PriorityKey: job.TaskPriority(in.Order.Priority)})

	fail := func(status string, err error) (job.SectorResult, error) {
		if status == job.StatusFailed {
			workflow.GetLogger(ctx).Warn("sector failed", "sector", in.SectorRef.String(), "error", err) // the whole chain
		}
		res.Status, res.Error, res.Finished = status, brief(err), workflow.Now(ctx)
		prog.Status = status
		report()
		return res, sectorError(err)
	}

	vctx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		TaskQueue:           job.QueueWorkflow,
		StartToCloseTimeout: 10 * time.Minute,
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 5, NonRetryableErrorTypes: []string{job.ErrBadC1}},
	})
	var v job.ValidateOutput
	if err := workflow.ExecuteActivity(vctx, job.ActValidateC1, in).Get(ctx, &v); err != nil {
		return fail(statusOf(ctx, err), fmt.Errorf("%s: %w", in.SectorRef, err))
	}
	res.Profile = v.Profile
	prog.Partitions = v.Partitions
	res.Partitions = make([]job.PartitionResult, v.Partitions)
	proofs := make([][]byte, v.Partitions)

	var firstErr error
	wg := workflow.NewWaitGroup(ctx)
	pctx, cancelPartitions := workflow.WithCancel(ctx)
	for k := 0; k < v.Partitions; k++ {
		wg.Add(1)
		workflow.Go(pctx, func(gctx workflow.Context) {
			defer wg.Done()
			pr, proof, err := provePartition(gctx, in, k, t, retries)
			res.Partitions[k] = pr
			prog.Resyntheses += max(0, pr.Syntheses-1)
			if err != nil {
				prog.PartitionsFailed++
				if firstErr == nil {
					firstErr = fmt.Errorf("%s partition %d: %w", in.SectorRef, k, err)
					cancelPartitions() // the sector has failed: free the hosts
				}
			} else {
				proofs[k] = proof
				prog.PartitionsDone++
			}
			report()
		})
	}
	wg.Wait(ctx)
	if firstErr != nil {
		return fail(statusOf(ctx, firstErr), firstErr)
	}

	// Canceled before storing: nothing is stored. Once the store starts it
	// runs to its end, even if a cancel arrives meanwhile, and the sector
	// reports what happened: proved (stored) or failed. So a canceled
	// batch's result says exactly which C2s were stored.
	if ctx.Err() != nil {
		return fail(job.StatusCanceled, temporal.NewCanceledError())
	}
	storeCtx, _ := workflow.NewDisconnectedContext(ctx)
	sctx := workflow.WithActivityOptions(storeCtx, workflow.ActivityOptions{
		TaskQueue:           job.QueueWorkflow,
		StartToCloseTimeout: 10 * time.Minute,
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 10, NonRetryableErrorTypes: []string{job.ErrInvalidProof}},
	})
	// The proof validation found, for a sector submitted without one.
	ref := in.SectorRef
	if ref.Profile == "" {
		ref.Profile = v.Profile
	}
	var so job.StoreOutput
	err := workflow.ExecuteActivity(sctx, job.ActStoreC2, job.StoreInput{SectorRef: ref, Proofs: proofs, Partitions: res.Partitions}).Get(ctx, &so)
	if err != nil {
		return fail(job.StatusFailed, fmt.Errorf("%s: store C2: %w", in.SectorRef, err))
	}
	res.C2Key, res.Status, res.Finished = so.C2Key, job.StatusProved, workflow.Now(ctx)
	prog.Status = job.StatusProved
	report()
	return res, nil
}

// provePartition runs one partition to a verified proof, synthesizing again
// (on any host) when the device phase or finalize cannot complete on the
// host that holds the witness.
func provePartition(ctx workflow.Context, in job.SectorInput, k int, t job.Timeouts, retries partitionRetries) (job.PartitionResult, []byte, error) {
	pr := job.PartitionResult{Partition: k}
	logger := workflow.GetLogger(ctx)
	for {
		pr.Syntheses++
		synth := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
			TaskQueue:           job.QueueSynth,
			StartToCloseTimeout: t.Synth,
			HeartbeatTimeout:    t.Heartbeat,
			// A synthesis that completes as the sector is canceled still
			// reports its handle, so its witness is released, not leaked.
			WaitForCancellation: true,
			RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 3, NonRetryableErrorTypes: []string{job.ErrBadC1, job.ErrNoKeys}},
		})
		var so job.SynthOutput
		if err := workflow.ExecuteActivity(synth, job.ActSynthesize, job.SynthInput{SectorRef: in.SectorRef, Partition: k, ClaimWithin: t.HostQueue}).Get(ctx, &so); err != nil {
			pr.Error = brief(err)
			release(ctx, so.Witness) // a completed synthesis reported with the cancel
			if ctx.Err() == nil && hostLost(err) && pr.HostLosses < retries.hostLoss {
				// Every attempt died with its host: the fleet's fault.
				pr.HostLosses++
				logger.Warn("synthesis lost with its host; synthesizing again", "sector", in.SectorID, "partition", k, "error", err)
				continue
			}
			return pr, nil, err
		}
		if ctx.Err() != nil {
			release(ctx, so.Witness)
			return pr, nil, temporal.NewCanceledError()
		}
		pr.Host, pr.SynthMS = so.Witness.Host, so.SynthMS
		hostOpts := func(queue string, startToClose time.Duration, attempts int32) workflow.Context {
			toStart := t.HostQueue
			if queue == job.QueueDevice {
				// The device hosts' shared queue waits for fleet capacity,
				// not for one host: no host-loss timeout there.
				toStart = 0
			}
			return workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
				TaskQueue:              queue,
				ScheduleToStartTimeout: toStart,
				StartToCloseTimeout:    startToClose,
				HeartbeatTimeout:       t.Heartbeat,
				RetryPolicy: &temporal.RetryPolicy{MaximumAttempts: attempts,
					NonRetryableErrorTypes: []string{job.ErrWitnessLost, job.ErrNoKeys}},
			})
		}
		// The device phase consumes the witness: a failed attempt cannot be
		// retried on it, only re-synthesized.
		var do job.DeviceOutput
		order := in.Order
		order.Priority = job.TaskPriority(order.Priority)
		err := workflow.ExecuteActivity(hostOpts(so.Witness.DeviceQueue, t.Device, 1), job.ActDevicePhase,
			job.HandleInput{Witness: so.Witness, SectorRef: in.SectorRef, Order: order, Partition: k}).Get(ctx, &do)
		held := so.Witness // the host holding the witness: it finalizes, and releases on failure
		if err == nil {
			pr.Device, pr.DeviceMS, pr.QueueMS = do.Device, do.DeviceMS, do.QueueMS
			pr.DeviceStart, pr.DeviceEnd = do.Start, do.End
			if do.MovedTo != nil {
				// The witness moved to a device host: the synthesis host
				// drops its spill and budget permit, without delaying finalize.
				rel := startRelease(ctx, so.Witness)
				defer rel.Get(ctx, nil) // settled before the partition reports
				held = *do.MovedTo
				pr.DeviceHost = held.Host
			}
			var fo job.FinalizeOutput
			err = workflow.ExecuteActivity(hostOpts(held.FinalizeQueue, t.Finalize, 3), job.ActFinalize, job.HandleInput{Witness: held}).Get(ctx, &fo)
			if err == nil {
				pr.FinalizeMS, pr.Done, pr.Error, pr.FinalizedAt = fo.FinalizeMS, true, "", workflow.Now(ctx)
				return pr, fo.Proof, nil
			}
		}
		pr.Error = brief(err)
		release(ctx, held)
		if ctx.Err() != nil || temporal.IsCanceledError(err) {
			return pr, nil, err
		}
		if hostLost(err) {
			pr.HostLosses++
			if pr.HostLosses > retries.hostLoss {
				return pr, nil, fmt.Errorf("gave up after %d syntheses, %d lost with their hosts: %w", pr.Syntheses, pr.HostLosses, err)
			}
		} else {
			pr.Failures++
			if pr.Failures >= retries.logical {
				return pr, nil, fmt.Errorf("gave up after %d syntheses, %d failed: %w", pr.Syntheses, pr.Failures, err)
			}
		}
		logger.Warn("partition lost its witness; synthesizing again", "sector", in.SectorRef.String(), "partition", k, "host", so.Witness.Host,
			"failures", pr.Failures, "host_losses", pr.HostLosses, "error", err)
	}
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
	var ae *temporal.ApplicationError
	if errors.As(err, &ae) && ae.Type() == job.ErrHostLost {
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
	dctx = workflow.WithActivityOptions(dctx, workflow.ActivityOptions{
		TaskQueue: w.ControlQueue, ScheduleToCloseTimeout: 30 * time.Second, StartToCloseTimeout: 10 * time.Second,
		RetryPolicy: &temporal.RetryPolicy{MaximumAttempts: 3},
	})
	return workflow.ExecuteActivity(dctx, job.ActRelease, job.HandleInput{Witness: w})
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
