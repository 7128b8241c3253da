package packed

import (
	"fmt"
	"math"
	"math/bits"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/c2flow/c2flow/internal/parallel"
)

// minRows is the fewest rows a goroutine evaluates.
const minRows = 1 << 12

// System is a rank-1 constraint system recorded to evaluate a, b and c
// from an assignment: the matrices A, B and C in compressed sparse rows
// over the wire vector, numbered as gnark and bellperson number it (ONE,
// the other inputs, then the aux variables). A 32GiB PoRep partition's
// (130M rows, 722M nonzeros) is about 5.9 GB: 4 bytes a row and matrix,
// 6 bytes a nonzero (a 32-bit column, a 16-bit coefficient index),
// against cuzk's 25.7 GiB pre-compiled constraint evaluator.
//
// A System is immutable once built and safe for concurrent use.
type System struct {
	wires, rows int
	coeffs      []fr.Element
	kinds       []coeffKind
	m           [3]Matrix
}

// Matrix is one of A, B, C: row r's entries are Start[r] to Start[r+1].
type Matrix struct {
	start   []uint32
	col     []uint32
	coeff16 []uint16 // coefficient indices while the table has at most 2^16
	coeff32 []uint32 // coefficient indices past that
}

// NNZ is the number of entries.
func (m *Matrix) NNZ() int { return len(m.col) }

func (m *Matrix) bytes() int64 {
	return int64(cap(m.start))*4 + int64(cap(m.col))*4 + int64(cap(m.coeff16))*2 + int64(cap(m.coeff32))*4
}

type coeffKind uint8

const (
	kindGeneral coeffKind = iota
	kindOne
	kindMinusOne
)

// The matrices of a system.
const (
	A = iota
	B
	C
)

// Wires is the length of the assignments the system evaluates.
func (s *System) Wires() int { return s.wires }

// Rows is the number of constraints.
func (s *System) Rows() int { return s.rows }

// NNZ returns the entries of A, B and C.
func (s *System) NNZ() (a, b, c int) { return s.m[A].NNZ(), s.m[B].NNZ(), s.m[C].NNZ() }

// Coeffs is the number of distinct coefficients.
func (s *System) Coeffs() int { return len(s.coeffs) }

// Bytes is the memory the system holds: what a device host counts beside
// the proving key for every circuit it proves.
func (s *System) Bytes() int64 {
	if s == nil {
		return 0
	}
	return s.m[A].bytes() + s.m[B].bytes() + s.m[C].bytes() + int64(cap(s.coeffs))*fr.Bytes + int64(cap(s.kinds))
}

// SystemBytes is what a system of rows rows and nnz nonzeros in all
// holds, with at most 2^16 distinct coefficients (the coefficient table
// left out: a few KB).
func SystemBytes(rows, nnz int) int64 { return 3*int64(rows+1)*4 + int64(nnz)*6 }

// Sizes are a system's sizes, to preallocate a SystemBuilder exactly: a
// 32GiB partition's arrays grown by append would briefly need twice
// their memory.
type Sizes struct {
	Rows int
	NNZ  [3]int
}

// SystemBuilder records a System row by row.
type SystemBuilder struct {
	s   System
	ids map[fr.Element]uint32
	err error
}

// NewSystemBuilder returns a builder of a system over wires wires, with
// room for hint.
func NewSystemBuilder(wires int, hint Sizes) *SystemBuilder {
	b := &SystemBuilder{s: System{wires: wires}, ids: map[fr.Element]uint32{}}
	for k := range b.s.m {
		m := &b.s.m[k]
		m.start = make([]uint32, 1, hint.Rows+1)
		m.col = make([]uint32, 0, hint.NNZ[k])
		m.coeff16 = make([]uint16, 0, hint.NNZ[k])
	}
	if wires < 1 || wires > MaxLen {
		b.err = fmt.Errorf("packed system: %d wires", wires)
	}
	return b
}

// Coeff returns the index of coefficient c (not zero), adding it on first
// use.
func (b *SystemBuilder) Coeff(c *fr.Element) uint32 {
	if id, ok := b.ids[*c]; ok {
		return id
	}
	id := uint32(len(b.s.coeffs))
	b.s.coeffs = append(b.s.coeffs, *c)
	b.ids[*c] = id
	if id == 1<<16 {
		b.widen()
	}
	return id
}

// widen moves every matrix to 32-bit coefficient indices.
func (b *SystemBuilder) widen() {
	for k := range b.s.m {
		m := &b.s.m[k]
		if m.coeff32 != nil {
			continue
		}
		m.coeff32 = make([]uint32, len(m.coeff16), cap(m.coeff16))
		for i, c := range m.coeff16 {
			m.coeff32[i] = uint32(c)
		}
		m.coeff16 = nil
	}
}

// Entry is one nonzero of a row: a wire and a coefficient index (Coeff).
type Entry struct {
	Col, Coeff uint32
}

// AppendRow appends the next row of matrix m (A, B or C). Every matrix
// gets the same number of rows (an empty row is a zero LC).
func (b *SystemBuilder) AppendRow(m int, row []Entry) {
	if b.err != nil {
		return
	}
	mt := &b.s.m[m]
	for _, e := range row {
		if int(e.Col) >= b.s.wires || int(e.Coeff) >= len(b.s.coeffs) {
			b.err = fmt.Errorf("packed system: matrix %d row %d: wire %d of %d, coefficient %d of %d",
				m, len(mt.start)-1, e.Col, b.s.wires, e.Coeff, len(b.s.coeffs))
			return
		}
		mt.col = append(mt.col, e.Col)
		if mt.coeff32 != nil {
			mt.coeff32 = append(mt.coeff32, e.Coeff)
		} else {
			mt.coeff16 = append(mt.coeff16, uint16(e.Coeff))
		}
	}
	if len(mt.col) > MaxLen {
		b.err = fmt.Errorf("packed system: matrix %d has more than %d entries", m, MaxLen)
		return
	}
	mt.start = append(mt.start, uint32(len(mt.col)))
}

// Build returns the system; the builder must not be used again.
func (b *SystemBuilder) Build() (*System, error) {
	if b.err != nil {
		return nil, b.err
	}
	s := &b.s
	s.rows = len(s.m[A].start) - 1
	for k := range s.m {
		if r := len(s.m[k].start) - 1; r != s.rows {
			return nil, fmt.Errorf("packed system: matrix %d has %d rows, A has %d", k, r, s.rows)
		}
	}
	s.kinds = kindsOf(s.coeffs)
	b.ids = nil
	out := *s
	b.s = System{}
	return &out, nil
}

// Eval writes rows [lo, lo+len(dst)) of matrix m (A, B or C) times the
// assignment w into dst, on every core; rows past the system's are zero
// (the padding to an NTT domain).
func (s *System) Eval(m int, w *Vector, lo int, dst []fr.Element) error {
	if w.Len() != s.wires {
		return fmt.Errorf("packed system: an assignment of %d wires, the system has %d", w.Len(), s.wires)
	}
	if err := checkEval(m, lo); err != nil {
		return err
	}
	hi := min(lo+len(dst), s.rows)
	if hi < lo+len(dst) {
		clear(dst[max(hi-lo, 0):])
	}
	if hi <= lo {
		return nil
	}
	parallel.Ranges(hi-lo, minRows, func(a, b int) { s.evalRange(m, w, lo+a, dst[a:b], sameColumns) })
	return nil
}

func checkEval(m, lo int) error {
	if m < A || m > C || lo < 0 {
		return fmt.Errorf("packed system: matrix %d from row %d", m, lo)
	}
	return nil
}

// columnMap moves the system's columns onto an assignment's: ONE stays,
// columns 1 to inLimit move by inShift, the others by auxShift (a copy of
// a Repeated block); sameColumns moves none.
type columnMap struct{ inLimit, inShift, auxShift uint32 }

var sameColumns = columnMap{inLimit: math.MaxUint32}

func (c columnMap) of(i uint32) uint32 {
	switch {
	case i == 0:
		return 0
	case i <= c.inLimit:
		return i + c.inShift
	}
	return i + c.auxShift
}

// evalRange evaluates rows [lo, lo+len(dst)) of matrix m, its columns
// moved by cols, on one goroutine.
func (s *System) evalRange(m int, w *Vector, lo int, dst []fr.Element, cols columnMap) {
	mt := &s.m[m]
	if mt.coeff32 != nil {
		evalRows(s, mt, mt.coeff32, w, lo, dst, cols)
	} else {
		evalRows(s, mt, mt.coeff16, w, lo, dst, cols)
	}
}

func evalRows[T uint16 | uint32](s *System, mt *Matrix, coeff []T, w *Vector, lo int, dst []fr.Element, cols columnMap) {
	words, others, rank := w.words, w.others, w.rank
	for j := range dst {
		r := lo + j
		var acc, t fr.Element
		for k := mt.start[r]; k < mt.start[r+1]; k++ {
			i := mt.col[k]
			if cols != sameColumns {
				i = cols.of(i)
			}
			b := (i >> 6) << 1
			bit := uint64(1) << (i & 63)
			if words[b]&bit == 0 {
				continue // zero
			}
			c := coeff[k]
			if words[b+1]&bit == 0 { // one: the coefficient itself
				switch s.kinds[c] {
				case kindOne:
					acc.Add(&acc, &one)
				case kindMinusOne:
					acc.Sub(&acc, &one)
				default:
					acc.Add(&acc, &s.coeffs[c])
				}
				continue
			}
			k := int(rank[i>>6]) + popcountBelow(words[b+1], i&63)
			x := &others[k>>otherShift][k&otherMask]
			switch s.kinds[c] {
			case kindOne:
				acc.Add(&acc, x)
			case kindMinusOne:
				acc.Sub(&acc, x)
			default:
				t.Mul(&s.coeffs[c], x)
				acc.Add(&acc, &t)
			}
		}
		dst[j] = acc
	}
}

func popcountBelow(w uint64, i uint32) int { return bits.OnesCount64(w & (uint64(1)<<i - 1)) }

// kindsOf marks the coefficients 1 and −1, which evaluation adds and
// subtracts without a multiplication.
func kindsOf(coeffs []fr.Element) []coeffKind {
	var minusOne fr.Element
	minusOne.Neg(&one)
	kinds := make([]coeffKind, len(coeffs))
	for i := range coeffs {
		switch {
		case coeffs[i] == one:
			kinds[i] = kindOne
		case coeffs[i] == minusOne:
			kinds[i] = kindMinusOne
		}
	}
	return kinds
}
