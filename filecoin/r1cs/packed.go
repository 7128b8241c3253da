package r1cs

import (
	"context"
	"fmt"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/c2flow/c2flow/internal/yield"
	"github.com/c2flow/c2flow/prover/packed"
)

// System returns the shape as the prover's recorded constraint system,
// which evaluates a, b and c from a packed assignment (inputs, then aux):
// the same rows, bellperson's per-input constraints included if they were
// appended, and the same coefficient table.
func (s *Shape) System() (*packed.System, error) {
	if s.overflow != nil {
		return nil, fmt.Errorf("shape to system: %w", s.overflow)
	}
	rows := s.NumConstraints()
	b := packed.NewSystemBuilder(s.NumInputs+s.NumAux, packed.Sizes{Rows: rows, NNZ: [3]int{s.A.NNZ(), s.B.NNZ(), s.C.NNZ()}})
	for i := range s.Coeffs {
		if id := b.Coeff(&s.Coeffs[i]); int(id) != i {
			return nil, fmt.Errorf("shape to system: coefficient %d became %d", i, id)
		}
	}
	var row []packed.Entry
	for mi, m := range []*Matrix{&s.A, &s.B, &s.C} {
		for r := 0; r < rows; r++ {
			row = row[:0]
			for k := m.RowStart[r]; k < m.RowStart[r+1]; k++ {
				row = append(row, packed.Entry{Col: uint32(s.Column(m.Vars[k])), Coeff: m.Coeffs[k]})
			}
			b.AppendRow(mi, row)
		}
	}
	sys, err := b.Build()
	if err != nil {
		return nil, fmt.Errorf("shape to system: %w", err)
	}
	return sys, nil
}

// Recorder records a circuit straight into the prover's constraint system
// (packed.System), for circuits whose Shape would not fit beside it: a
// 32GiB PoRep partition's Shape is about 9 GB, its System 5.9 GB. Its
// sizes must be known first (a Counter's Stats over the blank circuit):
// the System's arrays are allocated once, exactly, and the aux variables'
// columns follow the inputs. Values given to Alloc are ignored.
type Recorder struct {
	st             Stats
	inputs, aux    int
	inputConstr    bool
	b              *packed.SystemBuilder
	canon          canonBuf
	row            []packed.Entry
	oneID, minusID uint32 // ids of 1 and −1, plus one (0: unknown)
	err            error
	scr            scratch
}

var _ System = (*Recorder)(nil)

// NewRecorder returns a recorder of a circuit of st's sizes (constraints
// as synthesized; AppendInputConstraints adds bellperson's per-input
// ones), with One allocated.
func NewRecorder(st Stats) *Recorder {
	rows := st.Constraints + st.Inputs
	return &Recorder{st: st, inputs: 1, b: packed.NewSystemBuilder(st.Inputs+st.Aux,
		packed.Sizes{Rows: rows, NNZ: [3]int{st.ANNZ + st.Inputs, st.BNNZ, st.CNNZ}})}
}

func (r *Recorder) fail(format string, args ...any) {
	if r.err == nil {
		r.err = fmt.Errorf("recorder: "+format, args...)
	}
}

// Alloc implements [System].
func (r *Recorder) Alloc(fr.Element) Variable {
	if r.aux >= r.st.Aux {
		r.fail("more than the %d aux variables counted: %w", r.st.Aux, ErrWrongAssignment)
		return Aux(0)
	}
	r.aux++
	return Aux(r.aux - 1)
}

// AllocInput implements [System].
func (r *Recorder) AllocInput(fr.Element) Variable {
	if r.inputs >= r.st.Inputs || r.inputConstr {
		r.fail("an input past the %d counted, or after the per-input constraints: %w", r.st.Inputs, ErrWrongAssignment)
		return One
	}
	r.inputs++
	return Input(r.inputs - 1)
}

func (r *Recorder) coeff(c *fr.Element) uint32 {
	switch {
	case c.IsOne():
		if r.oneID == 0 {
			r.oneID = r.b.Coeff(c) + 1
		}
		return r.oneID - 1
	case c.Equal(&frMinus1):
		if r.minusID == 0 {
			r.minusID = r.b.Coeff(c) + 1
		}
		return r.minusID - 1
	}
	return r.b.Coeff(c)
}

func (r *Recorder) appendRow(m int, lc LC) {
	t := r.canon.canonical(lc)
	r.row = r.row[:0]
	for i := range t {
		col := t[i].Var.Index()
		if t[i].Var.IsAux() {
			col += r.st.Inputs
		}
		r.row = append(r.row, packed.Entry{Col: uint32(col), Coeff: r.coeff(&t[i].Coeff)})
	}
	r.b.AppendRow(m, r.row)
}

// Enforce implements [System].
func (r *Recorder) Enforce(_ string, a, b, c LC) {
	if r.inputConstr {
		r.fail("a constraint after the per-input constraints: %w", ErrWrongAssignment)
		return
	}
	r.appendRow(packed.A, a)
	r.appendRow(packed.B, b)
	r.appendRow(packed.C, c)
}

// AppendInputConstraints appends bellperson's per-input constraints, as
// [Shape.AppendInputConstraints] does.
func (r *Recorder) AppendInputConstraints() {
	if r.inputConstr {
		return
	}
	r.inputConstr = true
	for i := 0; i < r.inputs; i++ {
		a, b, c := r.Scratch()
		r.appendRow(packed.A, a.Add(Input(i)))
		r.appendRow(packed.B, b)
		r.appendRow(packed.C, c)
	}
}

// Push implements [System]; it does nothing.
func (r *Recorder) Push(string) {}

// PushIndexed implements [System]; it does nothing.
func (r *Recorder) PushIndexed(string, int) {}

// Pop implements [System]; it does nothing.
func (r *Recorder) Pop() {}

// Scratch implements [System].
func (r *Recorder) Scratch() (a, b, c LC) { return r.scr.get() }

// WantsValues implements [System]; it is false.
func (r *Recorder) WantsValues() bool { return false }

// Build returns the recorded system; the counts must be the ones given.
func (r *Recorder) Build() (*packed.System, error) {
	if r.err != nil {
		return nil, r.err
	}
	if r.inputs != r.st.Inputs || r.aux != r.st.Aux {
		return nil, fmt.Errorf("recorder: %d inputs and %d aux recorded, %d and %d counted: %w", r.inputs, r.aux, r.st.Inputs, r.st.Aux, ErrWrongAssignment)
	}
	sys, err := r.b.Build()
	if err != nil {
		return nil, fmt.Errorf("recorder: %w", err)
	}
	return sys, nil
}

// Counts are a circuit's sizes as a prover sees them: inputs (ONE
// included), aux variables, and constraints with bellperson's per-input
// ones.
type Counts struct {
	Inputs, Aux, Constraints int
}

// SynthesizePacked runs build on a witness builder whose assignment is
// packed as it is allocated (WitnessOptions.Pack), then appends
// bellperson's per-input constraints, and returns the wire vector (inputs,
// then aux) and the inputs. The inputs come first in the wire vector but
// are allocated along the way: their slots are reserved as field elements
// and set last. The circuit must have exactly the sizes n. No dense
// vector of the circuit's size is made. The build pauses at yield's
// checkpoints every CheckpointEvery constraints, where ctx is work that
// yields to urgent work, and ends with ctx's error if ctx ends while it
// waits there.
func SynthesizePacked(ctx context.Context, n Counts, build func(*Witness) error) (*packed.Vector, []fr.Element, error) {
	b := packed.NewBuilder(n.Inputs + n.Aux)
	var zero fr.Element
	for range n.Inputs {
		b.AppendOther(&zero)
	}
	wit := NewWitness(WitnessOptions{Pack: b, InputsHint: n.Inputs, Checkpoint: func() error { return yield.Point(ctx) }})
	if err := build(wit); err != nil {
		if stopped := wit.Err(); stopped != nil && ctx.Err() != nil {
			return nil, nil, stopped
		}
		return nil, nil, err
	}
	wit.AppendInputConstraints()
	if err := wit.Err(); err != nil {
		return nil, nil, err
	}
	if len(wit.Inputs) != n.Inputs || wit.NumAux() != n.Aux || wit.NumConstraints() != n.Constraints {
		return nil, nil, fmt.Errorf("witness of %d inputs, %d aux, %d constraints; the circuit has %d, %d, %d: %w",
			len(wit.Inputs), wit.NumAux(), wit.NumConstraints(), n.Inputs, n.Aux, n.Constraints, ErrWrongAssignment)
	}
	for i := range wit.Inputs {
		if err := b.SetOther(i, &wit.Inputs[i]); err != nil {
			return nil, nil, err
		}
	}
	return b.Vector(), wit.Inputs, nil
}
