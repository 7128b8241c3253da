package sim

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"time"

	curve "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr/fft"
	"go.temporal.io/sdk/activity"

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

// Phases are a simulated host's phases (activities.Phases): modelled times on
// modelled devices. Package activities runs them under its real Host:
// the same witness table, budget, device slots, finalize slots, expiry and
// retries as a prover host; only the work is a sleep.
type Phases struct {
	id    string
	model Model
	rec   *Recorder
	draw  *sampler
}

var _ activities.Phases = (*Phases)(nil)

// NewPhases returns host id's simulated phases; rec collects the
// timelines of every host of a run.
func NewPhases(id string, m Model, rec *Recorder) *Phases {
	h := fnv.New64a()
	h.Write([]byte(id))
	return &Phases{id: id, model: m, rec: rec, draw: newSampler(m, h.Sum64())}
}

// work sleeps d, or returns ctx's error.
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

// Validate reports the modelled shape of every sector.
func (p *Phases) Validate(ctx context.Context, ref job.Ref) (job.ValidateOutput, error) {
	p.rec.sector(ref.SectorID)
	return job.ValidateOutput{Proof: "sim", Partitions: p.model.Partitions}, nil
}

// solved is a modelled witness.
type solved struct {
	part  partKey
	bytes int64
	synth time.Duration
}

func (s *solved) Partition() string        { return fmt.Sprintf("%d/%d", s.part.sector, s.part.partition) }
func (s *solved) Bytes() int64             { return s.bytes }
func (s *solved) SynthTime() time.Duration { return s.synth }

// reduced is a modelled partition between the device phase's steps: the
// device time drawn for the whole phase and the part still to run.
type reduced struct {
	part partKey
	rest time.Duration
}

func (r *reduced) Partition() string { return fmt.Sprintf("%d/%d", r.part.sector, r.part.partition) }

// proving is a modelled partition after its device phase.
type proving struct{ part partKey }

func (p *proving) Partition() string { return fmt.Sprintf("%d/%d", p.part.sector, p.part.partition) }

// PartitionBytes is the model's witness size.
func (p *Phases) PartitionBytes(context.Context, job.Ref) (int64, error) {
	return p.model.WitnessBytes, nil
}

// Synthesize sleeps a modelled synthesis.
func (p *Phases) Synthesize(ctx context.Context, ref job.Ref, k int) (activities.Solution, error) {
	info := activity.GetInfo(ctx)
	d := p.draw.draw(p.model.SynthMS)
	if err := work(ctx, d); err != nil {
		return nil, err
	}
	part := partKey{ref.SectorID, k}
	p.rec.phase(part, phaseSynth, info.ScheduledTime, info.StartedTime, time.Now())
	return &solved{part: part, bytes: p.model.WitnessBytes, synth: d}, nil
}

// Quotient holds the host's device slot for the NTT share of a modelled
// device time; the host then frees the witness's budget, as it does after
// the real quotient.
func (p *Phases) Quotient(ctx context.Context, s activities.Solution, dev gpu.Held) (activities.Quotient, error) {
	w := s.(*solved)
	d := p.draw.draw(p.model.DeviceMS)
	ntt := time.Duration(float64(d) * p.model.FreeAt)
	if err := work(ctx, ntt); err != nil {
		return nil, err
	}
	p.rec.slot(w.part, dev.Queue)
	return &reduced{part: w.part, rest: d - ntt}, nil
}

// MSM holds the slot for the rest of the modelled device time.
func (p *Phases) MSM(ctx context.Context, r activities.Quotient, dev gpu.Held) (activities.Partial, error) {
	w := r.(*reduced)
	if err := work(ctx, w.rest); err != nil {
		return nil, err
	}
	info := activity.GetInfo(ctx)
	p.rec.phase(w.part, phaseDevice, info.ScheduledTime, info.StartedTime, time.Now())
	return &proving{part: w.part}, nil
}

// Finalize sleeps a modelled finalize. The proof it returns is a marker,
// not a proof: Store of the simulation stores nothing.
func (p *Phases) Finalize(ctx context.Context, pr activities.Partial) ([]byte, time.Duration, error) {
	w := pr.(*proving)
	started := time.Now() // the host's finalize-slot wait counts as queueing
	d := p.draw.draw(p.model.FinalizeMS)
	if err := work(ctx, d); err != nil {
		return nil, 0, err
	}
	info := activity.GetInfo(ctx)
	p.rec.phase(w.part, phaseFinalize, info.ScheduledTime, started, time.Now())
	return []byte("sim"), d, nil
}

// Store records the sector as done; a simulation stores nothing.
func (p *Phases) Store(ctx context.Context, in job.StoreInput) (job.StoreOutput, error) {
	p.rec.stored(in.SectorID)
	return job.StoreOutput{C2Key: fmt.Sprintf("sim/%d", in.SectorID), Created: true}, nil
}

// Lookup finds nothing: a simulation has no stored C2s.
func (p *Phases) Lookup(ctx context.Context, ref job.Ref) (job.LookupOutput, error) {
	return job.LookupOutput{}, nil
}

// DropInput has nothing to drop: a simulated input is not stored.
func (p *Phases) DropInput(ctx context.Context, ref job.Ref) error { return nil }

var errNoSpill = errors.New("sim: a simulated witness cannot be spilled")

// SpillBytes is 0: a simulated witness is not spilled.
func (p *Phases) SpillBytes(activities.Solution) int64 { return 0 }

// Spill is refused: the simulation models same-host affinity only.
func (p *Phases) Spill(activities.Solution, io.Writer) error { return errNoSpill }

// Unspill is refused (see Spill).
func (p *Phases) Unspill(context.Context, job.Ref, int, io.Reader) (activities.Solution, error) {
	return nil, errNoSpill
}
