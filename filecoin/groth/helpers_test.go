package groth

import (
	"crypto/rand"
	"math/big"
	"testing"

	bls "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
)

func randScalar(t testing.TB) fr.Element {
	t.Helper()
	var e fr.Element
	for e.IsZero() {
		if _, err := e.SetRandom(); err != nil {
			t.Fatal(err)
		}
	}
	return e
}

func scalarBig(e *fr.Element) *big.Int {
	var b big.Int
	return e.BigInt(&b)
}

func g1Mul(e fr.Element) bls.G1Affine {
	var p bls.G1Affine
	p.ScalarMultiplicationBase(scalarBig(&e))
	return p
}

func g2Mul(e fr.Element) bls.G2Affine {
	var p bls.G2Affine
	p.ScalarMultiplicationBase(scalarBig(&e))
	return p
}

func randBytes(t testing.TB, n int) []byte {
	t.Helper()
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return b
}
