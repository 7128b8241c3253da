package gadgets

import (
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/c2flow/c2flow/filecoin/r1cs"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
)

// synth runs circuit on the witness builder (check mode, with a, b, c),
// the shape recorder and the counter, and checks that they agree: the
// witness satisfies every constraint, the three see the same sizes, and
// the shape's compiled a, b, c equal the witness builder's.
func synth(t *testing.T, circuit func(cs r1cs.System)) (*r1cs.Witness, *r1cs.Shape) {
	t.Helper()
	w := r1cs.NewWitness(r1cs.WitnessOptions{ABC: true, Check: true})
	circuit(w)
	if err := w.Err(); err != nil {
		t.Fatalf("witness: %v", err)
	}
	s := r1cs.NewShape()
	circuit(s)
	c := r1cs.NewCounter()
	circuit(c)
	if s.Stats() != c.Stats() {
		t.Fatalf("shape stats %v != counter stats %v", s.Stats(), c.Stats())
	}
	st := s.Stats()
	if st.Constraints != w.NumConstraints() || st.Inputs != len(w.Inputs) || st.Aux != len(w.Aux) {
		t.Fatalf("shape %v vs witness %d constraints %d inputs %d aux", st, w.NumConstraints(), len(w.Inputs), len(w.Aux))
	}
	a, b, cc, err := s.EvalABC(w.Inputs, w.Aux)
	if err != nil {
		t.Fatal(err)
	}
	for r := range a {
		if a[r] != w.A[r] || b[r] != w.B[r] || cc[r] != w.C[r] {
			t.Fatalf("constraint %d: compiled a, b, c differ from the witness builder's", r)
		}
	}
	return w, s
}

// tamperCS perturbs the value of the first aux variable allocated under
// namespace path target.
type tamperCS struct {
	*r1cs.Witness
	target string
	done   bool
	f      func(*fr.Element)
}

func (t *tamperCS) Alloc(v fr.Element) r1cs.Variable {
	if !t.done && r1cs.Path(t.Witness) == t.target {
		t.done = true
		t.f(&v)
	}
	return t.Witness.Alloc(v)
}

// flip maps a bit's value 0 <-> 1 (1 − x).
func flip(v *fr.Element) {
	one := fr.One()
	v.Sub(&one, v)
}

func addOne(v *fr.Element) {
	one := fr.One()
	v.Add(v, &one)
}

// tampered synthesizes circuit with the value under target perturbed by f
// and returns the first unsatisfied constraint.
func tampered(t *testing.T, target string, f func(*fr.Element), circuit func(cs r1cs.System)) *r1cs.UnsatisfiedError {
	t.Helper()
	tw := &tamperCS{Witness: r1cs.NewWitness(r1cs.WitnessOptions{Check: true}), target: target, f: f}
	circuit(tw)
	if !tw.done {
		t.Fatalf("no variable allocated under %q", target)
	}
	var ue *r1cs.UnsatisfiedError
	if err := tw.Err(); !errors.As(err, &ue) {
		t.Fatalf("tampering %q: got %v, want an unsatisfied constraint", target, err)
	}
	return ue
}

func newRand() *rand.Rand { return rand.New(rand.NewPCG(0x5962be3d, 0x763d318d)) }

func randFr(rng *rand.Rand) fr.Element {
	var b [32]byte
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	var e fr.Element
	e.SetBytes(b[:]) // reduced mod r
	return e
}

// allocBits allocates bits under "name i" namespaces.
func allocBits(cs r1cs.System, name string, vals []bool) []Boolean {
	out := make([]Boolean, len(vals))
	for i, v := range vals {
		cs.PushIndexed(name, i)
		out[i] = Is(AllocBit(cs, v))
		cs.Pop()
	}
	return out
}

func bitsOf(bs []Boolean) []bool {
	out := make([]bool, len(bs))
	for i, b := range bs {
		out[i] = b.Value()
	}
	return out
}
