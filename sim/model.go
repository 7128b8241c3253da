// Package sim simulates c2flow fleets on one machine: the real workflows,
// Temporal server, task queues, memory budgets (slot suppliers) and device
// slots, with modelled work in place of proving. A simulated host sleeps a
// partition's synthesis, device phase and finalize, drawn from a measured
// distribution, and counts its modelled witness memory in its budget. It
// proves nothing and stores nothing: it measures the scheduler.
package sim

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/c2flow/c2flow/stats"
)

// Model is what a simulated partition costs.
type Model struct {
	// Source says where the samples come from.
	Source string
	// Partitions per sector (10 for a 32GiB sector).
	Partitions int
	// Samples of each phase in milliseconds, drawn with replacement.
	SynthMS, DeviceMS, FinalizeMS []float64
	// FreeAt is the fraction of the device phase after which a, b, c are
	// freed and the budget permit returns (the NTTs' share of it).
	FreeAt float64
	// WitnessBytes is the modelled memory of one synthesized partition,
	// counted in the budget; it is not allocated.
	WitnessBytes int64
	// Scale multiplies every time: below 1 it compresses the run and raises
	// the task rate Temporal must sustain.
	Scale float64
}

//go:embed testdata/32KiB-cpu.log
var defaultLog []byte

// DefaultModel is the 32KiB profile measured through the real pipeline on
// the 2-core development machine (CPU backend): its GPU_END, SYNTH_END and
// FINALIZE_END lines, embedded. Partitions and memory are those of a
// Filecoin 32GiB sector (10 partitions, about 12 GiB each).
func DefaultModel() Model {
	m, err := FromLog(bytes.NewReader(defaultLog))
	if err != nil {
		panic("sim: embedded model: " + err.Error())
	}
	m.Source = "embedded: 32KiB, c2flow bench batch, CPU backend, 2-core dev machine"
	return m
}

// FromLog builds a model from a c2flow worker or bench log (or cuzk's
// timeline): gpu_ms of GPU_END lines, synth_ms of SYNTH_END, finalize_ms
// of FINALIZE_END. Phases without samples are an error: a model that
// silently invents a phase is no model.
func FromLog(r io.Reader) (Model, error) {
	raw, err := io.ReadAll(r)
	if err != nil {
		return Model{}, err
	}
	m := Model{Partitions: 10, FreeAt: 0.06, WitnessBytes: 12 << 30, Scale: 1}
	for _, f := range []struct {
		field string
		dst   *[]float64
	}{{"gpu_ms", &m.DeviceMS}, {"synth_ms", &m.SynthMS}, {"finalize_ms", &m.FinalizeMS}} {
		s, err := stats.ParseLog(bytes.NewReader(raw), f.field)
		if err != nil {
			return Model{}, err
		}
		if len(s.Values) == 0 {
			return Model{}, fmt.Errorf("model: no %s samples (%s lines) in the log", f.field, stats.EventOf(f.field))
		}
		*f.dst = s.Values
	}
	return m, nil
}

// Validate reports what is wrong with a model.
func (m Model) Validate() error {
	switch {
	case m.Partitions < 1:
		return fmt.Errorf("model: %d partitions per sector", m.Partitions)
	case len(m.SynthMS) == 0 || len(m.DeviceMS) == 0 || len(m.FinalizeMS) == 0:
		return errors.New("model: a phase has no samples")
	case m.Scale <= 0:
		return fmt.Errorf("model: scale %v must be positive", m.Scale)
	case m.FreeAt < 0 || m.FreeAt > 1:
		return fmt.Errorf("model: free-at %v outside [0, 1]", m.FreeAt)
	}
	return nil
}

// MeanDevice is the mean modelled device time, scaled.
func (m Model) MeanDevice() time.Duration {
	return time.Duration(stats.Mean(m.DeviceMS) * m.Scale * float64(time.Millisecond))
}

// sampler draws phase times; safe for concurrent use.
type sampler struct {
	mu  sync.Mutex
	rng *rand.Rand
	m   Model
}

func newSampler(m Model, seed uint64) *sampler {
	return &sampler{rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), m: m}
}

func (s *sampler) draw(v []float64) time.Duration {
	s.mu.Lock()
	x := v[s.rng.IntN(len(v))]
	s.mu.Unlock()
	return time.Duration(x * s.m.Scale * float64(time.Millisecond))
}
