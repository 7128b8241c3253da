package sim

import (
	"sync"
	"time"
)

type partKey struct {
	sector    uint64
	partition int
}

const (
	phaseSynth = iota
	phaseDevice
	phaseFinalize
	nPhases
)

var phaseNames = [nPhases]string{"Synthesize", "DevicePhase", "Finalize"}

// span is one activity of a partition: scheduled and started as Temporal
// saw them (server clock), ended on the host.
type span struct{ scheduled, started, ended time.Time }

type partRecord struct {
	phases   [nPhases]span
	slotWait time.Duration
	attempts int // syntheses
}

type sectorRecord struct {
	stored time.Time
}

// Recorder collects the timelines of every simulated host of a run (the
// hosts share a process, so one recorder sees them all).
type Recorder struct {
	mu      sync.Mutex
	parts   map[partKey]*partRecord
	sectors map[uint64]*sectorRecord
}

// NewRecorder returns an empty recorder.
func NewRecorder() *Recorder {
	return &Recorder{parts: map[partKey]*partRecord{}, sectors: map[uint64]*sectorRecord{}}
}

func (r *Recorder) part(k partKey) *partRecord {
	p := r.parts[k]
	if p == nil {
		p = &partRecord{}
		r.parts[k] = p
	}
	return p
}

func (r *Recorder) phase(k partKey, ph int, scheduled, started, ended time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	p := r.part(k)
	p.phases[ph] = span{scheduled, started, ended}
	if ph == phaseSynth {
		p.attempts++
	}
}

func (r *Recorder) slot(k partKey, wait time.Duration) {
	r.mu.Lock()
	r.part(k).slotWait = wait
	r.mu.Unlock()
}

func (r *Recorder) sector(id uint64) {
	r.mu.Lock()
	if r.sectors[id] == nil {
		r.sectors[id] = &sectorRecord{}
	}
	r.mu.Unlock()
}

func (r *Recorder) stored(id uint64) {
	r.mu.Lock()
	if s := r.sectors[id]; s != nil && s.stored.IsZero() {
		s.stored = time.Now()
	}
	r.mu.Unlock()
}
