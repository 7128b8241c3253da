package gadgets

import (
	"math/bits"
	"testing"

	"github.com/c2flow/c2flow/filecoin/r1cs"
)

// The cases here follow bellperson's tests, src/gadgets/uint32.rs at tag
// v0.27.0 (commit bb36c30260f88b7417cad6573b381db9362db46e).

func checkUInt32(t *testing.T, u UInt32, want uint32) {
	t.Helper()
	if u.Value != want {
		t.Fatalf("value %#x, want %#x", u.Value, want)
	}
	for i, b := range u.Bits {
		if b.Value() != (want>>i&1 == 1) {
			t.Fatalf("bit %d of %#x", i, want)
		}
	}
}

func TestUInt32FromBits(t *testing.T) {
	rng := newRand()
	for k := 0; k < 100; k++ {
		v := rng.Uint32()
		c := UInt32Constant(v)
		be, err := UInt32FromBitsBE(c.BitsBE())
		if err != nil {
			t.Fatal(err)
		}
		checkUInt32(t, be, v)
		le, err := UInt32FromBits(c.Bits[:])
		if err != nil {
			t.Fatal(err)
		}
		checkUInt32(t, le, v)
		for _, by := range []int{0, 1, 7, 31, 32, 45} {
			checkUInt32(t, c.Rotr(by), bits.RotateLeft32(v, -(by%32)))
			checkUInt32(t, c.Shr(by), v>>(by%32))
		}
	}
	if _, err := UInt32FromBits(make([]Boolean, 31)); err == nil {
		t.Fatal("31 bits accepted")
	}
	if _, err := UInt32FromBitsBE(make([]Boolean, 33)); err == nil {
		t.Fatal("33 bits accepted")
	}
}

func TestUInt32Xor(t *testing.T) {
	rng := newRand()
	for k := 0; k < 100; k++ {
		a, b, c := rng.Uint32(), rng.Uint32(), rng.Uint32()
		var r UInt32
		synth(t, func(cs r1cs.System) {
			cs.Push("a_bit")
			ab := AllocUInt32(cs, a)
			cs.Pop()
			cs.Push("c_bit")
			cb := AllocUInt32(cs, c)
			cs.Pop()
			cs.Push("first xor")
			r = ab.Xor(cs, UInt32Constant(b))
			cs.Pop()
			cs.Push("second xor")
			r = r.Xor(cs, cb)
			cs.Pop()
		})
		checkUInt32(t, r, a^b^c)
	}
}

func TestUInt32AddManyConstants(t *testing.T) {
	rng := newRand()
	for k := 0; k < 100; k++ {
		a, b, c := rng.Uint32(), rng.Uint32(), rng.Uint32()
		w := r1cs.NewWitness(r1cs.WitnessOptions{Check: true})
		m := NewMultiEq(w)
		r, err := AddMany(m, []UInt32{UInt32Constant(a), UInt32Constant(b), UInt32Constant(c)})
		m.Close()
		if err != nil {
			t.Fatal(err)
		}
		checkUInt32(t, r, a+b+c)
		for _, bit := range r.Bits {
			if !bit.IsConstant() {
				t.Fatal("sum of constants is not constant")
			}
		}
		if w.NumConstraints() != 0 {
			t.Fatalf("sum of constants: %d constraints", w.NumConstraints())
		}
	}
}

func TestUInt32AddMany(t *testing.T) {
	rng := newRand()
	for k := 0; k < 100; k++ {
		a, b, c, d := rng.Uint32(), rng.Uint32(), rng.Uint32(), rng.Uint32()
		var r UInt32
		circuit := func(cs r1cs.System) {
			cs.Push("a_bit")
			ab := AllocUInt32(cs, a)
			cs.Pop()
			cs.Push("d_bit")
			db := AllocUInt32(cs, d)
			cs.Pop()
			cs.Push("xor")
			x := ab.Xor(cs, UInt32Constant(b))
			cs.Pop()
			m := NewMultiEq(cs)
			m.Push("addition")
			var err error
			r, err = AddMany(m, []UInt32{x, UInt32Constant(c), db})
			m.Pop()
			m.Close()
			if err != nil {
				t.Fatal(err)
			}
		}
		w, _ := synth(t, circuit)
		checkUInt32(t, r, (a^b)+c+d)
		// 64 operand bits + 34 result bits (3 operands need 34 bits) + one
		// batched equality.
		if w.NumConstraints() != 64+34+1 {
			t.Fatalf("%d constraints", w.NumConstraints())
		}
		// Flipping a result bit breaks the batched equality (upstream sets
		// "addition/result bit 0/boolean").
		ue := tampered(t, "addition/result bit 0", flip, circuit)
		if ue.Path != "multieq 0" {
			t.Fatalf("flipped sum bit reported at %q", ue.Path)
		}
	}
	m := NewMultiEq(r1cs.NewCounter())
	if _, err := AddMany(m, []UInt32{UInt32Constant(1)}); err == nil {
		t.Fatal("one operand accepted")
	}
	if _, err := AddMany(m, make([]UInt32, 11)); err == nil {
		t.Fatal("11 operands accepted")
	}
}

func TestMultiEqBatching(t *testing.T) {
	// 34-bit sums: 7 fit in the 254-bit capacity (7·34 = 238), the 8th
	// starts a new constraint.
	w, _ := synth(t, func(cs r1cs.System) {
		m := NewMultiEq(cs)
		for i := 0; i < 8; i++ {
			x := AllocUInt32(cs, uint32(i*0x9e3779b9))
			y := AllocUInt32(cs, uint32(i*0x7f4a7c15))
			if _, err := AddMany(m, []UInt32{x, y, UInt32Constant(3)}); err != nil {
				t.Fatal(err)
			}
		}
		m.Close()
	})
	if got, want := w.NumConstraints(), 8*(64+34)+2; got != want {
		t.Fatalf("%d constraints, want %d", got, want)
	}
}

func TestUInt32ChMaj(t *testing.T) {
	rng := newRand()
	for k := 0; k < 50; k++ {
		a, b, c := rng.Uint32(), rng.Uint32(), rng.Uint32()
		var ch, chConst, maj UInt32
		synth(t, func(cs r1cs.System) {
			cs.Push("a_bit")
			ab := AllocUInt32(cs, a)
			cs.Pop()
			cs.Push("c_bit")
			cb := AllocUInt32(cs, c)
			cs.Pop()
			// Upstream's tests use a constant b; ch is also run on three
			// allocated words.
			maj = UInt32SHA256Maj(cs, ab, UInt32Constant(b), cb)
			chConst = UInt32SHA256Ch(cs, ab, UInt32Constant(b), cb)
			cs.Push("b_bit")
			bb := AllocUInt32(cs, b)
			cs.Pop()
			ch = UInt32SHA256Ch(cs, ab, bb, cb)
		})
		checkUInt32(t, maj, (a&b)^(a&c)^(b&c))
		checkUInt32(t, ch, (a&b)^(^a&c))
		checkUInt32(t, chConst, (a&b)^(^a&c))
	}
}
