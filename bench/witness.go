package bench

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"runtime"
	"runtime/debug"
	"sync"
	"time"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/c2flow/c2flow/filecoin/r1cs"
	"github.com/c2flow/c2flow/metrics"
	"github.com/c2flow/c2flow/prover"
	"github.com/c2flow/c2flow/prover/packed"
)

// WitnessCircuit is one large circuit as `c2flow bench witness` measures
// it: its sizes, its blank synthesis (the shape: counted, then recorded
// into the prover's system) and the synthesis of a partition's witness.
type WitnessCircuit struct {
	// Proof names it ("StackedDrg32GiBV1_1").
	Proof string
	// Partitions is how many partitions Build can make (the ones held).
	Partitions int
	// Counts are its sizes, bellperson's per-input constraints included.
	Counts r1cs.Counts
	// Blank synthesizes the circuit with no values (Counter, Recorder).
	Blank func(r1cs.System) error
	// System, if set, records the prover's system otherwise than by
	// recording Blank whole (a PoSt partition's: one sector's, repeated).
	System func() (packed.Evaluator, error)
	// Build synthesizes partition k's witness; Inputs are the public
	// inputs it must have (without ONE; nil: not checked).
	Build  func(k int) (func(*r1cs.Witness) error, error)
	Inputs func(k int) ([]fr.Element, error)
}

// WitnessOptions are what `bench witness` does beside one synthesis.
type WitnessOptions struct {
	Partition int
	// Hold synthesizes this many partitions (Partition on, taking turns
	// through Partitions) and holds them all at once; 0 or 1: one, with
	// the system recorded and the rows checked.
	Hold int
	// Chunk is the rows evaluated at once in the row check.
	Chunk int
	// Spill, if set, carries the synthesized partition through it and
	// back (the split fleet's path), each side's peak measured.
	Spill interface {
		Put(ctx context.Context, key string, size int64, write func(io.Writer) error) error
		Get(ctx context.Context, key string) (io.ReadCloser, error)
		Delete(ctx context.Context, key string) error
	}
	Log *slog.Logger
}

// WitnessReport is what one run measured. Peaks are the process's resident
// set (VmHWM), reset before each step; growth is above the RSS the step
// started at.
type WitnessReport struct {
	Proof     string
	Partition int
	Wires     int
	Zeros     int
	Ones      int
	Others    int
	// SynthTime and SynthPeakRSS are one partition's packed synthesis;
	// BaseRSS the process's RSS before it (the input decoded).
	SynthTime    time.Duration
	SynthPeakRSS int64
	BaseRSS      int64
	PackedBytes  int64
	// DenseBytes is what the partition held dense (W, a, b, c).
	DenseBytes int64
	// RecordTime, StaticBytes and RecordPeakRSS are the system's
	// recording and its memory.
	RecordTime    time.Duration
	StaticBytes   int64
	RecordPeakRSS int64
	// EvalTime is a, b, c evaluated over every row, chunk by chunk;
	// CheckTime the a·b = c comparison beside it. BadRow is the first row
	// that failed, -1 if none.
	EvalTime, CheckTime time.Duration
	BadRow              int
	// Held is how many partitions were held at once (Hold), HeldBytes
	// their packed bytes, HeldPeakRSS the process's peak.
	Held        int
	HeldBytes   int64
	HeldPeakRSS int64
	HoldTime    time.Duration
	// Spill: the encoded size, each side's time and peak growth.
	SpillBytes                   int64
	SpillPut, SpillGet           time.Duration
	SpillPutGrowth, SpillGetGrow int64
}

// Line is the report's last line: key=value pairs, as the partitions' log
// lines are.
func (r *WitnessReport) Line() string {
	rows := "unchecked" // held, not checked
	if r.StaticBytes > 0 {
		rows = fmt.Sprint(r.BadRow < 0)
	}
	s := fmt.Sprintf("proof=%s partition=%d synth_ms=%d synth_peak_rss_bytes=%d packed_bytes=%d static_bytes=%d eval_ms=%d rows_ok=%s",
		r.Proof, r.Partition, r.SynthTime.Milliseconds(), r.SynthPeakRSS, r.PackedBytes, r.StaticBytes, r.EvalTime.Milliseconds(), rows)
	if r.BadRow >= 0 {
		s += fmt.Sprintf(" bad_row=%d", r.BadRow)
	}
	s += fmt.Sprintf(" wires=%d zeros=%d ones=%d others=%d bit_share=%.4f dense_bytes=%d", r.Wires, r.Zeros, r.Ones, r.Others, r.bitShare(), r.DenseBytes)
	if r.Held > 1 {
		s += fmt.Sprintf(" held=%d held_bytes=%d held_peak_rss_bytes=%d", r.Held, r.HeldBytes, r.HeldPeakRSS)
	}
	if r.StaticBytes > 0 {
		s += fmt.Sprintf(" record_ms=%d record_peak_rss_bytes=%d check_ms=%d", r.RecordTime.Milliseconds(), r.RecordPeakRSS, r.CheckTime.Milliseconds())
	}
	if r.SpillBytes > 0 {
		s += fmt.Sprintf(" spill_bytes=%d spill_put_ms=%d spill_put_growth_bytes=%d spill_get_ms=%d spill_get_growth_bytes=%d",
			r.SpillBytes, r.SpillPut.Milliseconds(), r.SpillPutGrowth, r.SpillGet.Milliseconds(), r.SpillGetGrow)
	}
	return s
}

func (r *WitnessReport) bitShare() float64 {
	if r.Wires == 0 {
		return 0
	}
	return float64(r.Zeros+r.Ones) / float64(r.Wires)
}

// softLimit makes what the process holds now plus extra the Go runtime's
// soft memory limit, as a worker's --memory-budget makes its budget one
// (procflags.SoftMemoryLimit), and returns the function that restores the
// previous limit. Without it Go lets garbage grow to the live heap's size
// before a collection, and a peak would measure the collector's pacing,
// not what a step needs (a 32GiB WindowPoSt partition's synthesis: 8.3 GB
// peak RSS for 4.06 GB packed).
func softLimit(extra int64) func() {
	prev := debug.SetMemoryLimit(metrics.RSS() + extra)
	return func() { debug.SetMemoryLimit(prev) }
}

// startPeak returns the memory the Go runtime holds to the OS and resets
// the process's peak RSS to what it holds now, so the next VmHWM is the
// next step's.
func startPeak() int64 {
	runtime.GC()
	debug.FreeOSMemory()
	metrics.ResetPeakRSS()
	return metrics.RSS()
}

// Witness measures c: one partition synthesized packed (time, peak RSS,
// packed bytes, the 0/1 share), then either held with others (Hold), or
// its system recorded and its rows checked (a, b, c evaluated chunk by
// chunk: a·b = c), and optionally spilled and loaded back.
func Witness(ctx context.Context, c WitnessCircuit, o WitnessOptions) (*WitnessReport, error) {
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	r := &WitnessReport{Proof: c.Proof, Partition: o.Partition, BadRow: -1,
		DenseBytes: 32 * int64(c.Counts.Inputs+c.Counts.Aux+3*c.Counts.Constraints)}
	synth := func(k int) (*packed.Vector, time.Duration, error) {
		build, err := c.Build(k)
		if err != nil {
			return nil, 0, err
		}
		t0 := time.Now()
		w, inputs, err := r1cs.SynthesizePacked(ctx, c.Counts, build)
		if err != nil {
			return nil, 0, fmt.Errorf("%s partition %d: synthesize: %w", c.Proof, k, err)
		}
		took := time.Since(t0)
		if c.Inputs != nil {
			want, err := c.Inputs(k)
			if err != nil {
				return nil, 0, err
			}
			for i := range want {
				if !want[i].Equal(&inputs[i+1]) {
					return nil, 0, fmt.Errorf("%s partition %d: input %d is not the public data's", c.Proof, k, i+1)
				}
			}
		}
		return w, took, nil
	}

	r.BaseRSS = startPeak()
	restore := softLimit(packed.MaxBytes(c.Counts.Inputs+c.Counts.Aux) + 1<<30)
	w, took, err := synth(o.Partition)
	restore()
	if err != nil {
		return nil, err
	}
	r.SynthTime, r.SynthPeakRSS, r.PackedBytes = took, metrics.PeakRSS(), w.Bytes()
	r.Wires = w.Len()
	r.Zeros, r.Ones, r.Others = w.Counts()
	o.Log.Info("synthesized", "proof", c.Proof, "partition", o.Partition, "synth_ms", took.Milliseconds(), "packed_bytes", r.PackedBytes,
		"peak_rss_bytes", r.SynthPeakRSS, "base_rss_bytes", r.BaseRSS)

	if o.Hold > 1 {
		return r, hold(ctx, c, o, r, w, synth)
	}
	if o.Spill != nil {
		if err := spillRoundTrip(ctx, o, r, c.Proof, w); err != nil {
			return nil, err
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}

	// The system: counted, then recorded into arrays sized exactly.
	startPeak()
	t0 := time.Now()
	sys, err := recordSystem(c)
	if err != nil {
		return nil, err
	}
	r.RecordTime, r.StaticBytes, r.RecordPeakRSS = time.Since(t0), sys.Bytes(), metrics.PeakRSS()
	o.Log.Info("system recorded", "proof", c.Proof, "record_ms", r.RecordTime.Milliseconds(), "static_bytes", r.StaticBytes, "peak_rss_bytes", r.RecordPeakRSS)

	chunk := o.Chunk
	if chunk <= 0 {
		chunk = 1 << 22
	}
	rc, err := packed.CheckRows(sys, w, 0, sys.Rows(), chunk)
	if err != nil {
		return nil, err
	}
	r.EvalTime, r.CheckTime, r.BadRow = rc.Eval, rc.Check, rc.Bad
	o.Log.Info("rows checked", "proof", c.Proof, "eval_ms", r.EvalTime.Milliseconds(), "check_ms", r.CheckTime.Milliseconds(), "bad_row", r.BadRow)
	runtime.KeepAlive(sys)
	return r, nil
}

// recordSystem is c's system: c.System's, else Blank counted, then
// recorded into arrays sized exactly.
func recordSystem(c WitnessCircuit) (packed.Evaluator, error) {
	if c.System != nil {
		return c.System()
	}
	cnt := r1cs.NewCounter()
	if err := c.Blank(cnt); err != nil {
		return nil, fmt.Errorf("%s: count: %w", c.Proof, err)
	}
	st := cnt.Stats()
	// The system's arrays are live; the recording's garbage (its LCs)
	// would let the heap grow to twice them before a collection.
	restore := softLimit(packed.SystemBytes(st.Constraints+st.Inputs, st.ANNZ+st.BNNZ+st.CNNZ+st.Inputs) + 1<<30)
	rec := r1cs.NewRecorder(st)
	err := c.Blank(rec)
	restore()
	if err != nil {
		return nil, fmt.Errorf("%s: record: %w", c.Proof, err)
	}
	rec.AppendInputConstraints()
	sys, err := rec.Build()
	if err != nil {
		return nil, fmt.Errorf("%s: record: %w", c.Proof, err)
	}
	return sys, nil
}

// hold synthesizes o.Hold partitions in all (the first is w), two at a
// time on a machine of more than one core, holds them, and measures the
// process's peak.
func hold(ctx context.Context, c WitnessCircuit, o WitnessOptions, r *WitnessReport, w *packed.Vector, synth func(int) (*packed.Vector, time.Duration, error)) error {
	held := []*packed.Vector{w}
	var mu sync.Mutex
	t0 := time.Now()
	sem := make(chan struct{}, max(1, min(2, runtime.GOMAXPROCS(0))))
	errs := make(chan error, o.Hold)
	var wg sync.WaitGroup
	for i := 1; i < o.Hold; i++ {
		k := (o.Partition + i) % max(c.Partitions, 1)
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			if err := ctx.Err(); err != nil {
				errs <- err
				return
			}
			v, took, err := synth(k)
			if err != nil {
				errs <- err
				return
			}
			mu.Lock()
			held = append(held, v)
			n := len(held)
			mu.Unlock()
			o.Log.Info("synthesized and held", "proof", c.Proof, "partition", k, "synth_ms", took.Milliseconds(), "packed_bytes", v.Bytes(),
				"held", n, "rss_bytes", metrics.RSS(), "peak_rss_bytes", metrics.PeakRSS())
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		return err
	}
	r.HoldTime, r.Held, r.HeldPeakRSS = time.Since(t0), len(held), metrics.PeakRSS()
	for _, v := range held {
		r.HeldBytes += v.Bytes()
	}
	runtime.KeepAlive(held)
	return nil
}

// spillHeadroom is what a spill's side may hold beyond the witness: the
// store's part buffers and the stream's.
const spillHeadroom = 256 << 20

// spillRoundTrip writes w as a spilled solution through o.Spill and reads
// it back, as a synthesis host and a device host do, measuring each
// side's time and how far its peak RSS rose above where it started.
func spillRoundTrip(ctx context.Context, o WitnessOptions, r *WitnessReport, proof string, w *packed.Vector) error {
	sol := &prover.Solution{Partition: fmt.Sprintf("bench/%s/%d", proof, o.Partition), Job: "bench-witness", W: w}
	key := fmt.Sprintf("bench/%s/%d/%d", proof, o.Partition, time.Now().UnixNano())
	r.SpillBytes = sol.EncodedBytes()
	base := startPeak()
	restore := softLimit(spillHeadroom)
	t0 := time.Now()
	err := o.Spill.Put(ctx, key, r.SpillBytes, func(wr io.Writer) error {
		_, err := sol.WriteTo(wr)
		return err
	})
	restore()
	if err != nil {
		return fmt.Errorf("spill %s: %w", key, err)
	}
	r.SpillPut, r.SpillPutGrowth = time.Since(t0), metrics.PeakRSS()-base
	defer o.Spill.Delete(context.WithoutCancel(ctx), key)

	base = startPeak()
	restore = softLimit(w.Bytes() + spillHeadroom)
	t0 = time.Now()
	rc, err := o.Spill.Get(ctx, key)
	if err != nil {
		restore()
		return fmt.Errorf("load spill %s: %w", key, err)
	}
	back, err := prover.ReadSolution(rc, w.Len())
	rc.Close()
	restore()
	if err != nil {
		return fmt.Errorf("load spill %s: %w", key, err)
	}
	r.SpillGet, r.SpillGetGrow = time.Since(t0), metrics.PeakRSS()-base
	if back.Partition != sol.Partition || !sameVector(back.W, w) {
		return errors.New("spill: the partition read back is not the one written")
	}
	o.Log.Info("spilled and loaded", "spill_bytes", r.SpillBytes, "put_ms", r.SpillPut.Milliseconds(), "put_growth_bytes", r.SpillPutGrowth,
		"get_ms", r.SpillGet.Milliseconds(), "get_growth_bytes", r.SpillGetGrow)
	return nil
}

// sameVector compares two vectors by their encodings' digests.
func sameVector(a, b *packed.Vector) bool {
	if a.Len() != b.Len() || a.Others() != b.Others() {
		return false
	}
	x, y := sha256.New(), sha256.New()
	a.WriteTo(x)
	b.WriteTo(y)
	return bytes.Equal(x.Sum(nil), y.Sum(nil))
}
