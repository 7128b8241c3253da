package r1cs

import (
	"fmt"
	"math/bits"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/c2flow/c2flow/internal/parallel"
)

// Matrix is one of A, B, C in compressed sparse rows: row r (constraint r)
// holds the entries Vars[RowStart[r]:RowStart[r+1]] with coefficients
// Coeffs[...] (indices into [Shape.Coeffs]). Within a row, variables are
// distinct, sorted (inputs first, then aux, ascending) and their
// coefficients nonzero.
type Matrix struct {
	RowStart []int
	Vars     []Variable
	Coeffs   []uint32
}

// Rows returns the number of rows.
func (m *Matrix) Rows() int { return max(len(m.RowStart)-1, 0) }

// NNZ returns the number of nonzero entries.
func (m *Matrix) NNZ() int { return len(m.Vars) }

func (m *Matrix) appendRow(terms []Term, id func(*fr.Element) uint32) {
	if len(m.RowStart) == 0 {
		m.RowStart = append(m.RowStart, 0)
	}
	for i := range terms {
		m.Vars = append(m.Vars, terms[i].Var)
		m.Coeffs = append(m.Coeffs, id(&terms[i].Coeff))
	}
	m.RowStart = append(m.RowStart, len(m.Vars))
}

// Shape is the shape recorder: a [System] that records the sparse matrices
// A, B, C in constraint order, with variables numbered as bellperson numbers
// them (inputs and aux separately, in allocation order). It is bellperson's
// KeypairAssembly. Values given to Alloc are ignored.
type Shape struct {
	// NumInputs counts inputs, One included; NumAux the aux variables.
	NumInputs, NumAux int
	// NumSynthesized is the number of constraints the circuit enforced,
	// without bellperson's per-input constraints.
	NumSynthesized int
	// InputConstraints records whether AppendInputConstraints was called:
	// then A, B, C have NumSynthesized + NumInputs rows.
	InputConstraints bool
	// Coeffs is the table of distinct coefficients, in order of first use.
	Coeffs []fr.Element
	// A, B, C are the matrices.
	A, B, C Matrix

	coeffID map[fr.Element]uint32
	// oneID, minusOneID cache the ids of 1 and −1, plus one (0: unknown).
	oneID, minusOneID uint32
	canon             canonBuf
	overflow          error
	scr               scratch
}

var _ System = (*Shape)(nil)

// NewShape returns an empty shape recorder with One allocated.
func NewShape() *Shape {
	s := &Shape{NumInputs: 1, coeffID: make(map[fr.Element]uint32)}
	for _, m := range []*Matrix{&s.A, &s.B, &s.C} {
		m.RowStart = []int{0}
	}
	return s
}

func (s *Shape) id(c *fr.Element) uint32 {
	// Fast paths for the commonest coefficients (ids stored plus one).
	switch {
	case c.IsOne():
		if s.oneID == 0 {
			s.oneID = s.lookup(c) + 1
		}
		return s.oneID - 1
	case c.Equal(&frMinus1):
		if s.minusOneID == 0 {
			s.minusOneID = s.lookup(c) + 1
		}
		return s.minusOneID - 1
	}
	return s.lookup(c)
}

func (s *Shape) lookup(c *fr.Element) uint32 {
	if id, ok := s.coeffID[*c]; ok {
		return id
	}
	id := uint32(len(s.Coeffs))
	s.Coeffs = append(s.Coeffs, *c)
	s.coeffID[*c] = id
	return id
}

// Alloc implements [System].
func (s *Shape) Alloc(fr.Element) Variable {
	if s.NumAux >= MaxVariables {
		if s.overflow == nil {
			s.overflow = fmt.Errorf("shape: allocating aux variable: %w", ErrTooManyVariables)
		}
		return Aux(MaxVariables - 1)
	}
	s.NumAux++
	return Aux(s.NumAux - 1)
}

// AllocInput implements [System]. Allocating an input after
// AppendInputConstraints is an error, reported by Err.
func (s *Shape) AllocInput(fr.Element) Variable {
	if s.InputConstraints && s.overflow == nil {
		s.overflow = fmt.Errorf("shape: input allocated after the per-input constraints: %w", ErrWrongAssignment)
	}
	if s.NumInputs >= MaxVariables {
		if s.overflow == nil {
			s.overflow = fmt.Errorf("shape: allocating input variable: %w", ErrTooManyVariables)
		}
		return Input(MaxVariables - 1)
	}
	s.NumInputs++
	return Input(s.NumInputs - 1)
}

// Enforce implements [System]. Enforcing after AppendInputConstraints is
// an error, reported by Err; the constraint is dropped.
func (s *Shape) Enforce(_ string, a, b, c LC) {
	if s.InputConstraints {
		if s.overflow == nil {
			s.overflow = fmt.Errorf("shape: constraint enforced after the per-input constraints: %w", ErrWrongAssignment)
		}
		return
	}
	s.record(a, b, c)
	s.NumSynthesized++
}

func (s *Shape) record(a, b, c LC) {
	s.A.appendRow(s.canon.canonical(a), s.id)
	s.B.appendRow(s.canon.canonical(b), s.id)
	s.C.appendRow(s.canon.canonical(c), s.id)
}

// Push implements [System]; it does nothing.
func (s *Shape) Push(string) {}

// PushIndexed implements [System]; it does nothing.
func (s *Shape) PushIndexed(string, int) {}

// Pop implements [System]; it does nothing.
func (s *Shape) Pop() {}

// Scratch implements [System].
func (s *Shape) Scratch() (a, b, c LC) { return s.scr.get() }

// WantsValues implements [System]; it is false.
func (s *Shape) WantsValues() bool { return false }

// Err returns the first misuse met: variables running out, or a
// constraint enforced after the per-input constraints.
func (s *Shape) Err() error { return s.overflow }

// NumConstraints returns the number of rows of A, B and C.
func (s *Shape) NumConstraints() int { return s.A.Rows() }

// AppendInputConstraints appends bellperson's per-input constraints
// input_i · 0 = 0 for every input, One included, as bellperson's parameter
// generator and prover do after synthesis. Once appended, no constraint
// may be added; calling it again does nothing.
func (s *Shape) AppendInputConstraints() {
	if s.InputConstraints {
		return
	}
	s.InputConstraints = true
	for i := 0; i < s.NumInputs; i++ {
		a, b, c := s.Scratch()
		s.record(a.Add(Input(i)), b, c)
	}
}

// Stats returns the sizes of the recorded system. The nonzero counts and
// densities cover the synthesized constraints only (not bellperson's
// per-input constraints), the figures the issue's `circuit info` reports.
func (s *Shape) Stats() Stats {
	st := Stats{Constraints: s.NumSynthesized, Inputs: s.NumInputs, Aux: s.NumAux}
	n := s.NumSynthesized
	st.ANNZ = s.A.RowStart[n]
	st.BNNZ = s.B.RowStart[n]
	st.CNNZ = s.C.RowStart[n]
	aAux := newBitset(s.NumAux)
	bAux := newBitset(s.NumAux)
	bIn := newBitset(s.NumInputs)
	for _, v := range s.A.Vars[:st.ANNZ] {
		if v.IsAux() {
			aAux.set(v.Index())
		}
	}
	for _, v := range s.B.Vars[:st.BNNZ] {
		if v.IsAux() {
			bAux.set(v.Index())
		} else {
			bIn.set(v.Index())
		}
	}
	st.AAuxDensity, st.BInputDensity, st.BAuxDensity = aAux.count(), bIn.count(), bAux.count()
	return st
}

// Column returns the index of v among all variables, inputs first:
// bellperson's and gnark's wire numbering (ONE is 0, then the other inputs,
// then aux).
func (s *Shape) Column(v Variable) int {
	if v.IsAux() {
		return s.NumInputs + v.Index()
	}
	return v.Index()
}

// EvalABC computes a, b, c = A·z, B·z, C·z for z = (inputs, aux), one entry
// per row, in parallel. This is the compiled path: with the shape recorded
// once, a synthesis need only compute the assignment.
func (s *Shape) EvalABC(inputs, aux []fr.Element) (a, b, c []fr.Element, err error) {
	if len(inputs) != s.NumInputs || len(aux) != s.NumAux {
		return nil, nil, nil, fmt.Errorf("shape: evaluating A, B, C on %d inputs and %d aux (want %d and %d): %w",
			len(inputs), len(aux), s.NumInputs, s.NumAux, ErrWrongAssignment)
	}
	rows := s.NumConstraints()
	a = make([]fr.Element, rows)
	b = make([]fr.Element, rows)
	c = make([]fr.Element, rows)
	parallel.Ranges(s.NumConstraints(), 4096, func(lo, hi int) {
		for r := lo; r < hi; r++ {
			a[r] = s.evalRow(&s.A, r, inputs, aux)
			b[r] = s.evalRow(&s.B, r, inputs, aux)
			c[r] = s.evalRow(&s.C, r, inputs, aux)
		}
	})
	return a, b, c, nil
}

// Check reports the first constraint the assignment does not satisfy, as an
// *[UnsatisfiedError] (whose Path is empty: shapes keep no names), or nil.
func (s *Shape) Check(inputs, aux []fr.Element) error {
	a, b, c, err := s.EvalABC(inputs, aux)
	if err != nil {
		return err
	}
	for r := range a {
		var p fr.Element
		p.Mul(&a[r], &b[r])
		if !p.Equal(&c[r]) {
			return fmt.Errorf("shape check: %w", &UnsatisfiedError{Index: r, A: a[r], B: b[r], C: c[r]})
		}
	}
	return nil
}

func (s *Shape) evalRow(m *Matrix, r int, inputs, aux []fr.Element) fr.Element {
	var acc, tmp fr.Element
	for k := m.RowStart[r]; k < m.RowStart[r+1]; k++ {
		v := m.Vars[k]
		var x *fr.Element
		if v.IsAux() {
			x = &aux[v.Index()]
		} else {
			x = &inputs[v.Index()]
		}
		acc = addTerm(acc, &s.Coeffs[m.Coeffs[k]], x, &tmp)
	}
	return acc
}

// bitset is a fixed-capacity set of small integers that grows on demand.
type bitset []uint64

func newBitset(n int) bitset { return make(bitset, (n+63)/64) }

func (b *bitset) set(i int) {
	w := i / 64
	if w >= len(*b) {
		*b = append(*b, make(bitset, w+1-len(*b))...)
	}
	(*b)[w] |= 1 << (uint(i) % 64)
}

func (b bitset) count() int {
	n := 0
	for _, w := range b {
		n += bits.OnesCount64(w)
	}
	return n
}
