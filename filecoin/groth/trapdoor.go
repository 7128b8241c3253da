package groth

import (
	"fmt"
	"io"
	"math/big"

	bls "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
)

// TrapdoorKey is a verifying key whose trapdoor (alpha, beta, gamma,
// delta and the IC discrete logarithms) is known, for TESTS ONLY: with it,
// a valid-looking proof of any statement can be simulated, which lets a
// test exercise verification end to end (public inputs, proof bytes, the
// pairing check) without a circuit's setup. With IC_i = k_i/gamma·G1, a
// proof is simulated as A = a·G1, B = b·G2 and
// C = (ab - alpha·beta - sum_i x_i k_i)/delta·G1 (x_0 = 1).
type TrapdoorKey struct {
	VK                        *VerifyingKey
	alpha, beta, gamma, delta fr.Element
	ic                        []fr.Element
	rand                      io.Reader
}

// NewTrapdoorKey returns a trapdoor key with numInputs public inputs (ONE
// included) drawn from rand.
func NewTrapdoorKey(numInputs int, rand io.Reader) (*TrapdoorKey, error) {
	if numInputs < 1 {
		return nil, fmt.Errorf("trapdoor key: %d inputs: %w", numInputs, ErrFormat)
	}
	k := &TrapdoorKey{VK: new(VerifyingKey), ic: make([]fr.Element, numInputs), rand: rand}
	for _, e := range append([]*fr.Element{&k.alpha, &k.beta, &k.gamma, &k.delta}, ptrs(k.ic)...) {
		if err := k.scalar(e); err != nil {
			return nil, err
		}
	}
	k.VK.AlphaG1, k.VK.BetaG1, k.VK.DeltaG1 = g1Base(&k.alpha), g1Base(&k.beta), g1Base(&k.delta)
	k.VK.BetaG2, k.VK.GammaG2, k.VK.DeltaG2 = g2Base(&k.beta), g2Base(&k.gamma), g2Base(&k.delta)
	var gammaInv fr.Element
	gammaInv.Inverse(&k.gamma)
	k.VK.IC = make([]bls.G1Affine, numInputs)
	for i := range k.ic {
		// IC_i = k_i/gamma·G1 keeps the equation's gamma explicit.
		var e fr.Element
		e.Mul(&k.ic[i], &gammaInv)
		k.VK.IC[i] = g1Base(&e)
	}
	return k, nil
}

func ptrs(v []fr.Element) []*fr.Element {
	out := make([]*fr.Element, len(v))
	for i := range v {
		out[i] = &v[i]
	}
	return out
}

// scalar draws a nonzero scalar from k.rand.
func (k *TrapdoorKey) scalar(e *fr.Element) error {
	var b [48]byte
	for e.IsZero() {
		if _, err := io.ReadFull(k.rand, b[:]); err != nil {
			return fmt.Errorf("trapdoor key: randomness: %w", err)
		}
		e.SetBigInt(new(big.Int).SetBytes(b[:]))
	}
	return nil
}

// Simulate returns a proof that verifies under k.VK for the public inputs
// (without ONE).
func (k *TrapdoorKey) Simulate(public []fr.Element) (Proof, error) {
	if len(public)+1 != len(k.ic) {
		return Proof{}, fmt.Errorf("trapdoor key: %d public inputs, key takes %d: %w", len(public), len(k.ic)-1, ErrMismatch)
	}
	var a, b fr.Element
	if err := k.scalar(&a); err != nil {
		return Proof{}, err
	}
	if err := k.scalar(&b); err != nil {
		return Proof{}, err
	}
	// sum = k_0 + sum x_i k_{i+1}; the IC points are k_i/gamma, so the
	// verifier's e(acc, gamma) contributes sum.
	sum := k.ic[0]
	for i := range public {
		var t fr.Element
		t.Mul(&public[i], &k.ic[i+1])
		sum.Add(&sum, &t)
	}
	var c, ab, albe, deltaInv fr.Element
	ab.Mul(&a, &b)
	albe.Mul(&k.alpha, &k.beta)
	c.Sub(&ab, &albe).Sub(&c, &sum)
	deltaInv.Inverse(&k.delta)
	c.Mul(&c, &deltaInv)
	return Proof{A: g1Base(&a), B: g2Base(&b), C: g1Base(&c)}, nil
}

func g1Base(e *fr.Element) bls.G1Affine {
	var p bls.G1Affine
	p.ScalarMultiplicationBase(e.BigInt(new(big.Int)))
	return p
}

func g2Base(e *fr.Element) bls.G2Affine {
	var p bls.G2Affine
	p.ScalarMultiplicationBase(e.BigInt(new(big.Int)))
	return p
}
