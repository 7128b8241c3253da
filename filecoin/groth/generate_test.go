package groth

import (
	"errors"
	"math/big"
	"math/rand/v2"
	"testing"

	bls "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/c2flow/c2flow/filecoin/r1cs"
)

func seeded(seed byte) *rand.ChaCha8 { return rand.NewChaCha8([32]byte{seed}) }

// The fixed-base method agrees with gnark-crypto's scalar multiplication
// on the scalars whose windows are at an edge: zero (infinity), one, the
// largest digit of a window, a carry across limbs, r - 1, and random ones,
// for table widths from the smallest to 16 bits (the width follows the
// count).
func TestFixedBaseMatches(t *testing.T) {
	var edge []fr.Element
	var e fr.Element
	edge = append(edge, e) // zero
	e.SetOne()
	edge = append(edge, e)
	e.SetBigInt(new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 16), big.NewInt(1)))
	edge = append(edge, e)
	e.SetBigInt(new(big.Int).Lsh(big.NewInt(0xffff), 56)) // straddles limbs 0 and 1
	edge = append(edge, e)
	e.SetBigInt(new(big.Int).Sub(fr.Modulus(), big.NewInt(1)))
	edge = append(edge, e)
	base1, base2 := g1Mul(randScalar(t)), g2Mul(randScalar(t))
	for _, n := range []int{len(edge), 300, 70000} {
		scalars := append([]fr.Element(nil), edge...)
		for len(scalars) < n {
			scalars = append(scalars, randScalar(t))
		}
		t.Logf("n=%d window=%d", n, fixedBaseWindow(n))
		got1 := g1FixedBase(&base1, scalars)
		check := func(i int) bool { return i < len(edge) || i%997 == 0 || i == n-1 }
		for i := range scalars {
			if !check(i) {
				continue
			}
			var want bls.G1Affine
			want.ScalarMultiplication(&base1, scalars[i].BigInt(new(big.Int)))
			if !got1[i].Equal(&want) {
				t.Fatalf("n=%d: G1 scalar %d (%s) differs", n, i, scalars[i].String())
			}
		}
		if n > 1000 {
			continue // G2 is slower; its table is the same code
		}
		got2 := g2FixedBase(&base2, scalars)
		for i := range scalars {
			var want bls.G2Affine
			want.ScalarMultiplication(&base2, scalars[i].BigInt(new(big.Int)))
			if !got2[i].Equal(&want) {
				t.Fatalf("n=%d: G2 scalar %d (%s) differs", n, i, scalars[i].String())
			}
		}
	}
	if !g1FixedBase(&base1, edge[:1])[0].IsInfinity() {
		t.Fatal("zero scalar: not the point at infinity")
	}
}

// Generate computes what bellperson's generator computes: for the same
// toxic waste, every point of the fast path (FFT Lagrange coefficients,
// fixed-base tables) equals the test's reference, written from
// bellperson's definitions with a quadratic inverse DFT over blstrs'
// omega and plain scalar multiplications.
func TestGenerateMatchesBellperson(t *testing.T) {
	for _, c := range []testCircuit{denseCircuit, sparseCircuit} {
		t.Run(c.name, func(t *testing.T) {
			shape := shapeOf(t, c)
			tw, err := drawToxicWaste(seeded(1))
			if err != nil {
				t.Fatal(err)
			}
			got, err := generate(shape, tw)
			if err != nil {
				t.Fatal(err)
			}
			want := bellpersonSetupWith(t, shape, tw)
			want.VK.IC = want.VK.IC[:len(want.VK.IC):len(want.VK.IC)]
			if !paramsEqual(got, want) || !got.VK.Equal(&want.VK) {
				t.Fatalf("Generate differs from bellperson's generator: h %d/%d l %d/%d a %d/%d b %d/%d",
					len(got.H), len(want.H), len(got.L), len(want.L), len(got.A), len(want.A), len(got.BG1), len(want.BG1))
			}
		})
	}
}

// Parameters from Generate prove: written in Filecoin's format, read back
// and converted, gnark's prover and the split prover make proofs that
// bellperson's verification and gnark's verifier accept, that a flipped
// bit or another public input breaks (checkProof), and that another
// seed's verifying key refuses. One seed gives one setup.
func TestGenerateProves(t *testing.T) {
	for _, c := range []testCircuit{denseCircuit, sparseCircuit} {
		t.Run(c.name, func(t *testing.T) {
			shape := shapeOf(t, c)
			d, err := DensityOf(shape)
			if err != nil {
				t.Fatal(err)
			}
			ccs, err := shape.Gnark()
			if err != nil {
				t.Fatal(err)
			}
			p, err := Generate(shape, seeded(7))
			if err != nil {
				t.Fatal(err)
			}
			again, err := Generate(shape, seeded(7))
			if err != nil {
				t.Fatal(err)
			}
			if !paramsEqual(p, again) {
				t.Fatal("one seed, two setups")
			}
			other, err := Generate(shape, seeded(8))
			if err != nil {
				t.Fatal(err)
			}
			pp, vp := saveParams(t, t.TempDir(), c.name, p)
			_, bvk := readBack(t, pp, vp)
			pk, gvk, err := LoadProvingKey(pp, d, ReadOptions{Check: CheckSubgroup})
			if err != nil {
				t.Fatal(err)
			}
			w := witnessOf(t, c, elt(5))
			public := w.Inputs[1:]
			proof := proveGnark(t, ccs, pk, w)
			checkProof(t, "gnark prover", proof, bvk, gvk, public)
			checkProof(t, "split prover", proveSplit(t, ccs, pk, gvk, w), bvk, gvk, public)
			if err := other.VK.Prepare().Verify(&proof, public); !errors.Is(err, ErrInvalidProof) {
				t.Fatalf("proof verifies under another seed's key: %v", err)
			}
		})
	}
}

// An aux variable in no constraint has no l point: bellperson's
// UnconstrainedVariable.
func TestGenerateUnconstrained(t *testing.T) {
	s := shapeOf(t, testCircuit{"loose", func(sys r1cs.System, x fr.Element) {
		xv := sys.AllocInput(x)
		sys.Alloc(x) // in no constraint
		a, b, c := sys.Scratch()
		sys.Enforce("x*x", a.Add(xv), b.Add(xv), c.Add(xv))
	}})
	if _, err := Generate(s, seeded(1)); !errors.Is(err, ErrPoint) {
		t.Fatalf("unconstrained aux: %v, want ErrPoint", err)
	}
}

// The fixed-base method against gnark-crypto's BatchScalarMultiplicationG1
// (which doubles every point 255 times) on 2^18 scalars:
//
//	go test ./filecoin/groth -run '^$' -bench FixedBase -benchtime 3x
func BenchmarkFixedBase(b *testing.B) {
	scalars := make([]fr.Element, 1<<18)
	for i := range scalars {
		scalars[i] = randScalar(b)
	}
	base := g1Mul(randScalar(b))
	b.Run("fixedbase", func(b *testing.B) {
		for b.Loop() {
			g1FixedBase(&base, scalars)
		}
	})
	b.Run("gnark-batch", func(b *testing.B) {
		for b.Loop() {
			bls.BatchScalarMultiplicationG1(&base, scalars)
		}
	})
}
