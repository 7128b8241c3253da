package r1cs

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
)

// canonicalRef is the obvious canonical form: a stable sort by variable,
// then repeated variables summed and zero coefficients dropped.
func canonicalRef(lc LC) []Term {
	s := slices.Clone(lc)
	slices.SortStableFunc(s, func(a, b Term) int {
		switch {
		case a.Var < b.Var:
			return -1
		case a.Var > b.Var:
			return 1
		}
		return 0
	})
	var out []Term
	for i := 0; i < len(s); {
		t := s[i]
		j := i + 1
		for ; j < len(s) && s[j].Var == t.Var; j++ {
			t.Coeff.Add(&t.Coeff, &s[j].Coeff)
		}
		if !t.Coeff.IsZero() {
			out = append(out, t)
		}
		i = j
	}
	return out
}

// TestCanonical compares the run-merging canonical form with the
// reference on LCs shaped as circuits build them: ascending runs (sorted,
// a few, many, one per term), repeated variables that sum or cancel, zero
// coefficients, inputs mixed with aux, reusing one buffer throughout.
func TestCanonical(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var cb canonBuf
	coeff := func() fr.Element {
		var c fr.Element
		switch rng.IntN(6) {
		case 0: // zero
		case 1:
			c.SetOne()
		case 2:
			c.SetOne()
			c.Neg(&c)
		default:
			c.SetUint64(rng.Uint64())
		}
		return c
	}
	variable := func(span int) Variable {
		if rng.IntN(8) == 0 {
			return Input(rng.IntN(4))
		}
		return Aux(rng.IntN(span))
	}
	for iter := range 20000 {
		n := rng.IntN(300)
		if iter%4 == 0 {
			n = rng.IntN(16)
		}
		span := 1 + rng.IntN(2*n+1)
		runs := 1 + rng.IntN(max(n/4, 1))
		if iter%5 == 0 {
			runs = n // random order
		}
		lc := make(LC, 0, n)
		for r := range runs {
			m := n / runs
			if r == runs-1 {
				m = n - len(lc)
			}
			run := make([]Variable, m)
			for i := range run {
				run[i] = variable(span)
			}
			slices.Sort(run)
			for _, v := range run {
				lc = append(lc, Term{Coeff: coeff(), Var: v})
			}
		}
		if iter%7 == 0 && len(lc) > 1 { // a term cancelled by its negation
			k := rng.IntN(len(lc))
			lc = lc.SubCoeff(lc[k].Coeff, lc[k].Var)
		}
		in := slices.Clone(lc)
		got := cb.canonical(lc)
		want := canonicalRef(lc)
		if !slices.Equal(lc, in) {
			t.Fatalf("iteration %d: canonical modified its argument", iter)
		}
		if len(got) != len(want) {
			t.Fatalf("iteration %d (%d terms, %d runs): %d canonical terms, want %d", iter, n, runs, len(got), len(want))
		}
		for i := range want {
			if got[i].Var != want[i].Var || !got[i].Coeff.Equal(&want[i].Coeff) {
				t.Fatalf("iteration %d (%d terms, %d runs): term %d = %v·%v, want %v·%v",
					iter, n, runs, i, got[i].Coeff.String(), got[i].Var, want[i].Coeff.String(), want[i].Var)
			}
		}
	}
}
