package groth

import (
	"context"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	groth16bls "github.com/consensys/gnark/backend/groth16/bls12-381"
	csbls "github.com/consensys/gnark/constraint/bls12-381"

	"github.com/c2flow/c2flow/filecoin/r1cs"
	"github.com/c2flow/c2flow/gpu"
	"github.com/c2flow/c2flow/prover"
	"github.com/c2flow/c2flow/prover/packed"
)

// testCircuit synthesizes a small circuit into sys for the input x. Its
// public inputs are computed from x.
type testCircuit struct {
	name  string
	build func(sys r1cs.System, x fr.Element)
}

func elt(v uint64) fr.Element {
	var e fr.Element
	e.SetUint64(v)
	return e
}

// denseCircuit puts every variable, ONE and the inputs included, in some
// A and some B: no point of a, b_g1 or b_g2 is left out.
var denseCircuit = testCircuit{"dense", func(sys r1cs.System, x fr.Element) {
	var sq fr.Element
	sq.Square(&x)
	xv := sys.AllocInput(x)
	yv := sys.AllocInput(sq)
	// a0 = x·x; a_{i+1} = (a_i + x)·(a_i + 1)
	cur := sq
	av := sys.Alloc(cur)
	a, b, c := sys.Scratch()
	sys.Enforce("a0", a.Add(xv), b.Add(xv), c.Add(av))
	for i := range 6 {
		var l, r, next fr.Element
		l.Add(&cur, &x)
		one := fr.One()
		r.Add(&cur, &one)
		next.Mul(&l, &r)
		nv := sys.Alloc(next)
		a, b, c = sys.Scratch()
		sys.Enforce("step", a.Add(av).Add(xv), b.Add(av).Add(r1cs.One), c.Add(nv))
		_ = i
		av, cur = nv, next
	}
	// The last aux and y in A and in B.
	a, b, c = sys.Scratch()
	sys.Enforce("last in A", a.Add(av), b.Add(r1cs.One), c.Add(av))
	a, b, c = sys.Scratch()
	sys.Enforce("last in B", a.Add(r1cs.One), b.Add(av), c.Add(av))
	a, b, c = sys.Scratch()
	sys.Enforce("y = x^2", a.Add(xv), b.Add(xv), c.Add(yv))
	a, b, c = sys.Scratch()
	sys.Enforce("y in B", a.Add(r1cs.One), b.Add(yv), c.Add(yv))
}}

// sparseCircuit has aux variables only in C (no a, b_g1, b_g2 point), an
// aux variable only in B, an input in no B (no b_g1, b_g2 point) and ONE
// in B: the density filtering of every query is exercised.
var sparseCircuit = testCircuit{"sparse", func(sys r1cs.System, x fr.Element) {
	one := fr.One()
	var sq fr.Element
	sq.Square(&x)
	var sum fr.Element
	us := make([]r1cs.Variable, 0, 5)
	vals := make([]fr.Element, 5)
	for i := range vals {
		xi := elt(uint64(i))
		xi.Add(&xi, &x)
		vals[i].Square(&xi)
		sum.Add(&sum, &vals[i])
	}
	xv := sys.AllocInput(x)
	zv := sys.AllocInput(sq)  // in A (per-input constraint) and C only
	yv := sys.AllocInput(sum) // in B
	for i := range vals {
		uv := sys.Alloc(vals[i])
		us = append(us, uv)
		ci := elt(uint64(i))
		a, b, c := sys.Scratch()
		sys.Enforce("u_i = (x+i)^2", a.Add(xv).AddCoeff(ci, r1cs.One), b.Add(xv).AddCoeff(ci, r1cs.One), c.Add(uv))
	}
	a, b, c := sys.Scratch()
	c = c.Add(us[0])
	for _, u := range us[1:] {
		c = c.Add(u)
	}
	sys.Enforce("sum", a.Add(r1cs.One), b.Add(yv), c)
	var w fr.Element
	w.Add(&x, &one)
	wv := sys.Alloc(w)
	a, b, c = sys.Scratch()
	sys.Enforce("w in B only", a.Add(r1cs.One), b.Add(wv), c.Add(xv).Add(r1cs.One))
	a, b, c = sys.Scratch()
	sys.Enforce("z = x^2", a.Add(xv), b.Add(xv), c.Add(zv))
}}

// shapeOf records c's shape with bellperson's per-input constraints.
func shapeOf(t testing.TB, c testCircuit) *r1cs.Shape {
	t.Helper()
	s := r1cs.NewShape()
	c.build(s, fr.Element{})
	s.AppendInputConstraints()
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	return s
}

// witnessOf synthesizes c for x with a, b, c kept, checking every
// constraint.
func witnessOf(t testing.TB, c testCircuit, x fr.Element) *r1cs.Witness {
	t.Helper()
	w := r1cs.NewWitness(r1cs.WitnessOptions{ABC: true, Check: true})
	c.build(w, x)
	w.AppendInputConstraints()
	if err := w.Err(); err != nil {
		t.Fatal(err)
	}
	return w
}

// proveGnark proves the witness with gnark's groth16.Prove.
func proveGnark(t testing.TB, ccs *csbls.R1CS, pk *groth16bls.ProvingKey, w *r1cs.Witness) Proof {
	t.Helper()
	full, err := r1cs.GnarkWitness(w.Inputs, w.Aux)
	if err != nil {
		t.Fatal(err)
	}
	gp, err := groth16bls.Prove(ccs, pk, full)
	if err != nil {
		t.Fatalf("gnark prove: %v", err)
	}
	p, err := ProofFromGnark(gp)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// proveSplit proves the witness with c2flow's split prover: the device
// phase on one CPU slot, then finalize; a, b, c evaluated from the packed
// assignment by gnark's R1CS recorded as the prover's system, checked
// first against the witness builder's.
func proveSplit(t testing.TB, ccs *csbls.R1CS, pk *groth16bls.ProvingKey, vk *groth16bls.VerifyingKey, w *r1cs.Witness) Proof {
	t.Helper()
	ctx := context.Background()
	sys, err := prover.GnarkSystem(ccs)
	if err != nil {
		t.Fatal(err)
	}
	pr, err := prover.New(&prover.Keys{Digest: "test", NbPublic: ccs.GetNbPublicVariables(), PK: pk, VK: vk, System: sys}, nil)
	if err != nil {
		t.Fatal(err)
	}
	wires := packed.Pack(append(append([]fr.Element(nil), w.Inputs...), w.Aux...))
	for m, want := range [][]fr.Element{w.A, w.B, w.C} {
		if r, err := packed.FirstDiff(sys, m, wires, want); err != nil || r >= 0 {
			t.Fatalf("%c of row %d from gnark's R1CS and the packed assignment differs from the witness builder's (%v)", "abc"[m], r, err)
		}
	}
	slots, err := gpu.CPUSlots(1, 0)
	if err != nil {
		t.Fatal(err)
	}
	sol := &prover.Solution{Partition: "test/0", W: wires}
	partial, err := pr.Start(ctx, slots, sol)
	if err != nil {
		t.Fatal(err)
	}
	gp, _, err := pr.Finalize(ctx, partial)
	if err != nil {
		t.Fatal(err)
	}
	p, err := ProofFromGnark(gp)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
