package sim

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"sync"
	"time"

	curve "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr/fft"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/c2flow/c2flow/activities"
	"github.com/c2flow/c2flow/gpu"
	"github.com/c2flow/c2flow/job"
)

// Device is the sim backend: a device slot whose work is a modelled sleep.
// Its arithmetic is refused, so nothing can mistake it for a prover.
type Device struct{ name string }

var errNoArithmetic = errors.New("sim device: modelled time only, no arithmetic")

// Name implements gpu.Backend.
func (d *Device) Name() string { return d.name }

// MSMG1 implements gpu.Backend; it always fails.
func (d *Device) MSMG1(context.Context, []curve.G1Affine, []fr.Element) (curve.G1Jac, error) {
	return curve.G1Jac{}, errNoArithmetic
}

// INTT implements gpu.Backend; it always fails.
func (d *Device) INTT(context.Context, *fft.Domain, []fr.Element, bool) error { return errNoArithmetic }

// NTT implements gpu.Backend; it always fails.
func (d *Device) NTT(context.Context, *fft.Domain, []fr.Element, bool) error { return errNoArithmetic }

// Slots returns n simulated devices of host id.
func Slots(id string, n int) (*gpu.Slots, error) {
	if n < 1 {
		return nil, fmt.Errorf("sim devices: need at least one, got %d", n)
	}
	devs := make([]gpu.Backend, n)
	for i := range devs {
		devs[i] = &Device{name: fmt.Sprintf("sim/%s/%d", id, i)}
	}
	return gpu.NewSlots(devs...), nil
}

// Host is a simulated worker host: the pipeline's activities under their
// real names, over a real Budget and real device Slots, with modelled work.
type Host struct {
	id     string
	model  Model
	budget *activities.Budget
	slots  *gpu.Slots
	rec    *Recorder
	draw   *sampler
	log    *slog.Logger
	// arrival ignores the partitions' order: devices go first come.
	arrival bool
	// fin bounds concurrent finalizes to one per device, as the real
	// host's finalize slots do.
	fin chan struct{}

	mu    sync.Mutex
	ws    map[string]*witness
	stats activities.HostStats
}

type witness struct {
	part  partKey
	bytes int64
	freed bool
	busy  bool
}

// NewHost returns a simulated host; rec collects the timelines of every
// host of a run.
func NewHost(id string, m Model, budget *activities.Budget, slots *gpu.Slots, rec *Recorder, log *slog.Logger) *Host {
	h := fnv.New64a()
	h.Write([]byte(id))
	return &Host{id: id, model: m, budget: budget, slots: slots, rec: rec, draw: newSampler(m, h.Sum64()),
		log: log.With("host", id), ws: map[string]*witness{}, fin: make(chan struct{}, max(1, slots.Len()))}
}

// work sleeps d, or returns ctx's error. Activities heartbeat around it
// (activities.Heartbeat), as the real phases do.
func work(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// beat is the simulated activities' heartbeat interval (the real
// worker's throttle).
const beat = 2 * time.Second

func (h *Host) count(f func(*activities.HostStats)) {
	h.mu.Lock()
	f(&h.stats)
	h.mu.Unlock()
}

// Stats returns the host's counters.
func (h *Host) Stats() activities.HostStats {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.stats
}

// Witnesses is the number of simulated witnesses in this host's memory.
func (h *Host) Witnesses() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.ws)
}

// ExpireWitnesses has nothing to expire in a simulation run; it returns
// when ctx ends.
func (h *Host) ExpireWitnesses(ctx context.Context, _ time.Duration) { <-ctx.Done() }

// ValidateC1 reports the modelled shape of every sector.
func (h *Host) ValidateC1(ctx context.Context, in job.SectorInput) (job.ValidateOutput, error) {
	h.rec.sector(in.SectorID, in.Order.Seq)
	h.count(func(s *activities.HostStats) { s.Validated++ })
	return job.ValidateOutput{Profile: "sim", Partitions: h.model.Partitions}, nil
}

// Synthesize sleeps a modelled synthesis and holds a modelled witness in
// the budget until the device phase frees it.
func (h *Host) Synthesize(ctx context.Context, in job.SynthInput) (job.SynthOutput, error) {
	info := activity.GetInfo(ctx)
	defer activities.Heartbeat(ctx, beat, nil)()
	k := partKey{in.SectorID, in.Partition}
	d := h.draw.draw(h.model.SynthMS)
	if err := work(ctx, d); err != nil {
		return job.SynthOutput{}, err
	}
	h.budget.Hold(h.model.WitnessBytes)
	handle := newHandle()
	h.mu.Lock()
	h.ws[handle] = &witness{part: k, bytes: h.model.WitnessBytes}
	h.stats.Syntheses++
	h.mu.Unlock()
	h.rec.phase(k, phaseSynth, info.ScheduledTime, info.StartedTime, time.Now())
	return job.SynthOutput{Witness: job.HostWitness(h.id, handle), Bytes: h.model.WitnessBytes, SynthMS: d.Milliseconds()}, nil
}

func (h *Host) take(handle, phase string) (*witness, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	w := h.ws[handle]
	if w == nil || w.busy {
		h.stats.WitnessLost++
		return nil, temporal.NewNonRetryableApplicationError(fmt.Sprintf("%s: witness %s is not on sim host %s", phase, handle, h.id), job.ErrWitnessLost, nil)
	}
	w.busy = true
	return w, nil
}

func (h *Host) give(w *witness) {
	h.mu.Lock()
	w.busy = false
	h.mu.Unlock()
}

func (h *Host) free(w *witness) {
	h.mu.Lock()
	freed := w.freed
	w.freed = true
	h.mu.Unlock()
	if !freed {
		h.budget.Free(w.bytes)
	}
}

func (h *Host) drop(handle string) {
	h.mu.Lock()
	w := h.ws[handle]
	delete(h.ws, handle)
	h.mu.Unlock()
	if w != nil {
		h.free(w)
	}
}

// DevicePhase waits for one of the host's device slots in the partition's
// order, holds it for a modelled device time and frees the witness's
// budget after the NTT share of it, as the real device phase does.
func (h *Host) DevicePhase(ctx context.Context, in job.HandleInput) (job.DeviceOutput, error) {
	info := activity.GetInfo(ctx)
	// Waiting for a slot heartbeats too, as the real device phase does: an
	// older sector's partitions may keep a younger one waiting.
	defer activities.Heartbeat(ctx, beat, nil)()
	w, err := h.take(in.Witness.Handle, "device phase")
	if err != nil {
		return job.DeviceOutput{}, err
	}
	order := activities.DeviceOrder(in)
	if h.arrival {
		order = gpu.Order{}
	}
	tq := time.Now()
	dev, err := h.slots.AcquireOrder(ctx, order)
	if err != nil {
		h.drop(in.Witness.Handle)
		return job.DeviceOutput{}, fmt.Errorf("device phase: %w", err)
	}
	start := time.Now()
	d := h.draw.draw(h.model.DeviceMS)
	ntt := time.Duration(float64(d) * h.model.FreeAt)
	err = work(ctx, ntt)
	if err == nil {
		h.free(w)
		err = work(ctx, d-ntt)
	}
	h.slots.Release(dev)
	if err != nil {
		h.drop(in.Witness.Handle)
		return job.DeviceOutput{}, err
	}
	end := time.Now()
	h.give(w)
	h.count(func(s *activities.HostStats) { s.DevicePhases++ })
	h.rec.phase(w.part, phaseDevice, info.ScheduledTime, info.StartedTime, end)
	h.rec.slot(w.part, start.Sub(tq))
	return job.DeviceOutput{Device: dev.Name(), DeviceMS: d.Milliseconds(), QueueMS: start.Sub(tq).Milliseconds(), Start: start, End: end}, nil
}

// Finalize sleeps a modelled finalize. The proof it returns is a marker,
// not a proof: StoreC2 of the simulation stores nothing.
func (h *Host) Finalize(ctx context.Context, in job.HandleInput) (job.FinalizeOutput, error) {
	info := activity.GetInfo(ctx)
	defer activities.Heartbeat(ctx, beat, nil)()
	w, err := h.take(in.Witness.Handle, "finalize")
	if err != nil {
		return job.FinalizeOutput{}, err
	}
	select {
	case h.fin <- struct{}{}:
	case <-ctx.Done():
		h.give(w)
		return job.FinalizeOutput{}, ctx.Err()
	}
	started := time.Now() // the slot wait counts as queueing, as before
	d := h.draw.draw(h.model.FinalizeMS)
	err = work(ctx, d)
	<-h.fin
	if err != nil {
		h.give(w)
		return job.FinalizeOutput{}, err
	}
	h.drop(in.Witness.Handle)
	h.count(func(s *activities.HostStats) { s.Finalized++ })
	h.rec.phase(w.part, phaseFinalize, info.ScheduledTime, started, time.Now())
	return job.FinalizeOutput{Proof: []byte("sim"), FinalizeMS: d.Milliseconds()}, nil
}

// StoreC2 records the sector as done; a simulation stores nothing.
func (h *Host) StoreC2(ctx context.Context, in job.StoreInput) (job.StoreOutput, error) {
	h.rec.stored(in.SectorID)
	h.count(func(s *activities.HostStats) { s.Stored++ })
	return job.StoreOutput{C2Key: fmt.Sprintf("sim/%d", in.SectorID), Created: true}, nil
}

// LookupC2 finds nothing: a simulation has no stored C2s.
func (h *Host) LookupC2(ctx context.Context, ref job.SectorRef) (job.LookupOutput, error) {
	return job.LookupOutput{}, nil
}

// Release drops a witness the workflow no longer needs.
func (h *Host) Release(ctx context.Context, in job.HandleInput) error {
	h.mu.Lock()
	w := h.ws[in.Witness.Handle]
	busy := w != nil && w.busy
	h.mu.Unlock()
	if !busy {
		h.drop(in.Witness.Handle)
	}
	return nil
}

func newHandle() string {
	var b [12]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
