package groth

import (
	"fmt"
	"io"
	"math/big"
	"sync"

	bls "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr/fft"

	"github.com/c2flow/c2flow/filecoin/r1cs"
)

// toxicWaste is what generate_random_parameters draws: the generators and
// the trapdoor. Whoever knows it can forge proofs.
type toxicWaste struct {
	g1                             bls.G1Affine
	g2                             bls.G2Affine
	alpha, beta, gamma, delta, tau fr.Element
}

// drawToxicWaste draws, from rand, g1 and g2 as random multiples of the
// standard generators (bellperson draws random points) and the five
// nonzero scalars, in that order: one rand stream gives one setup.
func drawToxicWaste(rand io.Reader) (*toxicWaste, error) {
	var tw toxicWaste
	var k1, k2 fr.Element
	for _, e := range []*fr.Element{&k1, &k2, &tw.alpha, &tw.beta, &tw.gamma, &tw.delta, &tw.tau} {
		var b [48]byte // 384 bits reduced mod r: bias below 2^-128
		for e.IsZero() {
			if _, err := io.ReadFull(rand, b[:]); err != nil {
				return nil, fmt.Errorf("generating parameters: randomness: %w", err)
			}
			e.SetBigInt(new(big.Int).SetBytes(b[:]))
		}
	}
	tw.g1, tw.g2 = g1Base(&k1), g2Base(&k2)
	return &tw, nil
}

// Generate is bellperson's generate_random_parameters (bellperson 0.27.0
// src/groth16/generator.rs) over a recorded shape that holds the per-input
// constraints: a DEVELOPMENT setup whose toxic waste comes from rand (one
// stream, one setup), in Filecoin's format. Its steps:
//
//   - the powers of tau over the domain (the constraint count rounded up
//     to a power of two, the domain gnark's prover uses: see
//     TestDomainMatchesBellperson), and h[i] = tau^i (tau^n - 1)/delta;
//   - the Lagrange coefficients at tau, the inverse FFT of those powers;
//   - A_j(tau), B_j(tau), C_j(tau) for every variable j, summed from the
//     matrices' entries;
//   - a, b_g1, b_g2 for the variables of nonzero A or B (the density
//     bellperson's prover expects), IC and l as (beta A + alpha B + C)
//     over gamma and delta;
//   - every query multiplied out by the fixed-base windowed method.
//
// An aux variable in no constraint (l at infinity) is bellperson's
// UnconstrainedVariable, an error.
func Generate(s *r1cs.Shape, rand io.Reader) (*Params, error) {
	tw, err := drawToxicWaste(rand)
	if err != nil {
		return nil, err
	}
	return generate(s, tw)
}

func generate(s *r1cs.Shape, tw *toxicWaste) (*Params, error) {
	d, err := DensityOf(s)
	if err != nil {
		return nil, fmt.Errorf("generating parameters: %w", err)
	}
	n := d.DomainSize()
	domain := fft.NewDomain(uint64(d.NumConstraints))
	if int(domain.Cardinality) != n {
		return nil, fmt.Errorf("generating parameters: gnark's domain has %d elements, bellperson's %d: %w", domain.Cardinality, n, ErrMismatch)
	}
	var gammaInv, deltaInv fr.Element
	gammaInv.Inverse(&tw.gamma)
	deltaInv.Inverse(&tw.delta)

	p := &Params{}
	lagrange := powersOf(&tw.tau, n)
	{
		// h[i] = tau^i · (tau^n - 1)/delta, i < n - 1.
		var coeff, one fr.Element
		one.SetOne()
		coeff.Exp(tw.tau, big.NewInt(int64(n)))
		coeff.Sub(&coeff, &one).Mul(&coeff, &deltaInv)
		h := make([]fr.Element, n-1)
		parallelFor(len(h), 1<<14, func(lo, hi int) {
			for i := lo; i < hi; i++ {
				h[i].Mul(&lagrange[i], &coeff)
			}
		})
		p.H = g1FixedBase(&tw.g1, h)
	}
	// L_i(tau) = (1/n) sum_j tau^j omega^(-ij): the inverse DFT of the
	// powers, in natural order.
	domain.FFTInverse(lagrange, fft.DIF)
	fft.BitReverse(lagrange)

	vars := d.NumVars()
	at, bt, ct := make([]fr.Element, vars), make([]fr.Element, vars), make([]fr.Element, vars)
	var wg sync.WaitGroup
	for _, q := range []struct {
		m   *r1cs.Matrix
		dst []fr.Element
	}{{&s.A, at}, {&s.B, bt}, {&s.C, ct}} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			evaluate(s, q.m, lagrange, q.dst)
		}()
	}
	wg.Wait()
	lagrange = nil

	// ext_j = (beta A_j + alpha B_j + C_j)/gamma for inputs, /delta for aux.
	ext := make([]fr.Element, vars)
	parallelFor(vars, 1<<14, func(lo, hi int) {
		for j := lo; j < hi; j++ {
			var x fr.Element
			ext[j].Mul(&at[j], &tw.beta)
			x.Mul(&bt[j], &tw.alpha)
			ext[j].Add(&ext[j], &x).Add(&ext[j], &ct[j])
			if j < d.NumInputs {
				ext[j].Mul(&ext[j], &gammaInv)
			} else {
				ext[j].Mul(&ext[j], &deltaInv)
			}
		}
	})
	ct = nil
	for j := d.NumInputs; j < vars; j++ {
		if ext[j].IsZero() {
			return nil, fmt.Errorf("generating parameters: aux variable %d is unconstrained (its l point would be at infinity): %w", j-d.NumInputs, ErrPoint)
		}
	}
	// The points bellperson keeps: variables whose A (B) is not zero.
	aScalars, err := dense(at, d.InfinityA, "A")
	if err != nil {
		return nil, err
	}
	at = nil
	bScalars, err := dense(bt, d.InfinityB, "B")
	if err != nil {
		return nil, err
	}
	bt = nil

	p.VK.IC = g1FixedBase(&tw.g1, ext[:d.NumInputs])
	p.L = g1FixedBase(&tw.g1, ext[d.NumInputs:])
	ext = nil
	p.A = g1FixedBase(&tw.g1, aScalars)
	aScalars = nil
	p.BG1 = g1FixedBase(&tw.g1, bScalars)
	p.BG2 = g2FixedBase(&tw.g2, bScalars)

	g1s := g1FixedBase(&tw.g1, []fr.Element{tw.alpha, tw.beta, tw.delta})
	g2s := g2FixedBase(&tw.g2, []fr.Element{tw.beta, tw.gamma, tw.delta})
	p.VK.AlphaG1, p.VK.BetaG1, p.VK.DeltaG1 = g1s[0], g1s[1], g1s[2]
	p.VK.BetaG2, p.VK.GammaG2, p.VK.DeltaG2 = g2s[0], g2s[1], g2s[2]
	for _, q := range []struct {
		name string
		pts  []bls.G1Affine
	}{{"h", p.H}, {"IC", p.VK.IC}} {
		for i := range q.pts {
			if q.pts[i].IsInfinity() {
				return nil, fmt.Errorf("generating parameters: %s point %d at infinity (a zero toxic-waste product; draw again): %w", q.name, i, ErrPoint)
			}
		}
	}
	return p, nil
}

// powersOf returns x^0 .. x^(n-1), computed in parallel chunks.
func powersOf(x *fr.Element, n int) []fr.Element {
	out := make([]fr.Element, n)
	parallelFor(n, 1<<16, func(lo, hi int) {
		out[lo].Exp(*x, big.NewInt(int64(lo)))
		for i := lo + 1; i < hi; i++ {
			out[i].Mul(&out[i-1], x)
		}
	})
	return out
}

// evaluate adds, into dst (one entry per variable), every entry of m
// times the Lagrange coefficient of its row: the variables' polynomials
// of m evaluated at tau.
func evaluate(s *r1cs.Shape, m *r1cs.Matrix, lagrange, dst []fr.Element) {
	for r := 0; r < m.Rows(); r++ {
		for k := m.RowStart[r]; k < m.RowStart[r+1]; k++ {
			var e fr.Element
			e.Mul(&s.Coeffs[m.Coeffs[k]], &lagrange[r])
			col := s.Column(m.Vars[k])
			dst[col].Add(&dst[col], &e)
		}
	}
}

// dense returns the evaluations of the variables not at infinity, in
// order. A variable of the matrix whose evaluation is zero would need a
// point at infinity bellperson cannot store (a chance of about 2^-255 per
// variable for random tau): an error.
func dense(evals []fr.Element, infinity []bool, matrix string) ([]fr.Element, error) {
	out := make([]fr.Element, 0, len(evals))
	for j := range evals {
		if infinity[j] {
			continue
		}
		if evals[j].IsZero() {
			return nil, fmt.Errorf("generating parameters: variable %d of %s evaluates to zero at tau (draw again): %w", j, matrix, ErrPoint)
		}
		out = append(out, evals[j])
	}
	return out, nil
}
