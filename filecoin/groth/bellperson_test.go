package groth

import (
	"errors"
	"math/big"
	"testing"

	bls "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/c2flow/c2flow/filecoin/r1cs"
)

// bellpersonSetup is bellperson 0.27.0's generate_parameters
// (src/groth16/generator.rs) over a recorded shape with its per-input
// constraints, written from its definitions and blstrs' constants alone
// (nothing from gnark's setup or FFT): random g1, g2 and toxic waste;
// the domain of EvaluationDomain::from_coeffs (omega from blstrs'
// ROOT_OF_UNITY); h[i] = tau^i (tau^m - 1)/delta for i < m-1; the
// Lagrange coefficients at tau as the inverse FFT of the powers of tau,
// (1/m) sum_i tau^i omega^(-ij); a, b_g1, b_g2 of the nonzero QAP
// polynomials only; IC and l as (beta A + alpha B + C)/gamma and /delta.
func bellpersonSetup(t testing.TB, s *r1cs.Shape) *Params {
	t.Helper()
	tw := &toxicWaste{g1: g1Mul(randScalar(t)), g2: g2Mul(randScalar(t)),
		tau: randScalar(t), alpha: randScalar(t), beta: randScalar(t), gamma: randScalar(t), delta: randScalar(t)}
	return bellpersonSetupWith(t, s, tw)
}

// bellpersonSetupWith is bellpersonSetup with the given toxic waste.
func bellpersonSetupWith(t testing.TB, s *r1cs.Shape, tw *toxicWaste) *Params {
	t.Helper()
	n := s.NumConstraints()
	m, exp := 1, 0
	for m < n {
		m *= 2
		exp++
	}
	omega := bellpersonOmega(exp)
	g1, g2 := tw.g1, tw.g2
	tau, alpha, beta, gamma, delta := tw.tau, tw.alpha, tw.beta, tw.gamma, tw.delta
	var gammaInv, deltaInv fr.Element
	gammaInv.Inverse(&gamma)
	deltaInv.Inverse(&delta)
	mul1 := func(e fr.Element) bls.G1Affine {
		var p bls.G1Affine
		p.ScalarMultiplication(&g1, scalarBig(&e))
		return p
	}
	mul2 := func(e fr.Element) bls.G2Affine {
		var p bls.G2Affine
		p.ScalarMultiplication(&g2, scalarBig(&e))
		return p
	}

	powers := make([]fr.Element, m)
	powers[0].SetOne()
	for i := 1; i < m; i++ {
		powers[i].Mul(&powers[i-1], &tau)
	}
	var z fr.Element
	z.Exp(tau, big.NewInt(int64(m)))
	one := fr.One()
	z.Sub(&z, &one)
	var coeff fr.Element
	coeff.Mul(&z, &deltaInv)
	p := &Params{H: make([]bls.G1Affine, m-1)}
	for i := range p.H {
		var e fr.Element
		e.Mul(&powers[i], &coeff)
		p.H[i] = mul1(e)
	}

	// Lagrange coefficients: the inverse DFT of the powers of tau.
	var omegaInv, mInv fr.Element
	omegaInv.Inverse(&omega)
	mInv.SetUint64(uint64(m))
	mInv.Inverse(&mInv)
	lag := make([]fr.Element, m)
	for j := range lag {
		var wj, w, acc fr.Element
		wj.Exp(omegaInv, big.NewInt(int64(j)))
		w.SetOne()
		for i := range m {
			var term fr.Element
			term.Mul(&powers[i], &w)
			acc.Add(&acc, &term)
			w.Mul(&w, &wj)
		}
		lag[j].Mul(&acc, &mInv)
	}

	vars := s.NumInputs + s.NumAux
	at, bt, ct := make([]fr.Element, vars), make([]fr.Element, vars), make([]fr.Element, vars)
	for _, q := range []struct {
		m   *r1cs.Matrix
		dst []fr.Element
	}{{&s.A, at}, {&s.B, bt}, {&s.C, ct}} {
		for r := 0; r < q.m.Rows(); r++ {
			for k := q.m.RowStart[r]; k < q.m.RowStart[r+1]; k++ {
				var e fr.Element
				e.Mul(&s.Coeffs[q.m.Coeffs[k]], &lag[r])
				col := s.Column(q.m.Vars[k])
				q.dst[col].Add(&q.dst[col], &e)
			}
		}
	}
	for j := range vars {
		if !at[j].IsZero() {
			p.A = append(p.A, mul1(at[j]))
		}
		if !bt[j].IsZero() {
			p.BG1 = append(p.BG1, mul1(bt[j]))
			p.BG2 = append(p.BG2, mul2(bt[j]))
		}
		var e, x fr.Element
		e.Mul(&at[j], &beta)
		x.Mul(&bt[j], &alpha)
		e.Add(&e, &x).Add(&e, &ct[j])
		if j < s.NumInputs {
			e.Mul(&e, &gammaInv)
			p.VK.IC = append(p.VK.IC, mul1(e))
		} else {
			e.Mul(&e, &deltaInv)
			if e.IsZero() {
				t.Fatalf("aux %d unconstrained", j-s.NumInputs)
			}
			p.L = append(p.L, mul1(e))
		}
	}
	p.VK.AlphaG1, p.VK.BetaG1, p.VK.DeltaG1 = mul1(alpha), mul1(beta), mul1(delta)
	p.VK.BetaG2, p.VK.GammaG2, p.VK.DeltaG2 = mul2(beta), mul2(gamma), mul2(delta)
	return p
}

// The conversion is right for parameters made the way bellperson makes
// them, not only for gnark's: bellperson-generated parameters (natural-
// order h over bellperson's domain), written and read back, converted,
// prove with gnark's prover and c2flow's split prover, and the proofs
// verify with the bellperson key. Without the bit-reversal of h (gnark's
// Z in bellperson's order) the proofs do not verify: the test sees the
// mapping.
func TestBellpersonParamsProve(t *testing.T) {
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
			p := bellpersonSetup(t, shape)
			pp, vp := saveParams(t, t.TempDir(), c.name, p)
			back, bvk := readBack(t, pp, vp)
			if !paramsEqual(back, p) {
				t.Fatal("params read back differ from those written")
			}
			pk, gvk, err := LoadProvingKey(pp, d, ReadOptions{Check: CheckSubgroup})
			if err != nil {
				t.Fatal(err)
			}
			w := witnessOf(t, c, elt(5))
			public := w.Inputs[1:]
			checkProof(t, "gnark prover", proveGnark(t, ccs, pk, w), bvk, gvk, public)
			checkProof(t, "split prover", proveSplit(t, ccs, pk, gvk, w), bvk, gvk, public)

			// h in bellperson's order where gnark expects its own: no proof.
			permuteH(pk.G1.Z)
			bad := proveGnark(t, ccs, pk, w)
			if err := bvk.Prepare().Verify(&bad, public); !errors.Is(err, ErrInvalidProof) {
				t.Fatalf("proof with h unpermuted: %v, want ErrInvalidProof", err)
			}
		})
	}
}
