package packed

import (
	"fmt"
	"sync"
	"time"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/c2flow/c2flow/internal/parallel"
)

// Evaluator evaluates a, b and c of a constraint system from a packed
// assignment: a recorded System, or a Repeated one (a PoSt partition's
// sectors).
type Evaluator interface {
	// Wires is the length of the assignments it evaluates; Rows the
	// number of constraints.
	Wires() int
	Rows() int
	// Eval writes rows [lo, lo+len(dst)) of matrix m (A, B or C) times
	// w into dst; rows past Rows are zero.
	Eval(m int, w *Vector, lo int, dst []fr.Element) error
	// Bytes is the memory it holds.
	Bytes() int64
}

var (
	_ Evaluator = (*System)(nil)
	_ Evaluator = (*Repeated)(nil)
)

// FirstDiff evaluates matrix m on w over the rows of want and returns the
// first row whose value differs from want's, -1 if none: a, b, c made
// from a packed assignment checked against a dense builder's.
func FirstDiff(e Evaluator, m int, w *Vector, want []fr.Element) (int, error) {
	got := make([]fr.Element, len(want))
	if err := e.Eval(m, w, 0, got); err != nil {
		return -1, err
	}
	for r := range want {
		if got[r] != want[r] {
			return r, nil
		}
	}
	return -1, nil
}

// RowCheck is what CheckRows found and took.
type RowCheck struct {
	// Bad is the first row whose a·b differs from c, -1 if none.
	Bad int
	// Eval is the time a, b, c took to evaluate, Check their comparison.
	Eval, Check time.Duration
}

// CheckRows evaluates rows [lo, hi) of A, B and C on w, chunk rows at a
// time (the memory used is three chunks, never the dense vectors), and
// compares a·b with c row by row.
func CheckRows(e Evaluator, w *Vector, lo, hi, chunk int) (RowCheck, error) {
	rc := RowCheck{Bad: -1}
	hi = min(hi, e.Rows())
	size := min(max(chunk, 1), max(hi-lo, 0))
	bufs := [3][]fr.Element{make([]fr.Element, size), make([]fr.Element, size), make([]fr.Element, size)}
	for at := lo; at < hi; at += size {
		n := min(size, hi-at)
		a, b, c := bufs[A][:n], bufs[B][:n], bufs[C][:n]
		t0 := time.Now()
		for m, dst := range [][]fr.Element{a, b, c} {
			if err := e.Eval(m, w, at, dst); err != nil {
				return rc, err
			}
		}
		t1 := time.Now()
		rc.Eval += t1.Sub(t0)
		bad := firstBadRow(a, b, c)
		rc.Check += time.Since(t1)
		if bad >= 0 {
			rc.Bad = at + bad
			return rc, nil
		}
	}
	return rc, nil
}

// firstBadRow is the first r with a[r]·b[r] ≠ c[r], -1 if none, compared
// on every core.
func firstBadRow(a, b, c []fr.Element) int {
	bad := -1
	var mu sync.Mutex
	parallel.Ranges(len(a), minRows, func(x, y int) {
		var p fr.Element
		for r := x; r < y; r++ {
			if p.Mul(&a[r], &b[r]); p != c[r] {
				mu.Lock()
				if bad < 0 || r < bad {
					bad = r
				}
				mu.Unlock()
				return
			}
		}
	})
	return bad
}

// Repeated is a constraint system made of copies of one block, as a PoSt
// partition is its sectors' circuit repeated: copy j's rows are the
// block's with its inputs (all but ONE, columns 1 to BlockInputs) moved to
// copy j's and its aux to copy j's; the assignment holds ONE, every
// copy's inputs in copy order, then every copy's aux. With input rows,
// bellperson's per-input constraints (input_i · 0 = 0, ONE included)
// follow. A 32GiB WindowPoSt partition is 2349 copies of a 53,333-row
// sector: its Repeated holds one sector's rows, not 8.4 GB of them.
type Repeated struct {
	block                     *System
	copies, blockIn, blockAux int
	inputRows                 bool
}

// NewRepeated is copies copies of block, whose wires are ONE, blockInputs
// inputs and its aux.
func NewRepeated(block *System, copies, blockInputs int, inputRows bool) (*Repeated, error) {
	aux := block.Wires() - 1 - blockInputs
	if copies < 1 || blockInputs < 0 || aux < 0 {
		return nil, fmt.Errorf("packed: %d copies of a block of %d wires with %d inputs", copies, block.Wires(), blockInputs)
	}
	r := &Repeated{block: block, copies: copies, blockIn: blockInputs, blockAux: aux, inputRows: inputRows}
	if w := int64(r.inputs()) + int64(copies)*int64(aux); w > MaxLen || int64(copies)*int64(block.Rows()) > MaxLen {
		return nil, fmt.Errorf("packed: %d copies of a block of %d wires and %d rows: too large", copies, block.Wires(), block.Rows())
	}
	return r, nil
}

// inputs counts the assignment's inputs, ONE included.
func (r *Repeated) inputs() int { return 1 + r.copies*r.blockIn }

// Wires implements Evaluator.
func (r *Repeated) Wires() int { return r.inputs() + r.copies*r.blockAux }

// Rows implements Evaluator.
func (r *Repeated) Rows() int {
	n := r.copies * r.block.Rows()
	if r.inputRows {
		n += r.inputs()
	}
	return n
}

// Bytes implements Evaluator: the block's.
func (r *Repeated) Bytes() int64 { return r.block.Bytes() }

// Eval implements Evaluator.
func (r *Repeated) Eval(m int, w *Vector, lo int, dst []fr.Element) error {
	if w.Len() != r.Wires() {
		return fmt.Errorf("packed repeated system: an assignment of %d wires, the system has %d", w.Len(), r.Wires())
	}
	if err := checkEval(m, lo); err != nil {
		return err
	}
	blockRows := r.block.Rows()
	body := r.copies * blockRows
	parallel.Ranges(len(dst), minRows, func(a, b int) {
		for at := a; at < b; {
			row := lo + at
			switch {
			case row < body:
				j, r0 := row/blockRows, row%blockRows
				n := min(b-at, blockRows-r0) // to the end of this copy
				cols := columnMap{inLimit: uint32(r.blockIn), inShift: uint32(j * r.blockIn),
					auxShift: uint32(r.inputs() + j*r.blockAux - 1 - r.blockIn)}
				r.block.evalRange(m, w, r0, dst[at:at+n], cols)
				at += n
			case r.inputRows && row < body+r.inputs() && m == A:
				dst[at] = w.At(row - body) // input_i · 0 = 0
				at++
			default:
				dst[at] = fr.Element{}
				at++
			}
		}
	})
	return nil
}
