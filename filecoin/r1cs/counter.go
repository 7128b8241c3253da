package r1cs

import (
	"fmt"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
)

// Counter is a [System] that only counts: constraints, variables, nonzero
// entries of A, B and C, and the A/B densities bellperson's prover tracks.
// It stores no matrix and no assignment; its memory is a few bitsets of one
// bit per variable (16 MiB for 130M aux variables), so it can measure the
// 32GiB circuit on a small machine.
type Counter struct {
	st              Stats
	aAux, bIn, bAux bitset
	canon           canonBuf
	overflow        error
	scr             scratch
}

var _ System = (*Counter)(nil)

// NewCounter returns an empty counter with One allocated.
func NewCounter() *Counter {
	return &Counter{st: Stats{Inputs: 1}}
}

// Alloc implements [System].
func (c *Counter) Alloc(fr.Element) Variable {
	if c.st.Aux >= MaxVariables {
		if c.overflow == nil {
			c.overflow = fmt.Errorf("counter: allocating aux variable: %w", ErrTooManyVariables)
		}
		return Aux(MaxVariables - 1)
	}
	c.st.Aux++
	return Aux(c.st.Aux - 1)
}

// AllocInput implements [System].
func (c *Counter) AllocInput(fr.Element) Variable {
	if c.st.Inputs >= MaxVariables {
		if c.overflow == nil {
			c.overflow = fmt.Errorf("counter: allocating input variable: %w", ErrTooManyVariables)
		}
		return Input(MaxVariables - 1)
	}
	c.st.Inputs++
	return Input(c.st.Inputs - 1)
}

// Enforce implements [System].
func (c *Counter) Enforce(_ string, a, b, cc LC) {
	c.st.Constraints++
	t := c.canon.canonical(a)
	c.st.ANNZ += len(t)
	for i := range t {
		if v := t[i].Var; v.IsAux() {
			c.aAux.set(v.Index())
		}
	}
	t = c.canon.canonical(b)
	c.st.BNNZ += len(t)
	for i := range t {
		if v := t[i].Var; v.IsAux() {
			c.bAux.set(v.Index())
		} else {
			c.bIn.set(v.Index())
		}
	}
	c.st.CNNZ += len(c.canon.canonical(cc))
}

// Push implements [System]; it does nothing.
func (c *Counter) Push(string) {}

// PushIndexed implements [System]; it does nothing.
func (c *Counter) PushIndexed(string, int) {}

// Pop implements [System]; it does nothing.
func (c *Counter) Pop() {}

// Scratch implements [System].
func (c *Counter) Scratch() (a, b, cc LC) { return c.scr.get() }

// WantsValues implements [System]; it is false.
func (c *Counter) WantsValues() bool { return false }

// Err returns the overflow error, if variables ran out.
func (c *Counter) Err() error { return c.overflow }

// Stats returns the counts so far (constraints as synthesized: the counter
// never adds bellperson's per-input constraints).
func (c *Counter) Stats() Stats {
	st := c.st
	st.AAuxDensity, st.BInputDensity, st.BAuxDensity = c.aAux.count(), c.bIn.count(), c.bAux.count()
	return st
}
