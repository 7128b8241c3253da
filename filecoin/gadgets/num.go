package gadgets

import (
	"fmt"
	"slices"

	"github.com/c2flow/c2flow/filecoin/r1cs"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
)

// AllocatedNum is a field element allocated in the constraint system, with
// its value: bellpepper-core's AllocatedNum.
type AllocatedNum struct {
	Var   r1cs.Variable
	Value fr.Element
}

// AllocNum allocates an auxiliary number.
func AllocNum(cs r1cs.System, value fr.Element) AllocatedNum {
	return AllocatedNum{Var: cs.Alloc(value), Value: value}
}

// AllocInputNum allocates an input number.
func AllocInputNum(cs r1cs.System, value fr.Element) AllocatedNum {
	return AllocatedNum{Var: cs.AllocInput(value), Value: value}
}

// Inputize allocates an input equal to n and enforces input·1 = n
// ("enforce input is correct").
func (n AllocatedNum) Inputize(cs r1cs.System) AllocatedNum {
	in := cs.AllocInput(n.Value)
	a, b, c := cs.Scratch()
	cs.Enforce("enforce input is correct", a.Add(in), b.Add(r1cs.One), c.Add(n.Var))
	return AllocatedNum{Var: in, Value: n.Value}
}

// unpack enforces 0·0 = Σ 2^i·bits[i] − n ("unpacking constraint").
func (n AllocatedNum) unpack(cs r1cs.System, bits []AllocatedBit) {
	a, b, c := cs.Scratch()
	for i := range bits {
		c = c.AddCoeff(pow2[i], bits[i].Var)
	}
	c = c.Sub(n.Var)
	cs.Enforce("unpacking constraint", a, b, c)
}

// ToBitsLE decomposes n into 255 allocated bits, least significant first,
// and enforces that they sum to n, as bellpepper's to_bits_le: 256
// constraints. It does not enforce that the bits are the canonical
// representation (a sum congruent to n mod r also satisfies it).
func (n AllocatedNum) ToBitsLE(cs r1cs.System) []Boolean {
	bits := FieldIntoAllocatedBitsLE(cs, n.Value)
	n.unpack(cs, bits)
	out := make([]Boolean, len(bits))
	for i, b := range bits {
		out[i] = Is(b)
	}
	return out
}

// modulusMinusOneBitsBE holds the bits of r − 1, most significant first,
// from its highest set bit.
var modulusMinusOneBitsBE = func() []bool {
	var m fr.Element
	m.SetOne()
	m.Neg(&m)
	le := fieldBitsLE(&m)
	out := make([]bool, 0, FieldBits)
	found := false
	for i := FieldBits - 1; i >= 0; i-- {
		found = found || le[i]
		if found {
			out = append(out, le[i])
		}
	}
	return out
}()

// ToBitsLEStrict decomposes n into its canonical 255 bits, least
// significant first, enforcing that they represent a value below the field
// modulus, as bellpepper's to_bits_le_strict: bits in runs of ones of
// r − 1 are plain bits, the bit after each run is allocated conditionally
// on the AND of everything so far ("run ending at i"), then one unpacking
// constraint.
func (n AllocatedNum) ToBitsLEStrict(cs r1cs.System) []Boolean {
	aBits := fieldBitsLE(&n.Value)
	result := make([]AllocatedBit, 0, FieldBits)
	var lastRun AllocatedBit
	haveLast := false
	var currentRun []AllocatedBit
	for i, b := range modulusMinusOneBitsBE {
		abit := aBits[len(modulusMinusOneBitsBE)-1-i]
		if b {
			cs.PushIndexed("bit", i)
			bit := AllocBit(cs, abit)
			cs.Pop()
			currentRun = append(currentRun, bit)
			result = append(result, bit)
			continue
		}
		if len(currentRun) > 0 {
			if haveLast {
				currentRun = append(currentRun, lastRun)
			}
			cs.PushIndexed("run ending at", i)
			lastRun = karyAnd(cs, currentRun)
			cs.Pop()
			haveLast = true
			currentRun = currentRun[:0]
		}
		cs.PushIndexed("bit", i)
		bit := AllocBitConditionally(cs, abit, lastRun)
		cs.Pop()
		result = append(result, bit)
	}
	slices.Reverse(result) // little-endian
	n.unpack(cs, result)
	out := make([]Boolean, len(result))
	for i, b := range result {
		out[i] = Is(b)
	}
	return out
}

// karyAnd ANDs the bits left to right ("and i").
func karyAnd(cs r1cs.System, v []AllocatedBit) AllocatedBit {
	cur := v[0]
	for i := 1; i < len(v); i++ {
		cs.PushIndexed("and", i)
		cur = AndBits(cs, cur, v[i])
		cs.Pop()
	}
	return cur
}

// Mul returns n·o, enforcing n·o = product.
func (n AllocatedNum) Mul(cs r1cs.System, o AllocatedNum) AllocatedNum {
	var v fr.Element
	v.Mul(&n.Value, &o.Value)
	r := cs.Alloc(v)
	a, b, c := cs.Scratch()
	cs.Enforce("multiplication constraint", a.Add(n.Var), b.Add(o.Var), c.Add(r))
	return AllocatedNum{Var: r, Value: v}
}

// Square returns n², enforcing n·n = square.
func (n AllocatedNum) Square(cs r1cs.System) AllocatedNum {
	var v fr.Element
	v.Square(&n.Value)
	r := cs.Alloc(v)
	a, b, c := cs.Scratch()
	cs.Enforce("squaring constraint", a.Add(n.Var), b.Add(n.Var), c.Add(r))
	return AllocatedNum{Var: r, Value: v}
}

// AssertNonzero allocates n's inverse and enforces n·inv = 1. When values
// matter and n is zero it returns an error (bellpepper's DivisionByZero);
// the inverse is then allocated as zero so the shape is unchanged.
func (n AllocatedNum) AssertNonzero(cs r1cs.System) error {
	var inv fr.Element
	var err error
	if n.Value.IsZero() {
		if cs.WantsValues() {
			err = fmt.Errorf("asserting nonzero: value is zero: %w", ErrInput)
		}
	} else {
		inv.Inverse(&n.Value)
	}
	v := cs.Alloc(inv)
	a, b, c := cs.Scratch()
	cs.Enforce("nonzero assertion constraint", a.Add(n.Var), b.Add(v), c.Add(r1cs.One))
	return err
}

// ConditionallyReverse returns (b, a) if cond, else (a, b), enforcing
// (a − b)·cond = a − c and (b − a)·cond = b − d.
func ConditionallyReverse(cs r1cs.System, a, b AllocatedNum, cond Boolean) (AllocatedNum, AllocatedNum) {
	cv, dv := a.Value, b.Value
	if cond.Value() {
		cv, dv = b.Value, a.Value
	}
	cs.Push("conditional reversal result 1")
	c := AllocNum(cs, cv)
	cs.Pop()
	la, lb, lc := cs.Scratch()
	cs.Enforce("first conditional reversal", la.Add(a.Var).Sub(b.Var), cond.appendLC1(lb), lc.Add(a.Var).Sub(c.Var))
	cs.Push("conditional reversal result 2")
	d := AllocNum(cs, dv)
	cs.Pop()
	la, lb, lc = cs.Scratch()
	cs.Enforce("second conditional reversal", la.Add(b.Var).Sub(a.Var), cond.appendLC1(lb), lc.Add(b.Var).Sub(d.Var))
	return c, d
}

// Num is a linear combination with its value, not allocated:
// bellpepper-core's Num. Its LC is kept sorted with repeated variables
// merged (as bellpepper's is), so sums of Nums stay small. Methods return
// new Nums and never modify the receiver's LC.
type Num struct {
	Value fr.Element
	LC    r1cs.LC
}

// NumOf returns the Num of an allocated number.
func NumOf(n AllocatedNum) Num {
	return Num{Value: n.Value, LC: r1cs.LC{{Coeff: frOne, Var: n.Var}}}
}

// NumConst returns the Num c·One.
func NumConst(c fr.Element) Num {
	return Num{Value: c, LC: r1cs.LC{{Coeff: c, Var: r1cs.One}}}
}

// AddBoolWithCoeff returns n + coeff·bit.
func (n Num) AddBoolWithCoeff(bit Boolean, coeff fr.Element) Num {
	var t [2]r1cs.Term
	o := Num{LC: bit.AppendLC(t[:0], coeff)}
	if bit.Value() {
		o.Value = coeff
	}
	return n.Add(o)
}

// Add returns n + o.
func (n Num) Add(o Num) Num {
	var r Num
	r.Value.Add(&n.Value, &o.Value)
	r.LC = mergeLC(make(r1cs.LC, 0, len(n.LC)+len(o.LC)), n.LC, o.LC, nil)
	return r
}

// Scale returns c·n.
func (n Num) Scale(c fr.Element) Num {
	var r Num
	r.Value.Mul(&n.Value, &c)
	r.LC = make(r1cs.LC, len(n.LC))
	for i := range n.LC {
		r.LC[i] = n.LC[i]
		r.LC[i].Coeff.Mul(&r.LC[i].Coeff, &c)
	}
	return r
}

// AddScaled returns n + c·o.
func (n Num) AddScaled(c fr.Element, o Num) Num {
	var r Num
	var t fr.Element
	t.Mul(&o.Value, &c)
	r.Value.Add(&n.Value, &t)
	r.LC = mergeLC(make(r1cs.LC, 0, len(n.LC)+len(o.LC)), n.LC, o.LC, &c)
	return r
}

// mergeLC appends to dst the sum of a and c·b (c nil: 1), where a and b
// are sorted by variable with distinct variables, keeping the result
// sorted and merged. Zero coefficients are kept, as bellpepper keeps them.
func mergeLC(dst, a, b r1cs.LC, c *fr.Element) r1cs.LC {
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case j == len(b) || (i < len(a) && a[i].Var < b[j].Var):
			dst = append(dst, a[i])
			i++
		default:
			t := b[j]
			if c != nil {
				t.Coeff.Mul(&t.Coeff, c)
			}
			if i < len(a) && a[i].Var == t.Var {
				t.Coeff.Add(&t.Coeff, &a[i].Coeff)
				i++
			}
			dst = append(dst, t)
			j++
		}
	}
	return dst
}
