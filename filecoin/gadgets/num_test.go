package gadgets

import (
	"testing"

	"github.com/c2flow/c2flow/filecoin/r1cs"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
)

// The cases here follow bellpepper-core's tests,
// crates/bellpepper-core/src/gadgets/num.rs at commit
// cd31fb379cf9e999bce711c32e5a6b88b0f382a2 (bellpepper-core 0.2.1).

func TestNumMulSquare(t *testing.T) {
	rng := newRand()
	x, y := randFr(rng), randFr(rng)
	var sq, prod AllocatedNum
	w, _ := synth(t, func(cs r1cs.System) {
		a, b := AllocNum(cs, x), AllocNum(cs, y)
		sq = a.Square(cs)
		prod = a.Mul(cs, b)
	})
	var want fr.Element
	want.Square(&x)
	if !sq.Value.Equal(&want) {
		t.Fatal("square")
	}
	want.Mul(&x, &y)
	if !prod.Value.Equal(&want) || w.NumConstraints() != 2 {
		t.Fatal("product")
	}
	ue := tampered(t, "", func(v *fr.Element) {
		if v.Equal(&x) {
			v.Add(v, v)
		}
	}, func(cs r1cs.System) {
		a := AllocNum(cs, x)
		a.Square(cs)
	})
	if ue.Path != "squaring constraint" {
		t.Fatalf("bad square reported at %q", ue.Path)
	}
}

func TestNumConditionalReversal(t *testing.T) {
	rng := newRand()
	for _, cond := range []operand{opTrue, opFalse, opAllocTrue, opAllocFalse, opNegAllocTrue} {
		x, y := randFr(rng), randFr(rng)
		var c, d AllocatedNum
		synth(t, func(cs r1cs.System) {
			a, b := AllocNum(cs, x), AllocNum(cs, y)
			c, d = ConditionallyReverse(cs, a, b, cond.build(cs, "condition"))
		})
		if cond.val() {
			x, y = y, x
		}
		if !c.Value.Equal(&x) || !d.Value.Equal(&y) {
			t.Fatalf("condition %v: wrong order", cond)
		}
	}
}

func TestNumNonzero(t *testing.T) {
	var three fr.Element
	three.SetUint64(3)
	circuit := func(cs r1cs.System) {
		cs.Push("n")
		n := AllocNum(cs, three)
		cs.Pop()
		if err := n.AssertNonzero(cs); err != nil {
			t.Fatal(err)
		}
	}
	synth(t, circuit)
	// Upstream sets "ephemeral inverse" to 3.
	ue := tampered(t, "", func(v *fr.Element) { *v = three }, circuit)
	if ue.Path != "nonzero assertion constraint" {
		t.Fatalf("bad inverse reported at %q", ue.Path)
	}
	w := r1cs.NewWitness(r1cs.WitnessOptions{})
	if err := AllocNum(w, fr.Element{}).AssertNonzero(w); err == nil {
		t.Fatal("zero asserted nonzero")
	}
	// Shapes do not care about values.
	s := r1cs.NewShape()
	if err := AllocNum(s, fr.Element{}).AssertNonzero(s); err != nil || s.NumConstraints() != 1 {
		t.Fatal(err)
	}
}

func TestNumIntoBitsStrict(t *testing.T) {
	var negOne fr.Element
	negOne.SetOne()
	negOne.Neg(&negOne)
	circuit := func(cs r1cs.System) {
		AllocNum(cs, negOne).ToBitsLEStrict(cs)
	}
	synth(t, circuit)
	// test_into_bits_strict: make the representation the characteristic by
	// setting "bit 254" to one; the conditional boolean constraint fails.
	ue := tampered(t, "bit 254", func(v *fr.Element) { v.SetOne() }, circuit)
	if ue.Path != "bit 254/boolean constraint" {
		t.Fatalf("non-canonical bits reported at %q", ue.Path)
	}
}

func TestNumIntoBits(t *testing.T) {
	rng := newRand()
	for i := 0; i < 20; i++ {
		r := randFr(rng)
		var bits []Boolean
		circuit := func(cs r1cs.System) {
			n := AllocNum(cs, r)
			if i%2 == 0 {
				bits = n.ToBitsLE(cs)
			} else {
				bits = n.ToBitsLEStrict(cs)
			}
		}
		w, _ := synth(t, circuit)
		le := fieldBitsLE(&r)
		if len(bits) != FieldBits {
			t.Fatalf("%d bits", len(bits))
		}
		for k := range bits {
			if bits[k].Value() != le[k] || bits[k].IsNegated() || bits[k].IsConstant() {
				t.Fatalf("bit %d", k)
			}
		}
		if i%2 == 0 && w.NumConstraints() != FieldBits+1 {
			t.Fatalf("to_bits_le: %d constraints, want 256", w.NumConstraints())
		}
		// Changing the number or any bit breaks the system.
		ue := tampered(t, "", addOne, circuit)
		if ue.Path != "unpacking constraint" {
			t.Fatalf("changed number reported at %q", ue.Path)
		}
		ue = tampered(t, "bit 17", flip, circuit)
		if ue.Path != "unpacking constraint" && ue.Path != "bit 17/boolean constraint" {
			t.Fatalf("flipped bit reported at %q", ue.Path)
		}
	}
}

func TestNumLC(t *testing.T) {
	rng := newRand()
	x, y := randFr(rng), randFr(rng)
	w := r1cs.NewWitness(r1cs.WitnessOptions{})
	a, b := AllocNum(w, x), AllocNum(w, y)
	var two fr.Element
	two.SetUint64(2)
	n := NumOf(a).Add(NumOf(b)).AddScaled(two, NumOf(a)).Scale(two)
	bit := Is(AllocBit(w, true))
	n = n.AddBoolWithCoeff(bit, two).AddBoolWithCoeff(bit.Not(), two).AddBoolWithCoeff(Constant(true), two)
	// n = 2(3x + y) + 2 + 0 + 2, LC merged to three variables and One.
	var want, t3 fr.Element
	t3.SetUint64(3)
	want.Mul(&x, &t3).Add(&want, &y).Double(&want)
	var four fr.Element
	four.SetUint64(4)
	want.Add(&want, &four)
	if !n.Value.Equal(&want) {
		t.Fatal("num value")
	}
	if got := n.LC.Eval(w.Inputs, w.Aux); !got.Equal(&want) {
		t.Fatal("num lc does not evaluate to its value")
	}
	if len(n.LC) != 4 {
		t.Fatalf("num lc has %d terms, want 4 (One, a, b, bit)", len(n.LC))
	}
}
