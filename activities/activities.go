package activities

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/c2flow/c2flow/gpu"
	"github.com/c2flow/c2flow/internal/yield"
	"github.com/c2flow/c2flow/job"
	"github.com/c2flow/c2flow/metrics"
)

// Host is one worker process's activities (job.Activities) and their
// state. The activities are thin: they find the witness, call a phase
// (Phases) and report; the Host keeps the witness table, the budget, the
// spill, expiry, heartbeats, stats and fault hooks.
type Host struct {
	ID     string // unique per process: names the host's task queues
	Phases Phases
	Slots  *gpu.Slots
	Budget *Budget
	// Urgent is the reserve of priority-1 syntheses (job.QueueSynthUrgent):
	// nil, they share Budget.
	Urgent *Budget
	Log    *slog.Logger
	// HeartbeatEvery is the shortest interval of heartbeats from long
	// activities.
	HeartbeatEvery time.Duration
	// Heartbeats, if set (the worker's client), takes the heartbeats of
	// long activities directly, so only Temporal ends an attempt (see
	// heartbeat); nil: through the SDK (activity test environments).
	Heartbeats Heartbeater
	// ClockOffset, if set, is how far this host's clock runs ahead of
	// Temporal's (tests); nil: measured at each activity's start
	// (hostDeadline).
	ClockOffset func(context.Context) time.Duration
	// Hooks are fault-injection points for tests; nil in production.
	Hooks  *Hooks
	paused atomic.Bool
	// Metrics, if set, records phase durations, retries and failures.
	Metrics *metrics.Metrics
	// Gate is the host's urgency gate: priority-1 work holds it while it
	// runs, and lower-priority synthesis, device phases and finalizes
	// yield at their checkpoints meanwhile, so the urgent work has the
	// host's cores. NewHost makes one; nil: nothing yields.
	Gate *yield.Gate
	// ArrivalOrder serves devices first come instead of oldest sector
	// first (the simulation's comparison of orderings).
	ArrivalOrder bool
	// spill carries witnesses between synthesis-only and device hosts;
	// spillOut makes this host's syntheses spill (see SetSpill).
	spill    Spill
	spillOut bool
	// finalizeSlots bounds concurrent finalizes (nil: unbounded), waiters
	// served by priority.
	finalizeSlots *prioSlots
	// validateSlots bounds concurrent C1 validations, likewise.
	validateSlots *prioSlots

	ws      *witnesses
	statsMu sync.Mutex
	stats   HostStats
}

var _ job.Activities = (*Host)(nil)

// HostStats counts what a host did.
type HostStats struct {
	Validated    int `json:"validated"`
	Syntheses    int `json:"syntheses"`
	DevicePhases int `json:"device_phases"`
	Finalized    int `json:"finalized"`
	Stored       int `json:"stored"`
	WitnessLost  int `json:"witness_lost"`
	BadC1        int `json:"bad_c1"`
	Invalid      int `json:"invalid_proofs"`
	Expired      int `json:"expired_witnesses"`
	// Unclaimed witnesses were dropped because no device phase took them
	// in time: their synthesis's completion never reached the workflow.
	Unclaimed int `json:"unclaimed_witnesses,omitempty"`
	// Replayed finalizes answered a retry with the proof an earlier,
	// unreported attempt made.
	Replayed int `json:"finalize_replayed,omitempty"`
	Spilled  int `json:"spilled,omitempty"` // witnesses written for device hosts
	Loaded   int `json:"loaded,omitempty"`  // spilled witnesses proved here
	// Released witnesses were dropped at their workflow's request (Release:
	// their partition failed, was canceled, or its witness moved on).
	Released int `json:"released_witnesses,omitempty"`
	// Lapsed witnesses were dropped because their job's deadline passed:
	// held ones at the deadline, from the host itself, and syntheses that
	// finished past it, never stored.
	Lapsed int `json:"lapsed_witnesses,omitempty"`
	// Retried syntheses made a witness beside one an earlier attempt of
	// the same activity made and still holds (Temporal gave up on that
	// attempt, a heartbeat timeout on a loaded host, after it had
	// synthesized): the earlier witness ends Unclaimed. An attempt that
	// was given up before it synthesized made nothing and is not counted.
	// A synthesis-only host counts every retry it spills (its spills are
	// not held here).
	Retried int `json:"synth_retries,omitempty"`
}

// NewHost returns a host running phases on slots within budget.
func NewHost(id string, phases Phases, slots *gpu.Slots, budget *Budget, log *slog.Logger) *Host {
	h := &Host{ID: id, Phases: phases, Slots: slots, Budget: budget, Log: log.With("host", id),
		HeartbeatEvery: 500 * time.Millisecond, ws: &witnesses{m: map[string]*witness{}, budget: budget, log: log},
		validateSlots: newPrioSlots(2), Gate: yield.New(0, 0)}
	h.ws.onLapse = func(w *witness) { h.lapsed(w.ref, w.k, w.deadline, "held") }
	return h
}

// gpuOrder is a device phase's claim on a device (gpu.Order), from its
// job's order (job.DeviceOrder) and its partition.
func gpuOrder(in job.HandleInput) gpu.Order {
	o := gpu.Order{Priority: in.Order.Priority, Seq: in.Order.Seq, Partition: in.Partition}
	if !in.Order.Submitted.IsZero() {
		o.Submitted = in.Order.Submitted.UnixNano()
	}
	return o
}

// SetFinalizeSlots bounds the finalizes running at once on this host
// (CPU work); more wait inside the activity, heartbeating.
func (h *Host) SetFinalizeSlots(n int) {
	if n > 0 {
		h.finalizeSlots = newPrioSlots(n)
	}
}

// SetSpill sets where witnesses travel between synthesis-only and device
// hosts; with out, this host's syntheses spill there (a synthesis-only
// host) instead of waiting for its own device phase.
func (h *Host) SetSpill(s Spill, out bool) {
	h.spill, h.spillOut, h.ws.spill = s, out, s
}

// Witnesses is the number of partitions whose witness is in this host's
// memory (synthesized, not yet finalized).
func (h *Host) Witnesses() int { return h.ws.len() }

// Stats returns the host's counters.
func (h *Host) Stats() HostStats {
	h.statsMu.Lock()
	defer h.statsMu.Unlock()
	return h.stats
}

func (h *Host) count(f func(*HostStats)) {
	h.statsMu.Lock()
	f(&h.stats)
	h.statsMu.Unlock()
}

// ExpireWitnesses drops witnesses idle for longer than ttl, until ctx ends.
func (h *Host) ExpireWitnesses(ctx context.Context, ttl time.Duration) {
	t := time.NewTicker(min(ttl/4, 10*time.Second))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			expired, unclaimed := h.ws.expire(ttl)
			if expired > 0 {
				h.count(func(s *HostStats) { s.Expired += expired })
				h.Log.Warn("dropped expired witnesses", "count", expired, "ttl", ttl)
			}
			if unclaimed > 0 {
				h.count(func(s *HostStats) { s.Unclaimed += unclaimed })
				h.Log.Warn("dropped witnesses no device phase claimed: their syntheses' completions were lost", "count", unclaimed)
			}
		}
	}
}

// observe records an activity's attempt and outcome; it returns err.
func (h *Host) observe(ctx context.Context, name string, err error) error {
	err = hostCanceled(ctx, h.ID, name, err)
	if h.Metrics == nil {
		return err
	}
	if activity.IsActivity(ctx) && activity.GetInfo(ctx).Attempt > 1 {
		h.Metrics.Retries.WithLabelValues(name).Inc()
	}
	if err != nil {
		kind := "other"
		var ae *temporal.ApplicationError
		switch {
		case errors.As(err, &ae) && ae.Type() != "":
			kind = ae.Type()
		case errors.Is(err, context.Canceled):
			kind = "canceled"
		}
		h.Metrics.Failures.WithLabelValues(name, kind).Inc()
	}
	return err
}

// hostCanceled names an activity canceled on this worker, not by Temporal
// (the SDK gave up on a heartbeat RPC of a starved host, the worker is
// shutting down): the host's trouble, not the partition's, so the workflow
// counts it on the host-loss budget (job.ErrHostLost). A cancel Temporal
// delivered (the workflow asked for it) is left as it is.
func hostCanceled(ctx context.Context, host, name string, err error) error {
	if err == nil || ctx.Err() != context.Canceled || !errors.Is(err, context.Canceled) || temporal.IsCanceledError(context.Cause(ctx)) {
		return err
	}
	return temporal.NewApplicationErrorWithCause(fmt.Sprintf("%s canceled on host %s: %v", name, host, context.Cause(ctx)), job.ErrHostLost, err)
}

func (h *Host) phase(name string, d time.Duration) {
	if h.Metrics != nil {
		h.Metrics.Phase.WithLabelValues(name).Observe(d.Seconds())
	}
}

// ValidateC1 is the ValidateC1 activity: strict decoding and native
// verification of a sector's C1 before any synthesis.
func (h *Host) ValidateC1(ctx context.Context, in job.SectorInput) (job.ValidateOutput, error) {
	ctx, stop := h.heartbeat(ctx, nil)
	defer stop()
	out, err := h.validateC1(ctx, in)
	return out, h.observe(ctx, job.ActValidateC1, err)
}

func (h *Host) validateC1(ctx context.Context, in job.SectorInput) (job.ValidateOutput, error) {
	op := "validate " + in.Ref.String()
	in.Deadline = h.hostDeadline(ctx, in.Deadline)
	ctx, cancel, err := untilDeadline(ctx, in.Deadline, op)
	if err != nil {
		return job.ValidateOutput{}, err
	}
	defer cancel()
	out, err := h.validate(ctx, in)
	return out, overDeadline(ctx, in.Deadline, op, err)
}

// urgentPolicy is a Phases that knows which proofs' kinds may take
// priority 1 (ProverPhases, by their schemes' policies).
type urgentPolicy interface {
	// UrgentProof says whether proof's kind is urgent; known is false
	// where no kind declares a policy for proof (the test scheme's).
	UrgentProof(proof string) (urgent, known bool)
}

func (h *Host) validate(ctx context.Context, in job.SectorInput) (job.ValidateOutput, error) {
	// Priority 1, the urgent lanes, is the urgent kinds' alone, whoever
	// started the batch (the gateway and submit refuse it too; a batch
	// started on Temporal directly is refused here, before any work).
	if job.TaskPriority(in.Order.Priority) == job.PriorityUrgent {
		if up, ok := h.Phases.(urgentPolicy); ok {
			if urgent, known := up.UrgentProof(in.Ref.Proof); known && !urgent {
				return job.ValidateOutput{}, temporal.NewNonRetryableApplicationError(fmt.Sprintf(
					"validate %s: priority %d is the urgent kinds' alone (WinningPoSt), and %s is not one: not proved", in.Ref, job.PriorityUrgent, in.Ref.Proof), job.ErrBadPriority, nil)
			}
		}
	}
	// A few validations at once: each holds a whole C1 and its decoding.
	// Priority 1 takes no slot: it never waits behind a batch of PoRep's.
	if p := job.TaskPriority(in.Order.Priority); p != job.PriorityUrgent {
		if err := h.validateSlots.acquire(ctx, p); err != nil {
			return job.ValidateOutput{}, err
		}
		defer h.validateSlots.release()
	}
	ctx, done := h.urgency(ctx, in.Order.Priority)
	defer done()
	if err := yield.Point(ctx); err != nil {
		return job.ValidateOutput{}, err
	}
	out, err := h.Phases.Validate(ctx, in.Ref)
	if err != nil {
		if isAppError(err, job.ErrBadC1) {
			h.count(func(s *HostStats) { s.BadC1++ })
		}
		return job.ValidateOutput{}, err
	}
	h.count(func(s *HostStats) { s.Validated++ })
	return out, nil
}

// async runs f in a goroutine and returns its result, or ctx's error as
// soon as ctx ends: cancellation is honoured at once, though f (an MSM
// cannot be interrupted) runs on. after, if set, runs once f has returned,
// abandoned or not, so state f uses is released only when f is done.
func async[T any](ctx context.Context, f func() (T, error), after func(v T, err error, abandoned bool)) (T, error) {
	type result struct {
		v   T
		err error
	}
	ch := make(chan result, 1)
	go func() {
		v, err := f()
		ch <- result{v, err}
	}()
	select {
	case r := <-ch:
		if after != nil {
			after(r.v, r.err, false)
		}
		return r.v, r.err
	case <-ctx.Done():
		go func() {
			r := <-ch
			if after != nil {
				after(r.v, r.err, true)
			}
		}()
		var zero T
		return zero, ctx.Err()
	}
}

// Synthesize is the Synthesize activity: it solves a partition's circuit
// and keeps the witness in this host's memory (or spills it, on a
// synthesis-only host). It runs on the synthesis queue, whose slots are the
// host's Budget.
func (h *Host) Synthesize(ctx context.Context, in job.SynthInput) (job.SynthOutput, error) {
	// The ordinary queue is priority 2 and below's (job.SynthQueue).
	out, err := h.synthesizeWithin(ctx, in, h.Budget, job.PriorityUrgent+1)
	return out, h.observe(ctx, job.ActSynthesize, err)
}

// SynthesizeUrgent is the Synthesize activity on the urgent synthesis
// queue: the same synthesis within the Urgent reserve. A partition larger
// than the whole reserve (a priority-1 32GiB PoRep) waits for the main
// budget instead, as it would on the ordinary queue.
func (h *Host) SynthesizeUrgent(ctx context.Context, in job.SynthInput) (job.SynthOutput, error) {
	b := h.urgentBudget()
	if n, err := h.Phases.PartitionBytes(ctx, in.Ref); err == nil && !b.fits(n) {
		b = h.Budget
	}
	out, err := h.synthesizeWithin(ctx, in, b, job.PriorityUrgent)
	return out, h.observe(ctx, job.ActSynthesize, err)
}

func (h *Host) urgentBudget() *Budget {
	if h.Urgent != nil {
		return h.Urgent
	}
	return h.Budget
}

// urgency marks ctx as work at priority: priority 1 holds the host's
// gate until done is called, anything else yields to it at checkpoints.
func (h *Host) urgency(ctx context.Context, priority int) (_ context.Context, done func()) {
	if h.Gate == nil {
		return ctx, func() {}
	}
	if job.TaskPriority(priority) == job.PriorityUrgent {
		return ctx, h.Gate.Hold()
	}
	return yield.Yielding(ctx, h.Gate), func() {}
}

// synthesizeWithin is synthesize under the activity's heartbeat.
func (h *Host) synthesizeWithin(ctx context.Context, in job.SynthInput, budget *Budget, priority int) (job.SynthOutput, error) {
	t0 := time.Now()
	ctx, stop := h.heartbeat(ctx, func() any {
		return fmt.Sprintf("synthesizing %d/%d for %v", in.SectorID, in.Partition, time.Since(t0).Round(time.Second))
	})
	defer stop()
	op := fmt.Sprintf("synthesize %s partition %d", in.Ref, in.Partition)
	in.Deadline = h.hostDeadline(ctx, in.Deadline)
	ctx, cancel, err := untilDeadline(ctx, in.Deadline, op)
	if err != nil {
		return job.SynthOutput{}, err
	}
	defer cancel()
	out, err := h.synthesize(ctx, in, budget, priority)
	return out, overDeadline(ctx, in.Deadline, op, err)
}

func (h *Host) synthesize(ctx context.Context, in job.SynthInput, budget *Budget, priority int) (job.SynthOutput, error) {
	if err := h.pause(ctx, "synth"); err != nil {
		return job.SynthOutput{}, err
	}
	// The partition's own share of the budget, before its memory is used.
	n, err := h.Phases.PartitionBytes(ctx, in.Ref)
	if err != nil {
		return job.SynthOutput{}, err
	}
	if err := budget.Acquire(ctx, n); err != nil {
		return job.SynthOutput{}, fmt.Errorf("synthesize %d/%d: %w", in.SectorID, in.Partition, err)
	}
	held := false
	defer func() {
		if !held {
			budget.Giveback(n)
		}
	}()
	// Priority 1 holds the gate from here, its budget share taken: held
	// while it waited for the share, lower-priority syntheses would pause
	// holding the shares it waits for (where it has no reserve of its own).
	ctx, done := h.urgency(ctx, priority)
	defer done()
	if err := yield.Point(ctx); err != nil {
		return job.SynthOutput{}, err
	}
	s, err := async(ctx, func() (Solution, error) { return h.Phases.Synthesize(ctx, in.Ref, in.Partition) }, nil)
	if err != nil {
		return job.SynthOutput{}, err
	}
	// One timing line per synthesis, whatever the scheme (bench stats and
	// the simulation's model read it).
	h.Log.Info("SYNTH_END", "partition", s.Partition(), "bytes", s.Bytes(), "synth_ms", s.SynthTime().Milliseconds())
	if !in.Deadline.IsZero() && !time.Now().Before(in.Deadline) {
		// Finished too late to be of use: nobody may come for it, so it is
		// never stored (its budget goes back on return).
		h.lapsed(in.Ref, in.Partition, in.Deadline, "synthesized late")
		return job.SynthOutput{}, deadlinePassed(fmt.Sprintf("synthesize %s partition %d", in.Ref, in.Partition), in.Deadline)
	}
	if h.spillOut {
		out, err := h.spillWitness(ctx, in, s, n, budget)
		held = err == nil
		return out, err
	}
	// The witness holds its packed bytes from now: the rest of what the
	// synthesis reserved goes back to the budget.
	w := &witness{ref: in.Ref, k: in.Partition, solved: s, bytes: s.Bytes(), budget: budget, deadline: in.Deadline, made: synthesisOf(ctx)}
	again := h.ws.heldFrom(w.made)
	if in.ClaimWithin > 0 {
		w.dropAt = time.Now().Add(claimDeadline(in.ClaimWithin))
	}
	budget.Hold(n, w.bytes)
	held = true
	handle := h.ws.put(w)
	h.count(func(st *HostStats) {
		st.Syntheses++
		if again {
			st.Retried++
		}
	})
	h.phase("synth", s.SynthTime())
	return job.SynthOutput{Witness: job.HostWitness(h.ID, handle), Bytes: w.bytes, SynthMS: s.SynthTime().Milliseconds()}, nil
}

// synthesisOf names the synthesis activity ctx runs (its workflow run and
// activity id, the same for every attempt); "" outside an activity.
func synthesisOf(ctx context.Context) string {
	if !activity.IsActivity(ctx) {
		return ""
	}
	i := activity.GetInfo(ctx)
	return i.WorkflowExecution.RunID + "/" + i.ActivityID
}

// retried is 1 where ctx is a retry of an activity (attempt 2 on), else 0.
func retried(ctx context.Context) int {
	if activity.IsActivity(ctx) && activity.GetInfo(ctx).Attempt > 1 {
		return 1
	}
	return 0
}

func (h *Host) witnessLost(handle, phase string) error {
	h.count(func(s *HostStats) { s.WitnessLost++ })
	return temporal.NewNonRetryableApplicationError(
		fmt.Sprintf("%s: witness %s is not on host %s (restarted or expired)", phase, handle, h.ID), job.ErrWitnessLost, nil)
}

// DevicePhase is the DevicePhase activity: the device phase on one of this
// host's devices. The witness is consumed: on failure it is dropped and
// the workflow synthesizes the partition again.
func (h *Host) DevicePhase(ctx context.Context, in job.HandleInput) (job.DeviceOutput, error) {
	ctx, stop := h.heartbeat(ctx, func() any { return fmt.Sprintf("device phase %d/%d", in.SectorID, in.Partition) })
	defer stop()
	out, err := withinDeadline(ctx, h, in, "device phase", func(ctx context.Context, in job.HandleInput) (job.DeviceOutput, error) { return h.devicePhase(ctx, in) })
	return out, h.observe(ctx, job.ActDevicePhase, err)
}

func (h *Host) devicePhase(ctx context.Context, in job.HandleInput) (job.DeviceOutput, error) {
	handle := in.Witness.Handle
	var moved *job.WitnessLocation
	if in.Witness.Spill != "" {
		var err error
		if handle, err = h.loadSpilled(ctx, in); err != nil {
			return job.DeviceOutput{}, err
		}
		loc := job.HostWitness(h.ID, handle)
		moved = &loc
	}
	w := h.ws.take(handle, in.Deadline)
	if w == nil && h.ws.droppedUnclaimed(handle) {
		// Dropped as never reported, yet the workflow came for it: it was
		// slow to, not wrong to. Synthesize again on the host-loss budget,
		// not on the partition's own.
		return job.DeviceOutput{}, temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("device phase: witness %s on host %s was dropped, unclaimed past its deadline", handle, h.ID), job.ErrHostLost, nil)
	}
	if w == nil || w.solved == nil {
		if w != nil {
			h.ws.give(w)
		}
		return job.DeviceOutput{}, h.witnessLost(handle, "device phase")
	}
	queue := time.Since(w.created)
	if info := activity.GetInfo(ctx); !info.ScheduledTime.IsZero() {
		queue = info.StartedTime.Sub(info.ScheduledTime)
	}
	part := w.solved.Partition()
	order := gpuOrder(in)
	w.priority = job.TaskPriority(in.Order.Priority) // its finalize's too
	if h.ArrivalOrder {
		order = gpu.Order{}
	}
	if err := h.pause(ctx, "device"); err != nil {
		h.ws.give(w)
		return job.DeviceOutput{}, err
	}
	ctx, done := h.urgency(ctx, w.priority)
	defer done()
	if err := yield.Point(ctx); err != nil {
		h.ws.give(w)
		return job.DeviceOutput{}, err
	}
	var use gpu.Use
	_, err := async(ctx, func() (Partial, error) { return h.onDevice(ctx, w, order, &use) },
		func(p Partial, err error, abandoned bool) {
			if err != nil || abandoned {
				// The witness is consumed either way: the workflow
				// synthesizes again.
				h.ws.drop(handle)
				return
			}
			w.solved, w.proving = nil, p
			h.ws.give(w)
		})
	if err != nil {
		if h.Slots.Healthy() == 0 {
			// No device left: take no more synthesis, let other hosts work.
			h.freeze()
			h.Log.Error("every device is quarantined: this host takes no more work", "quarantined", h.Slots.Quarantined())
		}
		return job.DeviceOutput{}, fmt.Errorf("device phase %s: %w", part, err)
	}
	h.count(func(s *HostStats) { s.DevicePhases++ })
	h.phase("queue", queue+use.Queue)
	h.phase("device", use.Busy)
	return job.DeviceOutput{MovedTo: moved, Device: use.Device, DeviceMS: use.Busy.Milliseconds(), QueueMS: queue.Milliseconds() + use.Queue.Milliseconds(),
		Start: use.Start, End: use.Start.Add(use.Busy)}, nil
}

// onDevice runs w's device phase on a slot of the host's devices, in
// order: the quotient, the witness's budget share given back (the
// partition's a, b, c were its lane's and are gone; the next synthesis
// may start, cuzk's semaphore fix), the MSMs. use is the slot's account.
func (h *Host) onDevice(ctx context.Context, w *witness, order gpu.Order, use *gpu.Use) (Partial, error) {
	var p Partial
	u, err := h.Slots.Run(ctx, order, func(dev gpu.Held) error {
		h.stopInDevice()
		r, err := h.Phases.Quotient(ctx, w.solved, dev)
		if err != nil {
			return err
		}
		h.ws.release(w)
		p, err = h.Phases.MSM(ctx, r, dev)
		return err
	})
	*use = u
	// A canceled phase (a lost heartbeat, a cancel) is no device fault:
	// Run keeps the device, and the log must not say otherwise.
	if f := (*gpu.Fault)(nil); errors.As(err, &f) && ctx.Err() == nil {
		h.Log.Error("DEVICE_QUARANTINED", "device", f.Device, "partition", w.solved.Partition(), "error", err)
	}
	return p, err
}

// Finalize is the Finalize activity: the CPU finalize and the partition
// proof's verification; no invalid proof leaves this host.
func (h *Host) Finalize(ctx context.Context, in job.HandleInput) (job.FinalizeOutput, error) {
	ctx, stop := h.heartbeat(ctx, func() any { return fmt.Sprintf("finalize %d/%d", in.SectorID, in.Partition) })
	defer stop()
	out, err := withinDeadline(ctx, h, in, "finalize", func(ctx context.Context, in job.HandleInput) (job.FinalizeOutput, error) { return h.finalize(ctx, in) })
	return out, h.observe(ctx, job.ActFinalize, err)
}

func (h *Host) finalize(ctx context.Context, in job.HandleInput) (job.FinalizeOutput, error) {
	w := h.ws.take(in.Witness.Handle, in.Deadline)
	if w != nil && w.proof != nil {
		// An earlier attempt finished, but its completion did not reach
		// Temporal: answer with its proof (verified when it was made).
		proof, ms := w.proof, w.finMS
		h.ws.give(w)
		h.count(func(s *HostStats) { s.Replayed++ })
		h.Log.Warn("finalize retried after its proof was made: returning that proof", "witness", in.Witness.Handle)
		return job.FinalizeOutput{Proof: proof, FinalizeMS: ms}, nil
	}
	if w == nil || w.proving == nil {
		if w != nil {
			h.ws.give(w)
		}
		return job.FinalizeOutput{}, h.witnessLost(in.Witness.Handle, "finalize")
	}
	if err := h.pause(ctx, "finalize"); err != nil {
		h.ws.give(w)
		return job.FinalizeOutput{}, err
	}
	ctx, done := h.urgency(ctx, w.priority)
	defer done()
	// Wait for a CPU finalize slot here, heartbeating, rather than in the
	// host's queue: a live host takes its finalizes at once, so a finalize
	// not taken within the host-queue timeout means the host is gone.
	// Priority 1 takes none: it never waits behind a PoRep's finalize
	// (seconds of CPU, and as many at once as the urgent lanes and reserve
	// let through).
	slot := h.finalizeSlots
	if w.priority == gpu.Urgent {
		slot = nil
	}
	if slot != nil {
		if err := slot.acquire(ctx, job.TaskPriority(w.priority)); err != nil {
			h.ws.give(w)
			return job.FinalizeOutput{}, err
		}
	}
	type out struct {
		proof []byte
		dur   time.Duration
	}
	o, err := async(ctx, func() (out, error) {
		if err := yield.Point(ctx); err != nil {
			return out{}, err
		}
		proof, dur, err := h.Phases.Finalize(ctx, w.proving)
		return out{proof, dur}, err
	}, func(o out, err error, abandoned bool) {
		if slot != nil {
			slot.release()
		}
		// Only now may a retry use the witness: the finalize is done with
		// it. A proof made is kept, even for an abandoned attempt: a retry
		// answers with it.
		if err == nil {
			h.ws.finished(w, o.proof, o.dur.Milliseconds(), keepProof)
		}
		h.ws.give(w)
	})
	if err != nil {
		if isAppError(err, job.ErrInvalidProof) {
			h.count(func(s *HostStats) { s.Invalid++ })
			// A new finalize draws new randomness but the same partial: give
			// the workflow a fresh synthesis instead of retrying here.
			h.ws.drop(in.Witness.Handle)
			return job.FinalizeOutput{}, temporal.NewNonRetryableApplicationError("witness dropped after an invalid proof: synthesize again", job.ErrWitnessLost, err)
		}
		return job.FinalizeOutput{}, err
	}
	h.count(func(s *HostStats) { s.Finalized++ })
	h.phase("finalize", o.dur)
	return job.FinalizeOutput{Proof: o.proof, FinalizeMS: o.dur.Milliseconds()}, nil
}

// keepProof is how long a finalized partition's proof stays on its host
// for a retried finalize: past the heartbeat timeout and retry backoff
// that bring the retry, and a database outage that delays it.
const keepProof = 10 * time.Minute

// claimDeadline is how long after its synthesis an own-queue witness may
// wait for its device phase: the device phase's schedule-to-start bound
// (within), counted from when the workflow schedules it, which follows
// the synthesis's completion and a workflow task. Past twice that plus
// 30 s the workflow has given up on it, or never heard of it.
func claimDeadline(within time.Duration) time.Duration { return 2*within + 30*time.Second }

// Release is the Release activity: it drops a witness the workflow no
// longer needs (its partition failed or was canceled), returning its
// budget now rather than at expiry.
func (h *Host) Release(ctx context.Context, in job.HandleInput) error {
	if h.ws.dropWhenIdle(in.Witness.Handle) {
		h.count(func(s *HostStats) { s.Released++ })
		h.Log.Info("WITNESS_RELEASED: witness dropped at its workflow's request", "witness", in.Witness.Handle)
	}
	return nil
}

// StoreC2 is the StoreC2 activity: the sector's C2, assembled, verified
// and stored conditionally (Phases.Store).
func (h *Host) StoreC2(ctx context.Context, in job.StoreInput) (job.StoreOutput, error) {
	ctx, stop := h.heartbeat(ctx, nil)
	defer stop()
	out, err := h.Phases.Store(ctx, in)
	switch {
	case err == nil:
		h.count(func(s *HostStats) { s.Stored++ })
	case isAppError(err, job.ErrInvalidProof):
		h.count(func(s *HostStats) { s.Invalid++ })
	}
	return out, h.observe(ctx, job.ActStoreC2, err)
}

// DropInput is the DropInput activity: a lapsed job's stored input is
// deleted (Phases.DropInput).
func (h *Host) DropInput(ctx context.Context, ref job.Ref) error {
	err := h.Phases.DropInput(ctx, ref)
	if err == nil {
		h.Log.Info("INPUT_DROPPED: the job's deadline passed unproved", "sector", ref.String())
	}
	return h.observe(ctx, job.ActDropInput, err)
}

// LookupC2 is the LookupC2 activity: whether a sector's C2 is stored and
// can be trusted (Phases.Lookup).
func (h *Host) LookupC2(ctx context.Context, ref job.Ref) (job.LookupOutput, error) {
	ctx, stop := h.heartbeat(ctx, nil)
	defer stop()
	out, err := h.Phases.Lookup(ctx, ref)
	return out, h.observe(ctx, job.ActLookupC2, err)
}
