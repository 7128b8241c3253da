// Package activities holds c2flow's Temporal activities: every side effect
// of the pipeline (S3, proving, device slots). Synthesis, device phase and
// finalize of a partition run on one host, which keeps the witness in
// memory; only a handle crosses Temporal.
package activities

import (
	"bytes"
	"cmp"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"

	groth16bls "github.com/consensys/gnark/backend/groth16/bls12-381"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/c2flow/c2flow/gpu"
	"github.com/c2flow/c2flow/job"
	"github.com/c2flow/c2flow/metrics"
	"github.com/c2flow/c2flow/params"
	"github.com/c2flow/c2flow/porep"
	"github.com/c2flow/c2flow/prover"
	"github.com/c2flow/c2flow/storage"
)

// Host is one worker process's activities and state.
type Host struct {
	ID     string // unique per process: names the host's task queues
	Store  *storage.Store
	Slots  *gpu.Slots
	Budget *Budget
	Log    *slog.Logger
	// EarlyG2 starts the B-in-G2 MSM with the device phase.
	EarlyG2 bool
	// HeartbeatEvery is the interval of heartbeats from long activities.
	HeartbeatEvery time.Duration
	// Hooks are fault-injection points for tests; nil in production.
	Hooks  *Hooks
	paused atomic.Bool
	// Metrics, if set, records phase durations, retries and failures.
	Metrics *metrics.Metrics
	// spill carries witnesses between synthesis-only and device hosts;
	// spillOut makes this host's syntheses spill (see SetSpill).
	spill    Spill
	spillOut bool
	// finalizeSlots bounds concurrent finalizes (nil: unbounded).
	finalizeSlots chan struct{}
	// validateSlots bounds concurrent C1 validations.
	validateSlots chan struct{}

	keys    *KeyCache
	ws      *witnesses
	hasher  *porep.Hasher
	statsMu sync.Mutex
	stats   HostStats
}

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
	Spilled      int `json:"spilled,omitempty"` // witnesses written for device hosts
	Loaded       int `json:"loaded,omitempty"`  // spilled witnesses proved here
}

// NewHost returns a host; keys are loaded through keys.
func NewHost(id string, store *storage.Store, keys *KeyCache, slots *gpu.Slots, budget *Budget, log *slog.Logger) *Host {
	return &Host{ID: id, Store: store, keys: keys, Slots: slots, Budget: budget, Log: log.With("host", id),
		HeartbeatEvery: 500 * time.Millisecond, ws: &witnesses{m: map[string]*witness{}, budget: budget, log: log}, hasher: porep.NewHasher(),
		validateSlots: make(chan struct{}, 2)}
}

// DeviceOrder is a device phase's claim on a device, from its sector's
// order and its partition.
func DeviceOrder(in job.HandleInput) gpu.Order {
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
		h.finalizeSlots = make(chan struct{}, n)
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
			if n := h.ws.expire(ttl); n > 0 {
				h.count(func(s *HostStats) { s.Expired += n })
				h.Log.Warn("dropped expired witnesses", "count", n, "ttl", ttl)
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

// Hooks are a host's fault-injection points, for tests only.
type Hooks struct {
	// FaultyFinalize corrupts every proof (tests of the no-invalid-proof
	// guarantee).
	FaultyFinalize bool `json:"faulty_finalize,omitempty"`
	// PauseAt freezes the host the first time an activity reaches this
	// phase (synth, device or finalize): it writes PauseFile, takes no new
	// synthesis and the activity waits for cancellation. Fault tests use it
	// to kill -9 a worker at a known point.
	PauseAt   string `json:"pause_at,omitempty"`
	PauseFile string `json:"pause_file,omitempty"`
}

// pause implements Hooks.PauseAt for phase; it returns ctx's error once
// paused.
func (h *Host) pause(ctx context.Context, phase string) error {
	if h.Hooks == nil || h.Hooks.PauseAt != phase || !h.paused.CompareAndSwap(false, true) {
		return nil
	}
	h.Budget.freeze()
	if h.Hooks.PauseFile != "" {
		os.WriteFile(h.Hooks.PauseFile, []byte(phase), 0o644)
	}
	h.Log.Warn("paused for a fault test", "phase", phase)
	<-ctx.Done()
	return ctx.Err()
}

func badC1(ref job.SectorRef, err error) error {
	return temporal.NewNonRetryableApplicationError(fmt.Sprintf("%s: bad C1: %v", ref, err), job.ErrBadC1, err)
}

// loadC1 reads, checks and decodes a sector's C1. The bytes must be the
// ones the sector's identity pins (an object replaced after submission is
// a BadC1, never proved), and the C1 must name the sector's prover and
// number. A missing object or an unreachable store is a retryable storage
// error naming the key: a wrong configuration is not bad input.
func (h *Host) loadC1(ctx context.Context, ref job.SectorRef) (*porep.C1, error) {
	// Bounded memory whoever wrote the object: its size is checked against
	// the declared profile's bound before a byte is read.
	limit := porep.MaxC1Bytes()
	if ref.Profile != "" {
		p, err := porep.LookupProfile(ref.Profile)
		if err != nil {
			return nil, badC1(ref, fmt.Errorf("declared profile: %w", err))
		}
		limit = p.MaxC1Bytes()
	}
	size, err := h.Store.Size(ctx, storage.C1Key(ref.Identity()))
	if err != nil {
		return nil, fmt.Errorf("%s: read C1: %w", ref, err)
	}
	if size > limit {
		return nil, badC1(ref, fmt.Errorf("(file): %w: the object has %d bytes, a %s C1 at most %d", porep.ErrTooLarge, size, cmp.Or(ref.Profile, "c2flow"), limit))
	}
	raw, err := h.Store.GetC1(ctx, ref.Identity(), ref.C1Digest)
	switch {
	case errors.Is(err, storage.ErrDigest), errors.Is(err, storage.ErrChecksum):
		return nil, badC1(ref, err)
	case err != nil:
		return nil, fmt.Errorf("%s: read C1: %w", ref, err)
	}
	c1, err := porep.DecodeC1(bytes.NewReader(raw))
	if err != nil {
		return nil, badC1(ref, err)
	}
	if c1.SectorID != ref.SectorID {
		return nil, badC1(ref, fmt.Errorf("sector_id: the C1 is for sector %d", c1.SectorID))
	}
	if ref.Profile != "" && c1.Profile.Name != ref.Profile {
		return nil, badC1(ref, fmt.Errorf("registered_proof: the C1 is a %s C1, %s was declared", c1.Profile.Name, ref.Profile))
	}
	if p := hex.EncodeToString(c1.ProverID[:]); p != ref.ProverID {
		return nil, badC1(ref, fmt.Errorf("prover_id: the C1 is for prover %s", p))
	}
	return c1, nil
}

// ValidateC1 checks a sector's C1 before any synthesis: strict decoding,
// then every vanilla proof natively.
// ValidateC1 is the ValidateC1 activity (see doValidateC1).
func (h *Host) ValidateC1(ctx context.Context, in job.SectorInput) (job.ValidateOutput, error) {
	out, err := h.doValidateC1(ctx, in)
	return out, h.observe(ctx, job.ActValidateC1, err)
}

func (h *Host) doValidateC1(ctx context.Context, in job.SectorInput) (job.ValidateOutput, error) {
	// A few validations at once: each holds a whole C1 and its decoding.
	select {
	case h.validateSlots <- struct{}{}:
		defer func() { <-h.validateSlots }()
	case <-ctx.Done():
		return job.ValidateOutput{}, ctx.Err()
	}
	c1, err := h.loadC1(ctx, in.SectorRef)
	if err != nil {
		if isBadC1(err) {
			h.count(func(s *HostStats) { s.BadC1++ })
		}
		return job.ValidateOutput{}, err
	}
	if err := c1.Verify(h.hasher); err != nil {
		h.count(func(s *HostStats) { s.BadC1++ })
		return job.ValidateOutput{}, badC1(in.SectorRef, err)
	}
	h.count(func(s *HostStats) { s.Validated++ })
	return job.ValidateOutput{Profile: c1.Profile.Name, Partitions: len(c1.Partitions)}, nil
}

func isBadC1(err error) bool {
	var ae *temporal.ApplicationError
	return errors.As(err, &ae) && ae.Type() == job.ErrBadC1
}

// heartbeat records progress every HeartbeatEvery until the returned
// stop is called; activity cancellation then reaches ctx.
func (h *Host) heartbeat(ctx context.Context, details func() any) (stop func()) {
	return Heartbeat(ctx, h.HeartbeatEvery, details)
}

// Heartbeat records a heartbeat (with details(), if details is set) every
// interval until the returned stop is called or ctx ends.
func Heartbeat(ctx context.Context, every time.Duration, details func() any) (stop func()) {
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				if details != nil {
					activity.RecordHeartbeat(ctx, details())
				} else {
					activity.RecordHeartbeat(ctx)
				}
			}
		}
	}()
	return func() { close(done) }
}

// loadC1Prover loads a sector's C1 (see loadC1) and its profile's prover.
func (h *Host) loadC1Prover(ctx context.Context, ref job.SectorRef) (*porep.C1, *prover.Prover, error) {
	c1, err := h.loadC1(ctx, ref)
	if err != nil {
		return nil, nil, err
	}
	pr, err := h.keys.Prover(ctx, c1.Profile)
	if err != nil {
		return nil, nil, err
	}
	return c1, pr, nil
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

// Synthesize solves a partition's circuit and keeps the witness in this
// host's memory. It runs on the synthesis queue, whose slots are the
// host's Budget.
// Synthesize is the Synthesize activity (see doSynthesize).
func (h *Host) Synthesize(ctx context.Context, in job.SynthInput) (job.SynthOutput, error) {
	out, err := h.doSynthesize(ctx, in)
	return out, h.observe(ctx, job.ActSynthesize, err)
}

func (h *Host) doSynthesize(ctx context.Context, in job.SynthInput) (job.SynthOutput, error) {
	c1, pr, err := h.loadC1Prover(ctx, in.SectorRef)
	if err != nil {
		return job.SynthOutput{}, err
	}
	t0 := time.Now()
	stop := h.heartbeat(ctx, func() any {
		return fmt.Sprintf("synthesizing %d/%d for %v", in.SectorID, in.Partition, time.Since(t0).Round(time.Second))
	})
	defer stop()
	if err := h.pause(ctx, "synth"); err != nil {
		return job.SynthOutput{}, err
	}
	sol, err := async(ctx, func() (*prover.Solution, error) { return pr.Synthesize(ctx, c1, in.Partition) }, nil)
	if err != nil {
		return job.SynthOutput{}, err
	}
	if h.spillOut {
		return h.spillWitness(ctx, in, c1, sol)
	}
	w := &witness{c1: c1, k: in.Partition, pr: pr, sol: sol, bytes: sol.Bytes()}
	h.Budget.Hold(w.bytes)
	handle := h.ws.put(w)
	h.count(func(s *HostStats) { s.Syntheses++ })
	h.phase("synth", sol.SynthTime)
	return job.SynthOutput{Witness: job.HostWitness(h.ID, handle), Bytes: w.bytes, SynthMS: sol.SynthTime.Milliseconds()}, nil
}

// spillWitness writes a synthesized witness for a device host. Its size stays in
// this host's budget until the workflow releases it (the device host has
// loaded it, or the partition failed): a synthesis host cannot outrun the
// device hosts, whatever the spill's capacity.
func (h *Host) spillWitness(ctx context.Context, in job.SynthInput, c1 *porep.C1, sol *prover.Solution) (job.SynthOutput, error) {
	t0 := time.Now()
	data, err := sol.MarshalBinary()
	if err != nil {
		return job.SynthOutput{}, err
	}
	key := fmt.Sprintf("%d/%d/%s", in.SectorID, in.Partition, newHandle())
	if err := h.spill.Put(ctx, key, data); err != nil {
		return job.SynthOutput{}, fmt.Errorf("spill %s: %w", sol.Partition, err)
	}
	w := &witness{c1: c1, k: in.Partition, bytes: sol.Bytes(), spill: key}
	h.Budget.Hold(w.bytes)
	handle := h.ws.put(w)
	h.count(func(s *HostStats) { s.Syntheses++; s.Spilled++ })
	h.phase("synth", sol.SynthTime)
	h.Log.Info("SPILL_END", "partition", sol.Partition, "bytes", len(data), "spill_ms", time.Since(t0).Milliseconds())
	return job.SynthOutput{Witness: job.WitnessLocation{Host: h.ID, DeviceQueue: job.QueueDevice, ControlQueue: job.ControlQueue(h.ID),
		Handle: handle, Spill: key}, Bytes: w.bytes, SynthMS: sol.SynthTime.Milliseconds()}, nil
}

// loadSpilled reads a spilled witness onto this device host and returns
// its local handle. A missing or damaged spill loses the witness: the
// workflow synthesizes the partition again.
func (h *Host) loadSpilled(ctx context.Context, in job.HandleInput) (string, error) {
	if h.spill == nil {
		return "", temporal.NewNonRetryableApplicationError("host "+h.ID+" has no --spill to load witness "+in.Witness.Spill+" from", job.ErrWitnessLost, nil)
	}
	c1, pr, err := h.loadC1Prover(ctx, in.SectorRef)
	if err != nil {
		return "", err
	}
	t0 := time.Now()
	data, err := h.spill.Get(ctx, in.Witness.Spill)
	if err != nil {
		if errors.Is(err, ErrSpillMissing) {
			return "", h.witnessLost(in.Witness.Spill, "device phase")
		}
		return "", fmt.Errorf("load spilled witness: %w", err)
	}
	sol, err := prover.UnmarshalSolution(data)
	if err == nil && sol.Partition != prover.PartitionID(in.SectorID, in.Partition) {
		err = fmt.Errorf("spilled witness is %s, not %s", sol.Partition, prover.PartitionID(in.SectorID, in.Partition))
	}
	if err != nil {
		h.count(func(s *HostStats) { s.WitnessLost++ })
		return "", temporal.NewNonRetryableApplicationError(fmt.Sprintf("spill %s: %v", in.Witness.Spill, err), job.ErrWitnessLost, err)
	}
	h.count(func(s *HostStats) { s.Loaded++ })
	h.Log.Info("SPILL_LOAD", "partition", sol.Partition, "bytes", len(data), "load_ms", time.Since(t0).Milliseconds())
	// Not in this host's budget: the synthesis host counts it until the
	// workflow releases it there; here the device queue's concurrency
	// bounds what is loaded.
	return h.ws.put(&witness{c1: c1, k: in.Partition, pr: pr, sol: sol, loaded: true}), nil
}

func (h *Host) witnessLost(handle, phase string) error {
	h.count(func(s *HostStats) { s.WitnessLost++ })
	return temporal.NewNonRetryableApplicationError(
		fmt.Sprintf("%s: witness %s is not on host %s (restarted or expired)", phase, handle, h.ID), job.ErrWitnessLost, nil)
}

// DevicePhase runs the split prover's device phase on one of this host's
// devices. The witness is consumed: on failure it is dropped and the
// workflow synthesizes the partition again.
// DevicePhase is the DevicePhase activity (see doDevicePhase).
func (h *Host) DevicePhase(ctx context.Context, in job.HandleInput) (job.DeviceOutput, error) {
	out, err := h.doDevicePhase(ctx, in)
	return out, h.observe(ctx, job.ActDevicePhase, err)
}

func (h *Host) doDevicePhase(ctx context.Context, in job.HandleInput) (job.DeviceOutput, error) {
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
	w := h.ws.take(handle)
	if w == nil || w.sol == nil {
		if w != nil {
			h.ws.give(w)
		}
		return job.DeviceOutput{}, h.witnessLost(handle, "device phase")
	}
	queue := time.Since(w.created)
	if info := activity.GetInfo(ctx); !info.ScheduledTime.IsZero() {
		queue = info.StartedTime.Sub(info.ScheduledTime)
	}
	part := w.sol.Partition
	order := DeviceOrder(in)
	stop := h.heartbeat(ctx, func() any { return "device phase " + part })
	defer stop()
	if err := h.pause(ctx, "device"); err != nil {
		h.ws.give(w)
		return job.DeviceOutput{}, err
	}
	pt, err := async(ctx, func() (*prover.Partial, error) {
		return w.pr.Start(ctx, h.Slots, w.sol, prover.WithOrder(order), prover.OnFreed(func() { h.ws.releaseABC(w) }))
	},
		func(pt *prover.Partial, err error, abandoned bool) {
			if err != nil || abandoned {
				// The solution is consumed either way: the workflow
				// synthesizes again.
				h.ws.drop(handle)
				return
			}
			w.sol, w.partial = nil, pt
			h.ws.releaseABC(w) // normally done in OnFreed already
			h.ws.give(w)
		})
	if err != nil {
		if h.Slots.Healthy() == 0 {
			// No device left: take no more synthesis, let other hosts work.
			h.Budget.freeze()
			h.Log.Error("every device is quarantined: this host takes no more work", "quarantined", h.Slots.Quarantined())
		}
		return job.DeviceOutput{}, fmt.Errorf("device phase: %w", err)
	}
	h.count(func(s *HostStats) { s.DevicePhases++ })
	h.phase("queue", queue+pt.QueueTime)
	h.phase("device", pt.DeviceTime)
	out := job.DeviceOutput{MovedTo: moved}
	out.Device, out.DeviceMS, out.QueueMS = pt.Device, pt.DeviceTime.Milliseconds(), queue.Milliseconds()+pt.QueueTime.Milliseconds()
	out.Start, out.End = pt.DeviceStart, pt.DeviceStart.Add(pt.DeviceTime)
	return out, nil
}

// Finalize runs the CPU finalize and verifies the partition proof: no
// invalid proof leaves this host.
// Finalize is the Finalize activity (see doFinalize).
func (h *Host) Finalize(ctx context.Context, in job.HandleInput) (job.FinalizeOutput, error) {
	out, err := h.doFinalize(ctx, in)
	return out, h.observe(ctx, job.ActFinalize, err)
}

func (h *Host) doFinalize(ctx context.Context, in job.HandleInput) (job.FinalizeOutput, error) {
	w := h.ws.take(in.Witness.Handle)
	if w == nil || w.partial == nil {
		if w != nil {
			h.ws.give(w)
		}
		return job.FinalizeOutput{}, h.witnessLost(in.Witness.Handle, "finalize")
	}
	part := w.partial.Partition
	stop := h.heartbeat(ctx, func() any { return "finalize " + part })
	if err := h.pause(ctx, "finalize"); err != nil {
		stop()
		h.ws.give(w)
		return job.FinalizeOutput{}, err
	}
	defer stop()
	// Wait for a CPU finalize slot here, heartbeating, rather than in the
	// host's queue: a live host takes its finalizes at once, so a finalize
	// not taken within the host-queue timeout means the host is gone.
	if h.finalizeSlots != nil {
		select {
		case h.finalizeSlots <- struct{}{}:
		case <-ctx.Done():
			h.ws.give(w)
			return job.FinalizeOutput{}, ctx.Err()
		}
	}
	type out struct {
		proof []byte
		dur   time.Duration
	}
	o, err := async(ctx, func() (out, error) {
		proof, dur, err := w.pr.Finish(ctx, w.partial)
		if err != nil {
			return out{}, err
		}
		if h.Hooks != nil && h.Hooks.FaultyFinalize {
			proof.Krs.Double(&proof.Krs)
		}
		if err := prover.Verify(w.pr.Keys.VK, w.c1.Statement(), w.k, proof); err != nil {
			h.count(func(s *HostStats) { s.Invalid++ })
			return out{}, temporal.NewApplicationError(err.Error(), job.ErrInvalidProof)
		}
		c2 := prover.C2{Profile: w.c1.Profile.Name, Proofs: []*groth16bls.Proof{proof}}
		b, err := c2.MarshalBinary()
		if err != nil {
			return out{}, err
		}
		return out{proof: b, dur: dur}, nil
	}, func(o out, err error, abandoned bool) {
		if h.finalizeSlots != nil {
			<-h.finalizeSlots
		}
		// Only now may a retry use the partial: the finalize is done with it.
		if err == nil && !abandoned {
			h.ws.drop(in.Witness.Handle)
			return
		}
		h.ws.give(w)
	})
	if err != nil {
		var ae *temporal.ApplicationError
		if errors.As(err, &ae) && ae.Type() == job.ErrInvalidProof {
			// A new finalize draws new randomness but the same partial: give
			// the workflow a fresh synthesis instead of retrying here.
			h.ws.drop(in.Witness.Handle)
			return job.FinalizeOutput{}, temporal.NewNonRetryableApplicationError(err.Error(), job.ErrWitnessLost, err)
		}
		return job.FinalizeOutput{}, err
	}
	h.count(func(s *HostStats) { s.Finalized++ })
	h.phase("finalize", o.dur)
	return job.FinalizeOutput{Proof: o.proof, FinalizeMS: o.dur.Milliseconds()}, nil
}

// Release drops a witness the workflow no longer needs (its partition
// failed or was canceled), returning its budget now rather than at expiry.
func (h *Host) Release(ctx context.Context, in job.HandleInput) error {
	h.ws.dropWhenIdle(in.Witness.Handle)
	return nil
}

// StoreC2 assembles the sector's C2 from its partition proofs, verifies
// every partition against the verifying key and stores it conditionally.
// If a C2 is already stored (a retry after a lost response), the stored one
// is checked and kept.
// StoreC2 is the StoreC2 activity (see doStoreC2).
func (h *Host) StoreC2(ctx context.Context, in job.StoreInput) (job.StoreOutput, error) {
	out, err := h.doStoreC2(ctx, in)
	return out, h.observe(ctx, job.ActStoreC2, err)
}

func (h *Host) doStoreC2(ctx context.Context, in job.StoreInput) (job.StoreOutput, error) {
	c1, pr, err := h.loadC1Prover(ctx, in.SectorRef)
	if err != nil {
		return job.StoreOutput{}, err
	}
	c2, err := assembleC2(c1.Profile.Name, in.Proofs)
	if err != nil {
		return job.StoreOutput{}, temporal.NewNonRetryableApplicationError(fmt.Sprintf("%s: %v: not stored", in.SectorRef, err), job.ErrInvalidProof, err)
	}
	if err := prover.VerifyC2(pr.Keys.VK, c1.Statement(), c2); err != nil {
		h.count(func(s *HostStats) { s.Invalid++ })
		return job.StoreOutput{}, temporal.NewNonRetryableApplicationError(fmt.Sprintf("%s: %v: not stored", in.SectorRef, err), job.ErrInvalidProof, err)
	}
	data, err := c2.MarshalBinary()
	if err != nil {
		return job.StoreOutput{}, err
	}
	id := in.Identity()
	m := storage.Manifest{ProverID: in.ProverID, SectorID: in.SectorID, C1Digest: in.C1Digest, Profile: c1.Profile.Name,
		Partitions: len(c2.Proofs), VKDigest: pr.Keys.VKSHA256, PKDigest: pr.Keys.PKSHA256, CircuitDigest: pr.Keys.Digest}
	for _, p := range in.Partitions {
		m.PartitionMS = append(m.PartitionMS, storage.PartitionTime{Partition: p.Partition, SynthMS: p.SynthMS, QueueMS: p.QueueMS, DeviceMS: p.DeviceMS, FinalizeMS: p.FinalizeMS})
	}
	stored, created, err := h.Store.PutC2(ctx, m, data)
	if err != nil {
		return job.StoreOutput{}, err
	}
	if !created {
		// A proof of this exact C1 is already stored (an earlier attempt
		// of this activity, or a run whose C2 was found bad): keep it if
		// it verifies, else replace it. One workflow per sector identity
		// runs at a time, so nothing races the replacement.
		old, err := prover.UnmarshalC2(stored)
		if err == nil {
			err = prover.VerifyC2(pr.Keys.VK, c1.Statement(), old)
		}
		if err != nil {
			h.Log.Warn("replacing a stored C2 that does not verify", "sector", in.SectorRef.String(), "key", storage.C2Key(id), "reason", err)
			if derr := h.Store.Delete(ctx, storage.C2Key(id)); derr != nil {
				return job.StoreOutput{}, fmt.Errorf("%s: delete the bad C2 %s: %w", in.SectorRef, storage.C2Key(id), derr)
			}
			if stored, created, err = h.Store.PutC2(ctx, m, data); err != nil {
				return job.StoreOutput{}, err
			}
			if !created {
				return job.StoreOutput{}, fmt.Errorf("%s: another C2 was stored under %s while replacing a bad one", in.SectorRef, storage.C2Key(id))
			}
		}
		if err := h.Store.PutManifest(ctx, m, stored); err != nil {
			return job.StoreOutput{}, err
		}
	}
	h.count(func(s *HostStats) { s.Stored++ })
	return job.StoreOutput{C2Key: storage.C2Key(id), Created: created}, nil
}

// assembleC2 joins the partitions' one-proof C2s, in order, into the
// sector's C2; an error names the partition whose bytes are not one proof.
func assembleC2(profile string, proofs [][]byte) (*prover.C2, error) {
	c2 := &prover.C2{Profile: profile}
	for k, b := range proofs {
		one, err := prover.UnmarshalC2(b)
		if err != nil {
			return nil, fmt.Errorf("partition %d: decode proof: %w", k, err)
		}
		if len(one.Proofs) != 1 {
			return nil, fmt.Errorf("partition %d: %d proofs where one was expected", k, len(one.Proofs))
		}
		c2.Proofs = append(c2.Proofs, one.Proofs[0])
	}
	return c2, nil
}

// LookupC2 says whether a sector's C2 is stored and can be trusted: the
// manifest names this identity and the proof's digest, and the proof
// verifies against the sector's C1 under the current keys. Anything else
// is reported with the reason, and the sector is proved again.
func (h *Host) LookupC2(ctx context.Context, ref job.SectorRef) (job.LookupOutput, error) {
	id := ref.Identity()
	out := job.LookupOutput{C2Key: storage.C2Key(id)}
	_, proof, err := h.Store.GetC2(ctx, id)
	switch {
	case errors.Is(err, storage.ErrNotFound):
		if _, herr := h.Store.Head(ctx, storage.C2Key(id)); herr == nil {
			out.Found, out.Reason = true, "the C2's manifest is missing"
		}
		return out, nil
	case errors.Is(err, storage.ErrDigest), errors.Is(err, storage.ErrChecksum):
		out.Found, out.Reason = true, err.Error()
		return out, nil
	case err != nil:
		return out, err
	}
	out.Found = true
	c1, pr, err := h.loadC1Prover(ctx, ref)
	if err != nil {
		if isBadC1(err) {
			out.Reason = "its C1 cannot be checked: " + err.Error()
			return out, nil
		}
		return out, err
	}
	c2, err := prover.UnmarshalC2(proof)
	if err == nil {
		err = prover.VerifyC2(pr.Keys.VK, c1.Statement(), c2)
	}
	if err != nil {
		out.Reason = "the stored proof does not verify: " + err.Error()
		return out, nil
	}
	out.Valid = true
	return out, nil
}

// KeyCache loads each profile's keys once per process and keeps them in
// memory, with a prover over them.
type KeyCache struct {
	Store   params.Store
	Log     *slog.Logger
	EarlyG2 bool
	mu      sync.Mutex
	provers map[string]*prover.Prover
}

// Prover returns the profile's prover, loading its keys on first use. The
// keys must already be in the store (c2flow circuit setup / dev / demo put
// them there): two workers must never run two different setups.
func (c *KeyCache) Prover(ctx context.Context, p porep.Profile) (*prover.Prover, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if pr, ok := c.provers[p.Name]; ok {
		return pr, nil
	}
	keys, err := params.LoadExisting(ctx, c.Store, p, c.Log)
	if errors.Is(err, params.ErrNotFound) {
		return nil, temporal.NewNonRetryableApplicationError(err.Error(), job.ErrNoKeys, err)
	}
	if err != nil {
		return nil, err
	}
	pr, err := prover.New(keys, c.Log)
	if err != nil {
		return nil, err
	}
	pr.EarlyG2 = c.EarlyG2
	if c.provers == nil {
		c.provers = map[string]*prover.Prover{}
	}
	c.provers[p.Name] = pr
	return pr, nil
}
