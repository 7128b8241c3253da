package gadgets

import (
	"fmt"

	"github.com/c2flow/c2flow/filecoin/r1cs"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
)

// pow2 holds 2^0 .. 2^(FieldBits-1) in the field.
var pow2 = func() [FieldBits]fr.Element {
	var t [FieldBits]fr.Element
	t[0].SetOne()
	for i := 1; i < FieldBits; i++ {
		t[i].Double(&t[i-1])
	}
	return t
}()

// Pow2 returns 2^i in the field, for 0 <= i < FieldBits.
func Pow2(i int) fr.Element { return pow2[i] }

// MultiEq batches equalities between linear combinations of small values
// into few constraints, as bellperson's MultiEq: each EnforceEqual(n, l, r)
// is shifted by the bits already used and added to a pending lhs = rhs;
// when the next one would not fit in FieldCapacity bits the pending one is
// enforced as lhs·1 = rhs ("multieq i"). [MultiEq.Close] enforces the last
// one; bellperson does so when its MultiEq is dropped.
//
// MultiEq is a [r1cs.System]: everything else passes through to the
// wrapped System, so gadgets use it in place of the System.
type MultiEq struct {
	r1cs.System
	ops, bitsUsed int
	lhs, rhs      r1cs.LC
	// tmpL, tmpR are buffers for AddMany's linear combinations.
	tmpL, tmpR r1cs.LC
}

// NewMultiEq wraps cs.
func NewMultiEq(cs r1cs.System) *MultiEq { return &MultiEq{System: cs} }

func (m *MultiEq) accumulate() {
	m.PushIndexed("multieq", m.ops)
	_, b, _ := m.Scratch()
	m.Enforce("", m.lhs, b.Add(r1cs.One), m.rhs)
	m.Pop()
	m.lhs, m.rhs = m.lhs[:0], m.rhs[:0]
	m.bitsUsed = 0
	m.ops++
}

// EnforceEqual adds lhs = rhs, both at most numBits bits wide. lhs and rhs
// are copied.
func (m *MultiEq) EnforceEqual(numBits int, lhs, rhs r1cs.LC) error {
	if numBits >= FieldCapacity {
		return fmt.Errorf("multieq of %d bits: %w", numBits, ErrInput)
	}
	if FieldCapacity <= m.bitsUsed+numBits {
		m.accumulate()
	}
	c := pow2[m.bitsUsed]
	m.lhs = m.lhs.AddScaledLC(c, lhs)
	m.rhs = m.rhs.AddScaledLC(c, rhs)
	m.bitsUsed += numBits
	return nil
}

// Close enforces the pending equality, if any. Call it where bellperson's
// MultiEq goes out of scope; the MultiEq may be reused after it.
func (m *MultiEq) Close() {
	if m.bitsUsed > 0 {
		m.accumulate()
	}
}

// UInt32 is 32 Booleans read as an unsigned integer, least significant bit
// first, with its value: bellperson's UInt32.
type UInt32 struct {
	Bits  [32]Boolean
	Value uint32
}

// UInt32Constant returns the constant x.
func UInt32Constant(x uint32) UInt32 {
	u := UInt32{Value: x}
	for i := range u.Bits {
		u.Bits[i] = Constant(x>>i&1 == 1)
	}
	return u
}

// AllocUInt32 allocates the 32 bits of x, least significant first
// (namespaces "allocated bit i").
func AllocUInt32(cs r1cs.System, x uint32) UInt32 {
	u := UInt32{Value: x}
	for i := range u.Bits {
		cs.PushIndexed("allocated bit", i)
		u.Bits[i] = Is(AllocBit(cs, x>>i&1 == 1))
		cs.Pop()
	}
	return u
}

// UInt32FromBitsBE reads 32 bits, most significant first.
func UInt32FromBitsBE(bits []Boolean) (UInt32, error) {
	if len(bits) != 32 {
		return UInt32{}, fmt.Errorf("uint32 from %d bits: %w", len(bits), ErrInput)
	}
	var u UInt32
	for i, b := range bits {
		u.Bits[31-i] = b
		u.Value <<= 1
		if b.Value() {
			u.Value |= 1
		}
	}
	return u, nil
}

// UInt32FromBits reads 32 bits, least significant first.
func UInt32FromBits(bits []Boolean) (UInt32, error) {
	if len(bits) != 32 {
		return UInt32{}, fmt.Errorf("uint32 from %d bits: %w", len(bits), ErrInput)
	}
	var u UInt32
	for i, b := range bits {
		u.Bits[i] = b
		if b.Value() {
			u.Value |= 1 << i
		}
	}
	return u, nil
}

// BitsBE returns the bits most significant first (into_bits_be).
func (u UInt32) BitsBE() []Boolean {
	out := make([]Boolean, 32)
	for i := range out {
		out[i] = u.Bits[31-i]
	}
	return out
}

// Rotr rotates right by by bits (no constraint).
func (u UInt32) Rotr(by int) UInt32 {
	by %= 32
	r := UInt32{Value: u.Value>>by | u.Value<<(32-by)}
	for i := range r.Bits {
		r.Bits[i] = u.Bits[(i+by)%32]
	}
	return r
}

// Shr shifts right by by bits, filling with constant zeros (no constraint).
func (u UInt32) Shr(by int) UInt32 {
	by %= 32
	r := UInt32{Value: u.Value >> by}
	for i := range r.Bits {
		if i+by < 32 {
			r.Bits[i] = u.Bits[i+by]
		} else {
			r.Bits[i] = Constant(false)
		}
	}
	return r
}

// Xor returns u XOR o bit by bit (namespaces "xor of bit i").
func (u UInt32) Xor(cs r1cs.System, o UInt32) UInt32 {
	r := UInt32{Value: u.Value ^ o.Value}
	for i := range r.Bits {
		cs.PushIndexed("xor of bit", i)
		r.Bits[i] = Xor(cs, u.Bits[i], o.Bits[i])
		cs.Pop()
	}
	return r
}

// UInt32SHA256Maj computes maj bit by bit (namespaces "maj i").
func UInt32SHA256Maj(cs r1cs.System, a, b, c UInt32) UInt32 {
	r := UInt32{Value: (a.Value & b.Value) ^ (a.Value & c.Value) ^ (b.Value & c.Value)}
	for i := range r.Bits {
		cs.PushIndexed("maj", i)
		r.Bits[i] = SHA256Maj(cs, a.Bits[i], b.Bits[i], c.Bits[i])
		cs.Pop()
	}
	return r
}

// UInt32SHA256Ch computes ch bit by bit (namespaces "ch i").
func UInt32SHA256Ch(cs r1cs.System, a, b, c UInt32) UInt32 {
	r := UInt32{Value: (a.Value & b.Value) ^ (^a.Value & c.Value)}
	for i := range r.Bits {
		cs.PushIndexed("ch", i)
		r.Bits[i] = SHA256Ch(cs, a.Bits[i], b.Bits[i], c.Bits[i])
		cs.Pop()
	}
	return r
}

// AddMany returns the sum of 2 to 10 operands modulo 2^32, as bellperson's
// UInt32::addmany: all-constant operands fold to a constant; otherwise the
// bits of the full sum are allocated ("result bit i", as many as the
// largest possible sum needs) and their weighted sum is set equal to the
// operands' through m.
func AddMany(m *MultiEq, operands []UInt32) (UInt32, error) {
	if len(operands) < 2 || len(operands) > 10 {
		return UInt32{}, fmt.Errorf("uint32 addmany of %d operands: %w", len(operands), ErrInput)
	}
	maxValue := uint64(len(operands)) * uint64(^uint32(0))
	var sum uint64
	lc := m.tmpL[:0]
	allConst := true
	for k := range operands {
		op := &operands[k]
		sum += uint64(op.Value)
		for i := range op.Bits {
			lc = op.Bits[i].AppendLC(lc, pow2[i])
			allConst = allConst && op.Bits[i].IsConstant()
		}
	}
	m.tmpL = lc
	if allConst {
		return UInt32Constant(uint32(sum)), nil
	}
	var r UInt32
	r.Value = uint32(sum)
	rlc := m.tmpR[:0]
	i := 0
	for ; maxValue != 0; i++ {
		m.PushIndexed("result bit", i)
		b := AllocBit(m, sum>>i&1 == 1)
		m.Pop()
		rlc = rlc.AddCoeff(pow2[i], b.Var)
		if i < 32 {
			r.Bits[i] = Is(b)
		}
		maxValue >>= 1
	}
	m.tmpR = rlc
	if err := m.EnforceEqual(i, lc, rlc); err != nil {
		return UInt32{}, err
	}
	return r, nil
}
