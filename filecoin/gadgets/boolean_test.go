package gadgets

import (
	"errors"
	"fmt"
	"math/big"
	"testing"

	"github.com/c2flow/c2flow/filecoin/r1cs"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
)

// The cases here follow bellpepper-core's own tests,
// crates/bellpepper-core/src/gadgets/boolean.rs at commit
// cd31fb379cf9e999bce711c32e5a6b88b0f382a2 (bellpepper-core 0.2.1, the
// version rust-fil-proofs' Cargo.lock pins).

type operand int

const (
	opTrue operand = iota
	opFalse
	opAllocTrue
	opAllocFalse
	opNegAllocTrue
	opNegAllocFalse
)

var operands = []operand{opTrue, opFalse, opAllocTrue, opAllocFalse, opNegAllocTrue, opNegAllocFalse}

func (o operand) isConstant() bool { return o == opTrue || o == opFalse }

func (o operand) val() bool { return o == opTrue || o == opAllocTrue || o == opNegAllocFalse }

func (o operand) build(cs r1cs.System, name string) Boolean {
	cs.Push(name)
	defer cs.Pop()
	switch o {
	case opTrue:
		return Constant(true)
	case opFalse:
		return Constant(false)
	case opAllocTrue:
		return Is(AllocBit(cs, true))
	case opAllocFalse:
		return Is(AllocBit(cs, false))
	case opNegAllocTrue:
		return Is(AllocBit(cs, true)).Not()
	default:
		return Is(AllocBit(cs, false)).Not()
	}
}

func TestAllocatedBitOps(t *testing.T) {
	ops := []struct {
		name string
		f    func(cs r1cs.System, a, b AllocatedBit) AllocatedBit
		want func(a, b bool) bool
	}{
		{"xor", XorBits, func(a, b bool) bool { return a != b }},
		{"and", AndBits, func(a, b bool) bool { return a && b }},
		{"and not", AndNotBits, func(a, b bool) bool { return a && !b }},
		{"nor", NorBits, func(a, b bool) bool { return !a && !b }},
	}
	for _, op := range ops {
		for _, av := range []bool{false, true} {
			for _, bv := range []bool{false, true} {
				var got AllocatedBit
				circuit := func(cs r1cs.System) {
					cs.Push("a")
					a := AllocBit(cs, av)
					cs.Pop()
					cs.Push("b")
					b := AllocBit(cs, bv)
					cs.Pop()
					cs.Push("op")
					got = op.f(cs, a, b)
					cs.Pop()
				}
				w, _ := synth(t, circuit)
				if got.Value != op.want(av, bv) || w.NumConstraints() != 3 {
					t.Fatalf("%s(%v, %v) = %v with %d constraints", op.name, av, bv, got.Value, w.NumConstraints())
				}
				// Inverting the result breaks the operation's constraint.
				ue := tampered(t, "op", flip, circuit)
				if ue.Path != "op/"+op.name+" constraint" {
					t.Fatalf("%s: inverted result reported at %q", op.name, ue.Path)
				}
			}
		}
	}
	// test_allocated_bit: 2 is not a bit.
	ue := tampered(t, "", func(v *fr.Element) { v.SetUint64(2) }, func(cs r1cs.System) { AllocBit(cs, true) })
	if ue.Path != "boolean constraint" {
		t.Fatalf("non-bit reported at %q", ue.Path)
	}
}

func TestAllocBitConditionally(t *testing.T) {
	for _, must := range []bool{false, true} {
		for _, v := range []bool{false, true} {
			w := r1cs.NewWitness(r1cs.WitnessOptions{Check: true})
			b := AllocBit(w, must)
			AllocBitConditionally(w, v, b)
			// Only must_be_false = true with value true is unsatisfiable.
			if (w.Err() == nil) != !(must && v) {
				t.Fatalf("alloc_conditionally(%v, must_be_false=%v): %v", v, must, w.Err())
			}
		}
	}
}

func TestBooleanXorAnd(t *testing.T) {
	for _, x := range operands {
		for _, y := range operands {
			for _, op := range []string{"xor", "and"} {
				var got Boolean
				w, _ := synth(t, func(cs r1cs.System) {
					a, b := x.build(cs, "a"), y.build(cs, "b")
					if op == "xor" {
						got = Xor(cs, a, b)
					} else {
						got = And(cs, a, b)
					}
				})
				want := x.val() != y.val()
				if op == "and" {
					want = x.val() && y.val()
				}
				if got.Value() != want {
					t.Fatalf("%v %s %v = %v", x, op, y, got.Value())
				}
				allocs := 0
				for _, o := range []operand{x, y} {
					if !o.isConstant() {
						allocs++
					}
				}
				wantN := allocs
				if allocs == 2 {
					wantN++ // the operation itself
				}
				if w.NumConstraints() != wantN || got.IsConstant() != (allocs == 0 || (op == "and" && (x == opFalse || y == opFalse))) {
					t.Fatalf("%v %s %v: %d constraints, constant=%v", x, op, y, w.NumConstraints(), got.IsConstant())
				}
			}
		}
	}
}

func TestBooleanEnforceEqual(t *testing.T) {
	for _, x := range operands {
		for _, y := range operands {
			w := r1cs.NewWitness(r1cs.WitnessOptions{Check: true})
			a, b := x.build(w, "a"), y.build(w, "b")
			err := EnforceEqual(w, a, b)
			equal := x.val() == y.val()
			if x.isConstant() && y.isConstant() {
				if equal != (err == nil) || (err != nil && !errors.Is(err, ErrUnsatisfiable)) {
					t.Fatalf("%v = %v: %v", x, y, err)
				}
				continue
			}
			if err != nil || (w.Err() == nil) != equal {
				t.Fatalf("%v = %v: %v / %v", x, y, err, w.Err())
			}
		}
	}
}

func TestBooleanSHA256ChMaj(t *testing.T) {
	for _, x := range operands {
		for _, y := range operands {
			for _, z := range operands {
				for _, op := range []string{"ch", "maj"} {
					var got Boolean
					circuit := func(cs r1cs.System) {
						a, b, c := x.build(cs, "a"), y.build(cs, "b"), z.build(cs, "c")
						if op == "ch" {
							got = SHA256Ch(cs, a, b, c)
						} else {
							got = SHA256Maj(cs, a, b, c)
						}
					}
					w, _ := synth(t, circuit)
					a, b, c := x.val(), y.val(), z.val()
					want := (a && b) != (!a && c)
					if op == "maj" {
						want = (a && b) != (a && c) != (b && c)
					}
					if got.Value() != want {
						t.Fatalf("%s(%v, %v, %v) = %v", op, x, y, z, got.Value())
					}
					allConst := x.isConstant() && y.isConstant() && z.isConstant()
					if allConst && w.NumConstraints() != 0 {
						t.Fatalf("%s of constants: %d constraints", op, w.NumConstraints())
					}
					if !x.isConstant() && !y.isConstant() && !z.isConstant() {
						// The result is the first variable allocated outside
						// the operands' namespaces; inverting it breaks the
						// defining constraint.
						ue := tampered(t, "", flip, circuit)
						if ue.Path != op+" computation" {
							t.Fatalf("%s: inverted result reported at %q", op, ue.Path)
						}
					}
				}
			}
		}
	}
}

func TestBitDecompositions(t *testing.T) {
	// test_u64_into_boolean_vec_le.
	w := r1cs.NewWitness(r1cs.WitnessOptions{Check: true})
	bits := U64IntoBooleansLE(w, 17234652694787248421)
	if len(bits) != 64 || w.Err() != nil {
		t.Fatal(len(bits), w.Err())
	}
	for _, c := range []struct {
		i    int
		want bool
	}{{0, true}, {1, true}, {2, true}, {3, false}, {4, true}, {5, true}, {20, true}, {21, false}, {22, false}} {
		if bits[63-c.i].Value() != c.want {
			t.Fatalf("u64 bit 63-%d", c.i)
		}
	}
	// test_field_into_allocated_bits_le.
	var bi big.Int
	bi.SetString("9147677615426976802526883532204139322118074541891858454835346926874644257775", 10)
	var r fr.Element
	r.SetBigInt(&bi)
	fb := FieldIntoAllocatedBitsLE(w, r)
	if len(fb) != 255 || w.Err() != nil {
		t.Fatal(len(fb), w.Err())
	}
	for _, c := range []struct {
		i    int
		want bool
	}{{0, false}, {1, false}, {2, true}, {3, false}, {4, true}, {5, false}, {20, true}, {23, true}} {
		if fb[254-c.i].Value != c.want {
			t.Fatalf("field bit 254-%d", c.i)
		}
	}
	if fmt.Sprint(Constant(true).Not().Value(), Is(fb[0]).Not().Not().IsNegated()) != "false false" {
		t.Fatal("negation")
	}
}
