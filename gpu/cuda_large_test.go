//go:build cuda

package gpu

import (
	"context"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr/fft"
)

// Above 2^22 the transforms on the coset still equal gnark's: ICICLE
// v3.2.2's CPU backend got every element of a 2^23 forward coset NTT
// wrong (maxDeviceForwardCoset), so the coset is applied on the host
// there. About 30 s on ICICLE's CPU backend.
func TestCUDACosetNTTAbove2To22MatchesCPU(t *testing.T) {
	ctx := context.Background()
	gpu := openTest(t)
	cpu := &CPU{}
	const n = 2 * maxDeviceForwardCoset
	d := fft.NewDomain(n)
	for _, tc := range []struct {
		name string
		f    func(Backend, []fr.Element) error
	}{
		{"ntt coset", func(b Backend, v []fr.Element) error { return b.NTT(ctx, d, v, true) }},
		{"intt coset", func(b Backend, v []fr.Element) error { return b.INTT(ctx, d, v, true) }},
	} {
		a := make([]fr.Element, n)
		for i := range a {
			a[i].SetUint64(uint64(i*7 + 1))
		}
		b := append([]fr.Element(nil), a...)
		if err := tc.f(cpu, a); err != nil {
			t.Fatal(err)
		}
		if err := tc.f(gpu, b); err != nil {
			t.Fatal(err)
		}
		for i := range a {
			if !a[i].Equal(&b[i]) {
				t.Fatalf("%s of %d elements differs from the CPU's at %d", tc.name, n, i)
			}
		}
	}
}
