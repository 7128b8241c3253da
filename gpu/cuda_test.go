//go:build cuda

package gpu

import (
	"context"
	"math/big"
	"os"
	"testing"

	curve "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr/fft"
	icicle_runtime "github.com/ingonyama-zk/icicle-gnark/v3/wrappers/golang/runtime"
)

// openTest opens device 0 of the type $C2FLOW_ICICLE_DEVICE names (make
// test-icicle: CPU, icicle's CPU backend; unset: CUDA, a GPU).
func openTest(t *testing.T, opts ...CUDAOption) *CUDA {
	t.Helper()
	d, err := NewCUDA(0, append(opts, WithDeviceType(os.Getenv(DeviceTypeEnv)))...)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("icicle device %s", d.Name())
	return d
}

// Every icicle call runs on the OS thread RunOnDevice pinned to this
// device: the thread's active device is the one opened.
func TestCUDAPinsItsDevice(t *testing.T) {
	gpu := openTest(t)
	err := gpu.run(func() error {
		d, e := icicle_runtime.GetActiveDevice()
		if err := ierr("active device", e); err != nil {
			return err
		}
		if d.GetDeviceType() != gpu.typ || d.Id != int32(gpu.id) {
			t.Errorf("active device %s/%d, opened %s", d.GetDeviceType(), d.Id, gpu.Name())
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// The CUDA backend agrees with the CPU backend on MSMs and every NTT the
// device phase uses.
func TestCUDAMatchesCPU(t *testing.T) {
	gpu := openTest(t)
	cpu := &CPU{}
	ctx := context.Background()
	const n = 1 << 12
	points, scalars := randomMSM(n)
	want, _ := cpu.MSMG1(ctx, points, scalars)
	for rep := 0; rep < 2; rep++ { // the second call uses the resident bases
		got, err := gpu.MSMG1(ctx, points, scalars)
		if err != nil {
			t.Fatal(err)
		}
		if !got.Equal(&want) {
			t.Fatalf("msm g1 differs (call %d)", rep)
		}
	}
	d := fft.NewDomain(n)
	for _, tc := range []struct {
		name  string
		coset bool
		f     func(Backend, []fr.Element) error
	}{
		{"intt", false, func(b Backend, v []fr.Element) error { return b.INTT(ctx, d, v, false) }},
		{"intt coset", true, func(b Backend, v []fr.Element) error { return b.INTT(ctx, d, v, true) }},
		{"ntt", false, func(b Backend, v []fr.Element) error { return b.NTT(ctx, d, v, false) }},
		{"ntt coset", true, func(b Backend, v []fr.Element) error { return b.NTT(ctx, d, v, true) }},
	} {
		a := make([]fr.Element, n)
		for i := range a {
			a[i].SetRandom()
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
				t.Fatalf("%s differs at %d", tc.name, i)
			}
		}
	}
}

// With a device memory limit that holds a few hundred points, the bases
// are streamed in chunks, and the MSM still agrees with the CPU's.
func TestCUDAStreamedMatchesCPU(t *testing.T) {
	const n = 1 << 12
	gpu := openTest(t, WithDeviceMemory(300*(g1AffineBytes+scalarBytes)))
	ctx := context.Background()
	points, scalars := randomMSM(n)
	want, _ := (&CPU{}).MSMG1(ctx, points, scalars)
	got, err := gpu.MSMG1(ctx, points, scalars)
	if err != nil {
		t.Fatal(err)
	}
	if !got.Equal(&want) {
		t.Fatal("streamed CUDA MSM differs from the CPU's")
	}
	if gpu.used != 0 || !gpu.streamed[basesKey{&points[0], n}] {
		t.Fatalf("bases not streamed: %d bytes resident", gpu.used)
	}
}

// randomMSM returns n random G1 points and scalars.
func randomMSM(n int) ([]curve.G1Affine, []fr.Element) {
	_, _, g1, _ := curve.Generators()
	points := make([]curve.G1Affine, n)
	scalars := make([]fr.Element, n)
	for i := range points {
		var s fr.Element
		s.SetRandom()
		points[i].ScalarMultiplication(&g1, s.BigInt(new(big.Int)))
		scalars[i].SetRandom()
	}
	return points, scalars
}
