package r1cs

import (
	"fmt"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
)

// auxBit marks an auxiliary (private) variable in a [Variable].
const auxBit = 1 << 31

// MaxVariables is the most inputs, and separately the most auxiliary
// variables, a constraint system can allocate.
const MaxVariables = auxBit

// Variable names a wire of the constraint system: bellpepper's
// Variable(Index::Input(i)) or Variable(Index::Aux(i)). The zero value is
// [One], input 0.
type Variable uint32

// One is the constant-one input, bellpepper's CS::one(): input 0, which
// every implementation in this package allocates before anything else.
const One Variable = 0

// Input returns the variable of input i.
func Input(i int) Variable { return Variable(uint32(i)) }

// Aux returns the variable of auxiliary variable i.
func Aux(i int) Variable { return Variable(uint32(i) | auxBit) }

// IsAux reports whether v is an auxiliary variable.
func (v Variable) IsAux() bool { return v&auxBit != 0 }

// Index returns v's index among the inputs or among the aux variables.
func (v Variable) Index() int { return int(v &^ auxBit) }

// String formats v as input_i or aux_i.
func (v Variable) String() string {
	if v.IsAux() {
		return fmt.Sprintf("aux_%d", v.Index())
	}
	return fmt.Sprintf("input_%d", v.Index())
}

// Term is one coefficient times one variable.
type Term struct {
	Coeff fr.Element
	Var   Variable
}

// LC is a linear combination: a sum of terms. Unlike bellpepper's, an LC may
// hold the same variable more than once; every implementation treats it as
// the sum (the shape recorder and the counter merge repeated variables and
// drop zero coefficients, as bellpepper's LinearCombination and bellperson's
// density tracking do).
//
// The builder methods append and return the extended slice, as append does;
// they never modify the terms already present. Build LCs in buffers from
// [System.Scratch], or keep your own and reuse them with lc[:0].
type LC []Term

var (
	frOne    = fr.One()
	frMinus1 = func() fr.Element { var e fr.Element; e.SetOne(); e.Neg(&e); return e }()
)

// Add appends 1·v.
func (lc LC) Add(v Variable) LC { return append(lc, Term{Coeff: frOne, Var: v}) }

// Sub appends (−1)·v.
func (lc LC) Sub(v Variable) LC { return append(lc, Term{Coeff: frMinus1, Var: v}) }

// AddCoeff appends c·v.
func (lc LC) AddCoeff(c fr.Element, v Variable) LC { return append(lc, Term{Coeff: c, Var: v}) }

// SubCoeff appends (−c)·v.
func (lc LC) SubCoeff(c fr.Element, v Variable) LC {
	c.Neg(&c)
	return append(lc, Term{Coeff: c, Var: v})
}

// AddConst appends c·[One].
func (lc LC) AddConst(c fr.Element) LC { return append(lc, Term{Coeff: c, Var: One}) }

// AddLC appends every term of o.
func (lc LC) AddLC(o LC) LC { return append(lc, o...) }

// SubLC appends every term of o negated.
func (lc LC) SubLC(o LC) LC {
	for i := range o {
		t := o[i]
		t.Coeff.Neg(&t.Coeff)
		lc = append(lc, t)
	}
	return lc
}

// AddScaledLC appends every term of o multiplied by c.
func (lc LC) AddScaledLC(c fr.Element, o LC) LC {
	for i := range o {
		t := o[i]
		t.Coeff.Mul(&t.Coeff, &c)
		lc = append(lc, t)
	}
	return lc
}

// Clone returns a copy of lc that shares no memory with it.
func (lc LC) Clone() LC { return append(LC(nil), lc...) }

// Eval returns the value of lc under the assignment. Variables must be in
// range; Eval panics otherwise (an invariant of the implementations, which
// only evaluate LCs over variables they allocated).
func (lc LC) Eval(inputs, aux []fr.Element) fr.Element {
	var acc, tmp fr.Element
	for i := range lc {
		t := &lc[i]
		var x *fr.Element
		if t.Var.IsAux() {
			x = &aux[t.Var.Index()]
		} else {
			x = &inputs[t.Var.Index()]
		}
		acc = addTerm(acc, &t.Coeff, x, &tmp)
	}
	return acc
}

// addTerm returns acc + c·x, skipping the multiplication in the common
// cases of circuits over bits: x zero or one, c one or −1.
func addTerm(acc fr.Element, c, x, tmp *fr.Element) fr.Element {
	switch {
	case x.IsZero():
	case c.IsOne():
		acc.Add(&acc, x)
	case x.IsOne():
		acc.Add(&acc, c)
	case c.Equal(&frMinus1):
		acc.Sub(&acc, x)
	default:
		tmp.Mul(c, x)
		acc.Add(&acc, tmp)
	}
	return acc
}

// canonBuf holds the buffers canonical sorts in, reused across calls.
type canonBuf struct {
	a, b []Term
	runs []int
}

// canonical returns the terms of lc sorted by variable (inputs first, then
// aux, each ascending: bellpepper's iteration order), repeated variables
// merged and zero coefficients dropped. The result is lc itself when lc is
// already canonical, otherwise it lives in cb's buffers; it is valid until
// the next call or until lc changes, and must not be modified.
//
// The long LCs circuits build (MultiEq's and AddMany's sums of operand bits,
// packings) are concatenations of a few ascending runs, so they are sorted
// by merging runs: O(n log r) moves for r runs, n for a sorted LC. The
// order in which terms of one variable meet does not matter: their
// coefficients are summed, exactly, in the field.
func (cb *canonBuf) canonical(lc LC) []Term {
	runs, dup, zero := 1, false, false
	for i := range lc {
		if lc[i].Coeff.IsZero() {
			zero = true
		}
		if i == 0 {
			continue
		}
		switch {
		case lc[i].Var < lc[i-1].Var:
			runs++
		case lc[i].Var == lc[i-1].Var:
			dup = true
		}
	}
	if runs == 1 && !dup {
		if !zero {
			return lc // already canonical
		}
		dst := cb.a[:0]
		for i := range lc {
			if !lc[i].Coeff.IsZero() {
				dst = append(dst, lc[i])
			}
		}
		cb.a = dst
		return dst
	}
	src := append(cb.a[:0], lc...)
	cb.a = src
	switch {
	case runs == 1:
	case len(src) <= 12:
		for i := 1; i < len(src); i++ {
			for j := i; j > 0 && src[j].Var < src[j-1].Var; j-- {
				src[j], src[j-1] = src[j-1], src[j]
			}
		}
	default:
		src = cb.mergeRuns(src)
	}
	out := src[:0]
	for i := 0; i < len(src); {
		t := src[i]
		j := i + 1
		for ; j < len(src) && src[j].Var == t.Var; j++ {
			t.Coeff.Add(&t.Coeff, &src[j].Coeff)
		}
		if !t.Coeff.IsZero() {
			out = append(out, t)
		}
		i = j
	}
	return out
}

// mergeRuns sorts src (cb.a) by variable by merging its ascending runs
// pairwise, ping-ponging between cb.a and cb.b; it returns the sorted
// slice, which is one of the two.
func (cb *canonBuf) mergeRuns(src []Term) []Term {
	bounds := append(cb.runs[:0], 0)
	for i := 1; i < len(src); i++ {
		if src[i].Var < src[i-1].Var {
			bounds = append(bounds, i)
		}
	}
	bounds = append(bounds, len(src))
	if cap(cb.b) < len(src) {
		cb.b = make([]Term, len(src), cap(src))
	}
	dst := cb.b[:len(src)]
	for len(bounds) > 2 {
		nb := bounds[:1]
		for r := 0; r+1 < len(bounds); r += 2 {
			lo := bounds[r]
			if r+2 >= len(bounds) { // odd run out: copy it over
				copy(dst[lo:], src[lo:])
				nb = append(nb, len(src))
				break
			}
			mid, hi := bounds[r+1], bounds[r+2]
			i, j, k := lo, mid, lo
			for i < mid && j < hi {
				if src[j].Var < src[i].Var {
					dst[k] = src[j]
					j++
				} else {
					dst[k] = src[i]
					i++
				}
				k++
			}
			k += copy(dst[k:], src[i:mid])
			copy(dst[k:], src[j:hi])
			nb = append(nb, hi)
		}
		bounds = nb
		src, dst = dst, src
	}
	cb.runs = bounds
	return src
}
