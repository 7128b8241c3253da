package packed

import (
	"fmt"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/c2flow/c2flow/internal/mapped"
)

// Layout is what reading a System back from its sections needs: its
// sizes and the width of its coefficient indices.
type Layout struct {
	Wires  int    `json:"wires"`
	Rows   int    `json:"rows"`
	Coeffs int    `json:"coeffs"`
	NNZ    [3]int `json:"nnz"`
	Wide   bool   `json:"wide"`
}

// Sections returns s's layout and its arrays as bytes (no copy), in the
// order SystemFrom takes them: the coefficients, then each matrix's row
// starts, columns and coefficient indices.
func (s *System) Sections() (Layout, [][]byte) {
	l := Layout{Wires: s.wires, Rows: s.rows, Coeffs: len(s.coeffs), Wide: s.m[A].coeff32 != nil}
	secs := [][]byte{mapped.Bytes(s.coeffs)}
	for k := range s.m {
		m := &s.m[k]
		l.NNZ[k] = len(m.col)
		coeff := mapped.Bytes(m.coeff16)
		if l.Wide {
			coeff = mapped.Bytes(m.coeff32)
		}
		secs = append(secs, mapped.Bytes(m.start), mapped.Bytes(m.col), coeff)
	}
	return l, secs
}

// SystemFrom returns the System whose arrays are secs (not copied: a
// mapped file's sections serve as they are), as Sections gave them. The
// sizes are checked; the entries are trusted, so secs must come from a
// file whose digest was checked.
func SystemFrom(l Layout, secs [][]byte) (*System, error) {
	if len(secs) != 10 || l.Wires < 1 || l.Wires > MaxLen || l.Rows < 0 || l.Coeffs < 0 {
		return nil, fmt.Errorf("packed system from %d sections: layout %+v", len(secs), l)
	}
	s := &System{wires: l.Wires, rows: l.Rows}
	var err error
	if s.coeffs, err = mapped.Slice[fr.Element](secs[0], l.Coeffs); err != nil {
		return nil, fmt.Errorf("packed system: coefficients: %w", err)
	}
	for k := range s.m {
		m := &s.m[k]
		sec := secs[1+3*k:]
		if l.NNZ[k] < 0 || l.NNZ[k] > MaxLen {
			return nil, fmt.Errorf("packed system: matrix %d of %d entries", k, l.NNZ[k])
		}
		if m.start, err = mapped.Slice[uint32](sec[0], l.Rows+1); err != nil {
			return nil, fmt.Errorf("packed system: matrix %d row starts: %w", k, err)
		}
		if m.col, err = mapped.Slice[uint32](sec[1], l.NNZ[k]); err != nil {
			return nil, fmt.Errorf("packed system: matrix %d columns: %w", k, err)
		}
		if l.Wide {
			m.coeff32, err = mapped.Slice[uint32](sec[2], l.NNZ[k])
		} else {
			m.coeff16, err = mapped.Slice[uint16](sec[2], l.NNZ[k])
		}
		if err != nil {
			return nil, fmt.Errorf("packed system: matrix %d coefficient indices: %w", k, err)
		}
		if m.start[0] != 0 || int(m.start[l.Rows]) != l.NNZ[k] {
			return nil, fmt.Errorf("packed system: matrix %d rows span %d to %d of %d entries", k, m.start[0], m.start[l.Rows], l.NNZ[k])
		}
	}
	s.kinds = kindsOf(s.coeffs)
	return s, nil
}

// Row appends the entries of row r of matrix m to dst.
func (s *System) Row(m, r int, dst []Entry) []Entry {
	mt := &s.m[m]
	for k := mt.start[r]; k < mt.start[r+1]; k++ {
		e := Entry{Col: mt.col[k]}
		if mt.coeff32 != nil {
			e.Coeff = mt.coeff32[k]
		} else {
			e.Coeff = uint32(mt.coeff16[k])
		}
		dst = append(dst, e)
	}
	return dst
}

// Coeff returns coefficient i.
func (s *System) Coeff(i int) fr.Element { return s.coeffs[i] }

// Unused returns, per wire, whether matrix m leaves it out of every row:
// the density of a Groth16 key (bellperson drops those wires' points).
func (s *System) Unused(m int) []bool {
	u := make([]bool, s.wires)
	for i := range u {
		u[i] = true
	}
	for _, c := range s.m[m].col {
		u[c] = false
	}
	return u
}

// Rows is a constraint system read row by row: what names a circuit (its
// digest is computed over its rows) and gives its density, whether it is
// a recorded System or a Repeated one.
type Rows interface {
	Wires() int
	Rows() int
	NNZ() (a, b, c int)
	Coeffs() int
	Coeff(i int) fr.Element
	// Row appends row r of matrix m to dst, its columns in increasing
	// order.
	Row(m, r int, dst []Entry) []Entry
}

var (
	_ Rows = (*System)(nil)
	_ Rows = (*Repeated)(nil)
)

// UnusedOf returns, per wire, whether matrix m of rs leaves it out of
// every row (System.Unused, for any Rows).
func UnusedOf(rs Rows, m int) []bool {
	if s, ok := rs.(*System); ok {
		return s.Unused(m)
	}
	u := make([]bool, rs.Wires())
	for i := range u {
		u[i] = true
	}
	var row []Entry
	for r := range rs.Rows() {
		row = rs.Row(m, r, row[:0])
		for _, e := range row {
			u[e.Col] = false
		}
	}
	return u
}

// oneID is the index of the coefficient 1 in the block's table, or the
// table's length where it has none (Coeffs then counts one more).
func (r *Repeated) oneID() int {
	for i, k := range r.block.kinds {
		if k == kindOne {
			return i
		}
	}
	return len(r.block.coeffs)
}

// NNZ is the entries of A, B and C over every copy, and A's of the
// per-input rows.
func (r *Repeated) NNZ() (a, b, c int) {
	a, b, c = r.block.NNZ()
	a, b, c = a*r.copies, b*r.copies, c*r.copies
	if r.inputRows {
		a += r.inputs()
	}
	return a, b, c
}

// Coeffs is the number of distinct coefficients: the block's, and 1
// where the per-input rows need it and the block has none.
func (r *Repeated) Coeffs() int {
	if r.inputRows && r.oneID() == len(r.block.coeffs) {
		return len(r.block.coeffs) + 1
	}
	return len(r.block.coeffs)
}

// Coeff returns coefficient i.
func (r *Repeated) Coeff(i int) fr.Element {
	if i == len(r.block.coeffs) {
		return one
	}
	return r.block.coeffs[i]
}

// Row appends row row of matrix m: a copy's row, its columns moved onto
// the copy's, or a per-input row (input i times 1 in A, empty in B and
// C), as Eval evaluates them.
func (r *Repeated) Row(m, row int, dst []Entry) []Entry {
	blockRows := r.block.Rows()
	body := r.copies * blockRows
	switch {
	case row < body:
		j, r0 := row/blockRows, row%blockRows
		cols := columnMap{inLimit: uint32(r.blockIn), inShift: uint32(j * r.blockIn),
			auxShift: uint32(r.inputs() + j*r.blockAux - 1 - r.blockIn)}
		n := len(dst)
		dst = r.block.Row(m, r0, dst)
		for k := n; k < len(dst); k++ {
			dst[k].Col = cols.of(dst[k].Col)
		}
	case r.inputRows && m == A && row < body+r.inputs():
		dst = append(dst, Entry{Col: uint32(row - body), Coeff: uint32(r.oneID())})
	}
	return dst
}

// Block returns the repeated block, its copies and its inputs (ONE
// aside).
func (r *Repeated) Block() (block *System, copies, blockInputs int) {
	return r.block, r.copies, r.blockIn
}
