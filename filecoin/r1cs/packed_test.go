package r1cs

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/c2flow/c2flow/internal/mapped"
	"github.com/c2flow/c2flow/internal/yield"
	"github.com/c2flow/c2flow/prover/packed"
)

// manyCubics synthesizes cubic for x = 0, 1, 2, ... n-1: inputs and aux
// interleaved, values 0, 1 and others.
func manyCubics(cs System, n int) {
	for x := 0; x < n; x++ {
		cubic(cs, uint64(x))
	}
}

// bothSystems are the systems of manyCubics(n), whose shape is shape:
// the Shape's converted, and a Recorder's.
func bothSystems(t *testing.T, shape *Shape, n int) map[string]*packed.System {
	t.Helper()
	fromShape, err := shape.System()
	if err != nil {
		t.Fatal(err)
	}
	counter := NewCounter()
	manyCubics(counter, n)
	rec := NewRecorder(counter.Stats())
	manyCubics(rec, n)
	rec.AppendInputConstraints()
	recorded, err := rec.Build()
	if err != nil {
		t.Fatal(err)
	}
	return map[string]*packed.System{"shape": fromShape, "recorder": recorded}
}

// The packed witness holds the dense one's values, and a, b, c evaluated
// from it by the system a Shape converts to, or a Recorder records, equal
// the witness builder's a, b, c element for element.
func TestPackedEvaluationMatchesDense(t *testing.T) {
	const n = 50
	dense := NewWitness(WitnessOptions{ABC: true, Check: true})
	manyCubics(dense, n)
	dense.AppendInputConstraints()
	if err := dense.Err(); err != nil {
		t.Fatal(err)
	}

	// The packed synthesis.
	w, inputs, err := SynthesizePacked(context.Background(), Counts{Inputs: len(dense.Inputs), Aux: len(dense.Aux), Constraints: len(dense.A)},
		func(pw *Witness) error { manyCubics(pw, n); return nil })
	if err != nil {
		t.Fatal(err)
	}
	if len(inputs) != len(dense.Inputs) {
		t.Fatalf("%d inputs", len(inputs))
	}
	if _, _, err := SynthesizePacked(context.Background(), Counts{Inputs: len(dense.Inputs), Aux: len(dense.Aux) + 1, Constraints: len(dense.A)},
		func(pw *Witness) error { manyCubics(pw, n); return nil }); !errors.Is(err, ErrWrongAssignment) {
		t.Fatalf("a circuit of other counts: %v", err)
	}
	for i, x := range append(append([]fr.Element(nil), dense.Inputs...), dense.Aux...) {
		if got := w.At(i); got != x {
			t.Fatalf("wire %d differs", i)
		}
	}

	shape := NewShape()
	manyCubics(shape, n)
	shape.AppendInputConstraints()
	for name, sys := range bothSystems(t, shape, n) {
		if sys.Rows() != len(dense.A) {
			t.Fatalf("%s: %d rows, the witness %d constraints", name, sys.Rows(), len(dense.A))
		}
		for m, want := range [][]fr.Element{dense.A, dense.B, dense.C} {
			got := make([]fr.Element, len(want))
			if err := sys.Eval(m, w, 0, got); err != nil {
				t.Fatal(err)
			}
			for r := range want {
				if got[r] != want[r] {
					t.Fatalf("%s: matrix %d row %d differs from the witness builder's", name, m, r)
				}
			}
		}
		if rc, err := packed.CheckRows(sys, w, 0, sys.Rows(), 7); err != nil || rc.Bad != -1 {
			t.Fatalf("%s: row check: %d, %v", name, rc.Bad, err)
		}
	}
}

func TestPackedWitnessRefusesChecking(t *testing.T) {
	w := NewWitness(WitnessOptions{Pack: packed.NewBuilder(0), Check: true})
	cubic(w, 3)
	if err := w.Err(); !errors.Is(err, ErrWrongAssignment) {
		t.Fatalf("a checking packed witness: %v", err)
	}
}

func TestRecorderRefusesOtherCounts(t *testing.T) {
	counter := NewCounter()
	manyCubics(counter, 3)
	rec := NewRecorder(counter.Stats())
	manyCubics(rec, 4)
	if _, err := rec.Build(); !errors.Is(err, ErrWrongAssignment) {
		t.Fatalf("a circuit larger than counted: %v", err)
	}
}

// A system's digest, computed from the system alone, is the digest of the
// shape it was made from, whether the Shape converted to it or a Recorder
// recorded it; another circuit's differs.
func TestSystemDigestIsTheShapes(t *testing.T) {
	const n = 50
	shape := NewShape()
	manyCubics(shape, n)
	shape.AppendInputConstraints()
	want, err := shape.Digest()
	if err != nil {
		t.Fatal(err)
	}
	for name, sys := range bothSystems(t, shape, n) {
		got, err := SystemDigest(sys, shape.NumInputs)
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Fatalf("%s: system digest %s, the shape's %s", name, got, want)
		}
	}
	other := NewShape()
	manyCubics(other, n+1)
	other.AppendInputConstraints()
	sys, err := other.System()
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := SystemDigest(sys, other.NumInputs); got == want {
		t.Fatal("another circuit has the same digest")
	}
}

// A system saved and mapped back evaluates as the one saved and keeps its
// digest; a file of another kind is refused.
func TestSystemSavedAndMapped(t *testing.T) {
	shape := NewShape()
	manyCubics(shape, 40)
	shape.AppendInputConstraints()
	sys, err := shape.System()
	if err != nil {
		t.Fatal(err)
	}
	digest, err := shape.Digest()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "c.sys")
	if err := SaveSystem(path, sys, shape.NumInputs, digest); err != nil {
		t.Fatal(err)
	}
	m, err := MapSystem(context.Background(), path, mapped.Stamps{Dir: filepath.Join(dir, "stamps")})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if m.Digest != digest || m.Inputs != shape.NumInputs || m.Rows() != sys.Rows() || m.Bytes() != sys.Bytes() {
		t.Fatalf("mapped: %s %d %d %d", m.Digest, m.Inputs, m.Rows(), m.Bytes())
	}
	if d, err := SystemDigest(m.System, m.Inputs); err != nil || d != digest {
		t.Fatalf("mapped system's digest %s, %v", d, err)
	}
	w, _, err := SynthesizePacked(context.Background(), Counts{Inputs: shape.NumInputs, Aux: shape.NumAux, Constraints: shape.NumConstraints()},
		func(pw *Witness) error { manyCubics(pw, 40); return nil })
	if err != nil {
		t.Fatal(err)
	}
	for mt := packed.A; mt <= packed.C; mt++ {
		want := make([]fr.Element, sys.Rows())
		got := make([]fr.Element, sys.Rows())
		if err := sys.Eval(mt, w, 0, want); err != nil {
			t.Fatal(err)
		}
		if err := m.Eval(mt, w, 0, got); err != nil {
			t.Fatal(err)
		}
		for r := range want {
			if got[r] != want[r] {
				t.Fatalf("matrix %d row %d differs once mapped", mt, r)
			}
		}
	}
	if err := mapped.Write(filepath.Join(dir, "other"), "other", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := MapSystem(context.Background(), filepath.Join(dir, "other"), mapped.Stamps{}); !errors.Is(err, mapped.ErrBadFile) {
		t.Fatalf("a file of another kind: %v", err)
	}
}

// A packed synthesis pauses at yield's checkpoints: canceled while it
// waits at one, it stops there with the context's error; under a gate
// held by urgent work it waits and finishes, the same witness, once the
// gate opens.
func TestSynthesisCheckpoints(t *testing.T) {
	const n = CheckpointEvery / 2 // cubic enforces more than 2 constraints
	counts := func() Counts {
		c := NewCounter()
		manyCubics(c, n)
		st := c.Stats()
		// SynthesizePacked appends bellperson's per-input constraints.
		return Counts{Inputs: st.Inputs, Aux: st.Aux, Constraints: st.Constraints + st.Inputs}
	}()
	built := 0
	build := func(w *Witness) error {
		for x := range n {
			cubic(w, uint64(x))
			built = x + 1
		}
		return nil
	}
	g := yield.New(time.Millisecond, time.Minute)
	{
		// Canceled while it waits at a checkpoint: it stops there.
		release := g.Hold()
		ctx, cancel := context.WithCancel(yield.Yielding(context.Background(), g))
		cancel()
		if _, _, err := SynthesizePacked(ctx, counts, build); !errors.Is(err, context.Canceled) {
			t.Fatalf("a synthesis canceled at a checkpoint: %v", err)
		}
		release()
		time.Sleep(20 * time.Millisecond) // the linger
	}
	g = yield.New(time.Millisecond, time.Minute)
	release := g.Hold()
	ctx := yield.Yielding(context.Background(), g)
	type result struct {
		w   *packed.Vector
		err error
	}
	ch := make(chan result, 1)
	built = 0
	go func() {
		w, _, err := SynthesizePacked(ctx, counts, build)
		ch <- result{w, err}
	}()
	time.Sleep(200 * time.Millisecond)
	select {
	case r := <-ch:
		t.Fatalf("the synthesis went past a held gate: %v", r.err)
	default:
	}
	if st := g.Stats(); st.Yields != 0 {
		t.Fatalf("stats %+v before the release", st)
	}
	release()
	r := <-ch
	if r.err != nil || r.w.Len() != counts.Inputs+counts.Aux || built != n {
		t.Fatalf("after the release: %v, %d wires, %d cubics built", r.err, r.w.Len(), built)
	}
	if st := g.Stats(); st.Yields != 1 {
		t.Errorf("stats %+v: one checkpoint waited", st)
	}
}
