package r1cs

import (
	"fmt"
	"slices"

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

// canonical writes into dst[:0] the terms of lc sorted by variable (inputs
// first, then aux, each ascending: bellpepper's iteration order), repeated
// variables merged and zero coefficients dropped, and returns it.
func canonical(dst []Term, lc LC) []Term {
	dst = dst[:0]
	sorted := true
	for i := 1; i < len(lc); i++ {
		if lc[i].Var <= lc[i-1].Var {
			sorted = false
			break
		}
	}
	if sorted {
		for i := range lc {
			if !lc[i].Coeff.IsZero() {
				dst = append(dst, lc[i])
			}
		}
		return dst
	}
	dst = append(dst, lc...)
	slices.SortStableFunc(dst, func(a, b Term) int {
		switch {
		case a.Var < b.Var:
			return -1
		case a.Var > b.Var:
			return 1
		}
		return 0
	})
	out := dst[:0]
	for i := 0; i < len(dst); {
		t := dst[i]
		j := i + 1
		for ; j < len(dst) && dst[j].Var == t.Var; j++ {
			t.Coeff.Add(&t.Coeff, &dst[j].Coeff)
		}
		if !t.Coeff.IsZero() {
			out = append(out, t)
		}
		i = j
	}
	return out
}
