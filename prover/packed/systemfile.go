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
