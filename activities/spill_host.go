package activities

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"go.temporal.io/sdk/temporal"

	"github.com/c2flow/c2flow/internal/iocount"
	"github.com/c2flow/c2flow/job"
	"github.com/c2flow/c2flow/prover"
)

// spillWitness writes a synthesized witness for a device host. Its size
// stays in this host's budget until the workflow releases it (the device
// host has loaded it, or the partition failed): a synthesis host cannot
// outrun the device hosts, whatever the spill's capacity.
func (h *Host) spillWitness(ctx context.Context, in job.SynthInput, s Solution, n int64, budget *Budget) (job.SynthOutput, error) {
	t0 := time.Now()
	key := s.Partition() + "/" + newHandle() // the prover, sector and partition, then this copy
	size := h.Phases.SpillBytes(s)
	write := h.Hooks.damageSpill(func(w io.Writer) error { return h.Phases.Spill(s, w) })
	if err := h.spill.Put(ctx, key, size, write); err != nil {
		return job.SynthOutput{}, fmt.Errorf("spill %s: %w", s.Partition(), err)
	}
	// The spilled witness's packed bytes stay in this host's budget until
	// the workflow releases them: a synthesis host does not outrun the
	// device hosts.
	w := &witness{ref: in.Ref, k: in.Partition, bytes: s.Bytes(), spill: key, budget: budget, deadline: in.Deadline}
	budget.Hold(n, w.bytes)
	handle := h.ws.put(w)
	h.count(func(st *HostStats) { st.Syntheses++; st.Spilled++; st.Retried += retried(ctx) })
	h.phase("synth", s.SynthTime())
	h.Log.Info("SPILL_END", "partition", s.Partition(), "spill_bytes", size, "spill_ms", time.Since(t0).Milliseconds())
	return job.SynthOutput{Witness: job.WitnessLocation{Host: h.ID, DeviceQueue: job.QueueDevice, ControlQueue: job.ControlQueue(h.ID),
		Handle: handle, Spill: key}, Bytes: w.bytes, SynthMS: s.SynthTime().Milliseconds()}, nil
}

// loadSpilled reads a spilled witness onto this device host and returns
// its local handle, streamed: the witness is decoded as it arrives. A
// missing, damaged or foreign spill loses the witness: the workflow
// synthesizes the partition again. A read that fails on the way (the
// store's trouble) is retried.
func (h *Host) loadSpilled(ctx context.Context, in job.HandleInput) (string, error) {
	if h.spill == nil {
		return "", temporal.NewNonRetryableApplicationError("host "+h.ID+" has no --spill to load witness "+in.Witness.Spill+" from", job.ErrWitnessLost, nil)
	}
	t0 := time.Now()
	r, err := h.spill.Get(ctx, in.Witness.Spill)
	if err != nil {
		if errors.Is(err, ErrSpillMissing) {
			return "", h.witnessLost(in.Witness.Spill, "device phase")
		}
		return "", fmt.Errorf("load spilled witness %s: %w", in.Witness.Spill, err)
	}
	cr := &iocount.Reader{R: r}
	s, err := h.Phases.Unspill(ctx, in.Ref, in.Partition, cr)
	r.Close()
	var ae *temporal.ApplicationError
	switch {
	case errors.As(err, &ae):
		return "", err // the sector's own trouble (bad C1, no keys)
	case errors.Is(err, prover.ErrBadSpill):
		h.count(func(st *HostStats) { st.WitnessLost++ })
		h.Log.Warn("spilled witness refused: the partition is synthesized again", "spill", in.Witness.Spill, "error", err)
		return "", temporal.NewNonRetryableApplicationError(fmt.Sprintf("spill %s: %v", in.Witness.Spill, err), job.ErrWitnessLost, err)
	case err != nil:
		return "", fmt.Errorf("load spilled witness %s: %w", in.Witness.Spill, err)
	}
	h.count(func(st *HostStats) { st.Loaded++ })
	h.Log.Info("SPILL_LOAD", "partition", s.Partition(), "spill_bytes", cr.N, "bytes", s.Bytes(), "load_ms", time.Since(t0).Milliseconds())
	// Not in this host's budget: the synthesis host counts it until the
	// workflow releases it there; here the device queue's concurrency
	// bounds what is loaded.
	return h.ws.put(&witness{ref: in.Ref, k: in.Partition, solved: s, loaded: true, deadline: in.Deadline}), nil
}
