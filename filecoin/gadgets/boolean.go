package gadgets

import (
	"errors"
	"fmt"

	"github.com/c2flow/c2flow/filecoin/r1cs"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
)

// ErrUnsatisfiable is returned (wrapped) when a gadget is asked to enforce
// something false between constants (bellpepper's
// SynthesisError::Unsatisfiable).
var ErrUnsatisfiable = errors.New("unsatisfiable constraint between constants")

// ErrInput is returned (wrapped) for inputs of the wrong length or range.
var ErrInput = errors.New("invalid gadget input")

var (
	frOne  = fr.One()
	frZero fr.Element
)

func frBool(b bool) fr.Element {
	if b {
		return frOne
	}
	return frZero
}

// AllocatedBit is a variable constrained to be 0 or 1, with its value:
// bellpepper-core's AllocatedBit.
type AllocatedBit struct {
	Var   r1cs.Variable
	Value bool
}

// AllocBit allocates a bit and enforces (1 − a)·a = 0
// ("boolean constraint").
func AllocBit(cs r1cs.System, value bool) AllocatedBit {
	v := cs.Alloc(frBool(value))
	a, b, c := cs.Scratch()
	cs.Enforce("boolean constraint", a.Add(r1cs.One).Sub(v), b.Add(v), c)
	return AllocatedBit{Var: v, Value: value}
}

// AllocBitConditionally allocates a bit that must be false when
// mustBeFalse is true: (1 − mustBeFalse − a)·a = 0.
func AllocBitConditionally(cs r1cs.System, value bool, mustBeFalse AllocatedBit) AllocatedBit {
	v := cs.Alloc(frBool(value))
	a, b, c := cs.Scratch()
	cs.Enforce("boolean constraint", a.Add(r1cs.One).Sub(mustBeFalse.Var).Sub(v), b.Add(v), c)
	return AllocatedBit{Var: v, Value: value}
}

// XorBits returns a XOR b, enforcing (a + a)·b = a + b − c.
func XorBits(cs r1cs.System, a, b AllocatedBit) AllocatedBit {
	val := a.Value != b.Value
	r := cs.Alloc(frBool(val))
	la, lb, lc := cs.Scratch()
	cs.Enforce("xor constraint", la.Add(a.Var).Add(a.Var), lb.Add(b.Var), lc.Add(a.Var).Add(b.Var).Sub(r))
	return AllocatedBit{Var: r, Value: val}
}

// AndBits returns a AND b, enforcing a·b = c.
func AndBits(cs r1cs.System, a, b AllocatedBit) AllocatedBit {
	val := a.Value && b.Value
	r := cs.Alloc(frBool(val))
	la, lb, lc := cs.Scratch()
	cs.Enforce("and constraint", la.Add(a.Var), lb.Add(b.Var), lc.Add(r))
	return AllocatedBit{Var: r, Value: val}
}

// AndNotBits returns a AND (NOT b), enforcing a·(1 − b) = c.
func AndNotBits(cs r1cs.System, a, b AllocatedBit) AllocatedBit {
	val := a.Value && !b.Value
	r := cs.Alloc(frBool(val))
	la, lb, lc := cs.Scratch()
	cs.Enforce("and not constraint", la.Add(a.Var), lb.Add(r1cs.One).Sub(b.Var), lc.Add(r))
	return AllocatedBit{Var: r, Value: val}
}

// NorBits returns (NOT a) AND (NOT b), enforcing (1 − a)·(1 − b) = c.
func NorBits(cs r1cs.System, a, b AllocatedBit) AllocatedBit {
	val := !a.Value && !b.Value
	r := cs.Alloc(frBool(val))
	la, lb, lc := cs.Scratch()
	cs.Enforce("nor constraint", la.Add(r1cs.One).Sub(a.Var), lb.Add(r1cs.One).Sub(b.Var), lc.Add(r))
	return AllocatedBit{Var: r, Value: val}
}

// boolKind tells what a Boolean is.
type boolKind uint8

const (
	kindConstant boolKind = iota
	kindIs
	kindNot
)

// Boolean is a constant, an allocated bit, or the negation of one:
// bellpepper-core's Boolean. The zero value is the constant false.
type Boolean struct {
	v    r1cs.Variable
	val  bool // the bit's value (Is, Not) or the constant
	kind boolKind
}

// Constant returns the constant b.
func Constant(b bool) Boolean { return Boolean{val: b, kind: kindConstant} }

// Is returns the Boolean view of an allocated bit.
func Is(b AllocatedBit) Boolean { return Boolean{v: b.Var, val: b.Value, kind: kindIs} }

// NotOf returns the negated view of an allocated bit.
func NotOf(b AllocatedBit) Boolean { return Boolean{v: b.Var, val: b.Value, kind: kindNot} }

// IsConstant reports whether b is a constant.
func (b Boolean) IsConstant() bool { return b.kind == kindConstant }

// IsNegated reports whether b is the negated view of an allocated bit.
func (b Boolean) IsNegated() bool { return b.kind == kindNot }

// Bit returns the underlying allocated bit and true, or false for a
// constant.
func (b Boolean) Bit() (AllocatedBit, bool) {
	return AllocatedBit{Var: b.v, Value: b.val}, b.kind != kindConstant
}

// Value returns b's value.
func (b Boolean) Value() bool {
	if b.kind == kindNot {
		return !b.val
	}
	return b.val
}

// Not returns the negation of b (no constraint).
func (b Boolean) Not() Boolean {
	switch b.kind {
	case kindConstant:
		b.val = !b.val
	case kindIs:
		b.kind = kindNot
	default:
		b.kind = kindIs
	}
	return b
}

// AppendLC appends coeff·b to lc as bellpepper's Boolean::lc(one, coeff)
// builds it: coeff·One for true, nothing for false, coeff·v for a bit,
// coeff·One − coeff·v for a negated bit.
func (b Boolean) AppendLC(lc r1cs.LC, coeff fr.Element) r1cs.LC {
	switch b.kind {
	case kindConstant:
		if b.val {
			lc = lc.AddCoeff(coeff, r1cs.One)
		}
	case kindIs:
		lc = lc.AddCoeff(coeff, b.v)
	default:
		lc = lc.AddCoeff(coeff, r1cs.One).SubCoeff(coeff, b.v)
	}
	return lc
}

// appendLC1 appends 1·b.
func (b Boolean) appendLC1(lc r1cs.LC) r1cs.LC {
	switch b.kind {
	case kindConstant:
		if b.val {
			lc = lc.Add(r1cs.One)
		}
	case kindIs:
		lc = lc.Add(b.v)
	default:
		lc = lc.Add(r1cs.One).Sub(b.v)
	}
	return lc
}

// subLC1 appends −1·b.
func (b Boolean) subLC1(lc r1cs.LC) r1cs.LC {
	switch b.kind {
	case kindConstant:
		if b.val {
			lc = lc.Sub(r1cs.One)
		}
	case kindIs:
		lc = lc.Sub(b.v)
	default:
		lc = lc.Sub(r1cs.One).Add(b.v)
	}
	return lc
}

func (b Boolean) isConst(v bool) bool { return b.kind == kindConstant && b.val == v }

// EnforceEqual enforces a = b as bellpepper's Boolean::enforce_equal: no
// constraint between two constants (an error wrapping ErrUnsatisfiable if
// they differ), otherwise one constraint 0·0 = lc.
func EnforceEqual(cs r1cs.System, a, b Boolean) error {
	switch {
	case a.IsConstant() && b.IsConstant():
		if a.val != b.val {
			return fmt.Errorf("enforcing %v = %v: %w", a.val, b.val, ErrUnsatisfiable)
		}
		return nil
	case a.isConst(true) || b.isConst(true):
		x := b
		if !a.isConst(true) {
			x = a
		}
		la, lb, lc := cs.Scratch()
		cs.Enforce("enforce equal to one", la, lb, x.subLC1(lc.Add(r1cs.One)))
	case a.isConst(false) || b.isConst(false):
		x := b
		if !a.isConst(false) {
			x = a
		}
		la, lb, lc := cs.Scratch()
		cs.Enforce("enforce equal to zero", la, lb, x.appendLC1(lc))
	default:
		la, lb, lc := cs.Scratch()
		cs.Enforce("enforce equal", la, lb, b.subLC1(a.appendLC1(lc)))
	}
	return nil
}

// Xor returns a XOR b as bellpepper's Boolean::xor: constants fold, and a
// negation on either side is moved outside.
func Xor(cs r1cs.System, a, b Boolean) Boolean {
	switch {
	case a.isConst(false):
		return b
	case b.isConst(false):
		return a
	case a.isConst(true):
		return b.Not()
	case b.isConst(true):
		return a.Not()
	case a.kind == kindIs && b.kind == kindNot, a.kind == kindNot && b.kind == kindIs:
		is, not := a, b
		if a.kind == kindNot {
			is, not = b, a
		}
		return Xor(cs, is, not.Not()).Not()
	default: // Is, Is or Not, Not
		ab, _ := a.Bit()
		bb, _ := b.Bit()
		return Is(XorBits(cs, ab, bb))
	}
}

// And returns a AND b as bellpepper's Boolean::and.
func And(cs r1cs.System, a, b Boolean) Boolean {
	switch {
	case a.isConst(false) || b.isConst(false):
		return Constant(false)
	case a.isConst(true):
		return b
	case b.isConst(true):
		return a
	}
	ab, _ := a.Bit()
	bb, _ := b.Bit()
	switch {
	case a.kind == kindIs && b.kind == kindNot:
		return Is(AndNotBits(cs, ab, bb))
	case a.kind == kindNot && b.kind == kindIs:
		return Is(AndNotBits(cs, bb, ab))
	case a.kind == kindNot && b.kind == kindNot:
		return Is(NorBits(cs, ab, bb))
	default:
		return Is(AndBits(cs, ab, bb))
	}
}

// SHA256Ch returns (a AND b) XOR ((NOT a) AND c) as bellpepper's
// Boolean::sha256_ch: constant cases fold into at most one And, otherwise
// one allocation and the constraint (b − c)·a = ch − c.
func SHA256Ch(cs r1cs.System, a, b, c Boolean) Boolean {
	val := (a.Value() && b.Value()) != (!a.Value() && c.Value())
	switch {
	case a.IsConstant() && b.IsConstant() && c.IsConstant():
		return Constant(val)
	case a.isConst(false):
		return c
	case b.isConst(false):
		return And(cs, a.Not(), c)
	case c.isConst(false):
		return And(cs, a, b)
	case c.isConst(true):
		return And(cs, a, b.Not()).Not()
	case b.isConst(true):
		return And(cs, a.Not(), c.Not()).Not()
	}
	// a is true or allocated; b and c are allocated.
	ch := cs.Alloc(frBool(val))
	la, lb, lc := cs.Scratch()
	la = c.subLC1(b.appendLC1(la))
	lb = a.appendLC1(lb)
	lc = c.subLC1(lc.Add(ch))
	cs.Enforce("ch computation", la, lb, lc)
	return Is(AllocatedBit{Var: ch, Value: val})
}

// SHA256Maj returns (a AND b) XOR (a AND c) XOR (b AND c) as bellpepper's
// Boolean::sha256_maj: constant cases fold into at most one And, otherwise
// one allocation, bc = b AND c (namespace "b and c"), and the constraint
// (2bc − b − c)·a = bc − maj.
func SHA256Maj(cs r1cs.System, a, b, c Boolean) Boolean {
	av, bv, cv := a.Value(), b.Value(), c.Value()
	val := (av && bv) != (av && cv) != (bv && cv)
	switch {
	case a.IsConstant() && b.IsConstant() && c.IsConstant():
		return Constant(val)
	case a.isConst(false):
		return And(cs, b, c)
	case b.isConst(false):
		return And(cs, a, c)
	case c.isConst(false):
		return And(cs, a, b)
	case c.isConst(true):
		return And(cs, a.Not(), b.Not()).Not()
	case b.isConst(true):
		return And(cs, a.Not(), c.Not()).Not()
	case a.isConst(true):
		return And(cs, b.Not(), c.Not()).Not()
	}
	maj := cs.Alloc(frBool(val))
	cs.Push("b and c")
	bc := And(cs, b, c)
	cs.Pop()
	la, lb, lc := cs.Scratch()
	la = c.subLC1(b.subLC1(bc.appendLC1(bc.appendLC1(la))))
	lb = a.appendLC1(lb)
	lc = bc.appendLC1(lc).Sub(maj)
	cs.Enforce("maj computation", la, lb, lc)
	return Is(AllocatedBit{Var: maj, Value: val})
}

// U64IntoBooleansLE allocates the 64 bits of value, least significant
// first (namespaces "bit i"): bellpepper's u64_into_boolean_vec_le.
func U64IntoBooleansLE(cs r1cs.System, value uint64) []Boolean {
	out := make([]Boolean, 64)
	for i := range out {
		cs.PushIndexed("bit", i)
		out[i] = Is(AllocBit(cs, value>>i&1 == 1))
		cs.Pop()
	}
	return out
}

// FieldIntoAllocatedBitsLE allocates the 255 bits of value, least
// significant first (namespaces "bit i"), with a boolean constraint each:
// bellpepper's field_into_allocated_bits_le. The bits are not tied to any
// variable; see [AllocatedNum.ToBitsLE].
func FieldIntoAllocatedBitsLE(cs r1cs.System, value fr.Element) []AllocatedBit {
	bits := fieldBitsLE(&value)
	out := make([]AllocatedBit, FieldBits)
	for i := range out {
		cs.PushIndexed("bit", i)
		out[i] = AllocBit(cs, bits[i])
		cs.Pop()
	}
	return out
}

// FieldIntoBooleansLE is [FieldIntoAllocatedBitsLE] as Booleans.
func FieldIntoBooleansLE(cs r1cs.System, value fr.Element) []Boolean {
	bits := FieldIntoAllocatedBitsLE(cs, value)
	out := make([]Boolean, len(bits))
	for i, b := range bits {
		out[i] = Is(b)
	}
	return out
}

// FieldBits is the bit length of the BLS12-381 scalar field modulus
// (PrimeField::NUM_BITS); FieldCapacity = FieldBits − 1 is how many bits
// always fit in a field element (PrimeField::CAPACITY).
const (
	FieldBits     = fr.Bits
	FieldCapacity = fr.Bits - 1
)

// fieldBitsLE returns the FieldBits bits of x's canonical representation,
// least significant first.
func fieldBitsLE(x *fr.Element) [FieldBits]bool {
	var out [FieldBits]bool
	b := x.Bits() // canonical little-endian uint64 limbs
	for i := range out {
		out[i] = b[i/64]>>(uint(i)%64)&1 == 1
	}
	return out
}
