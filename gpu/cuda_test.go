//go:build cuda

package gpu

import (
	"context"
	"errors"
	"math/big"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

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

// The device quotient agrees with HostQuotient on the CPU backend for
// rows short of the domain (the zero padding), staged in chunks that do
// not divide it; a failed evaluation is an InputError; a limit that does
// not hold two vectors takes the host path and agrees too.
func TestCUDAQuotientMatchesHost(t *testing.T) {
	ctx := context.Background()
	sizes := []int{10, 12}
	gpu := openTest(t)
	gpu.stage = 300
	small := openTest(t, WithDeviceMemory(2*(1<<sizes[0])*scalarBytes-1))
	for _, logN := range sizes {
		n := 1 << logN
		d := fft.NewDomain(uint64(n))
		rows := n*3/4 + 5
		fill, largest := randomABC(rows)
		want, err := HostQuotient(ctx, &CPU{}, d, fill)
		if err != nil {
			t.Fatal(err)
		}
		check := func(path string, got []fr.Element) {
			t.Helper()
			if len(got) != n {
				t.Fatalf("2^%d, %s: %d elements, want %d", logN, path, len(got), n)
			}
			for i := range want {
				if !got[i].Equal(&want[i]) {
					t.Fatalf("2^%d, %s: H differs from HostQuotient's at %d", logN, path, i)
				}
			}
		}

		*largest = 0
		got, err := Quotient(ctx, gpu, d, fill)
		if err != nil {
			t.Fatal(err)
		}
		check("device", got)
		if gpu.twiddles != int64(n)*scalarBytes || gpu.taken() != gpu.used+gpu.twiddles {
			t.Fatalf("2^%d: twiddles counted %d bytes, %d taken", logN, gpu.twiddles, gpu.taken())
		}
		if *largest > gpu.stage || !gpu.quotients[quotientPath{n, true}] || gpu.working != 0 {
			t.Fatalf("2^%d: device path: largest chunk %d rows (stage %d), logged %v, %d bytes still working",
				logN, *largest, gpu.stage, gpu.quotients, gpu.working)
		}

		bad := errors.New("no such row")
		_, err = gpu.Quotient(ctx, d, func(which, lo int, dst []fr.Element) error {
			if which == 1 {
				return bad
			}
			return fill(which, lo, dst)
		})
		var in *InputError
		if !errors.As(err, &in) || !errors.Is(err, bad) || gpu.working != 0 {
			t.Fatalf("2^%d: failed fill: %v (%T), %d bytes still working", logN, err, err, gpu.working)
		}

		got, err = small.Quotient(ctx, d, fill)
		if err != nil {
			t.Fatal(err)
		}
		check("host path", got)
		if !small.quotients[quotientPath{n, false}] || small.quotients[quotientPath{n, true}] {
			t.Fatalf("2^%d: a limit short of two vectors: paths logged %v", logN, small.quotients)
		}
	}
}

// randomABC returns a Fill over random a, b, c of rows rows, zeros past
// them, and where it records the most rows one call asked for.
func randomABC(rows int) (Fill, *int) {
	var abc [3][]fr.Element
	for i := range abc {
		abc[i] = make([]fr.Element, rows)
		for j := range abc[i] {
			abc[i][j].SetRandom()
		}
	}
	largest := new(int)
	return func(which, lo int, dst []fr.Element) error {
		*largest = max(*largest, len(dst))
		clear(dst)
		if lo < rows {
			copy(dst, abc[which][lo:])
		}
		return nil
	}, largest
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

// Allocations the device refuses are never a crash and never a fault,
// each site alone and all at once: bases refused are streamed, an NTT's
// vector refused is transformed on the host, a quotient's vectors refused
// take the host's path, and every result equals the CPU backend's. A
// MemoryError quarantines nothing and names what the device held.
func TestCUDAAllocationRefusedAtEachSite(t *testing.T) {
	ctx := context.Background()
	cpu := &CPU{}
	const n = 1 << 10
	points, scalars := randomMSM(n)
	wantMSM, _ := cpu.MSMG1(ctx, points, scalars)
	d := fft.NewDomain(n)
	fill, _ := randomABC(n - 3)
	wantH, err := HostQuotient(ctx, cpu, d, fill)
	if err != nil {
		t.Fatal(err)
	}
	for _, site := range []string{"msm bases", "intt vector", "ntt vector", "quotient vector", "every"} {
		t.Run(site, func(t *testing.T) {
			gpu := openTest(t)
			var refused []string
			gpu.refuseAlloc = func(what string) bool {
				if site == "every" || what == site {
					refused = append(refused, what)
					return true
				}
				return false
			}
			got, err := gpu.MSMG1(ctx, points, scalars)
			if err != nil || !got.Equal(&wantMSM) {
				t.Fatalf("msm: %v, equal %v", err, got.Equal(&wantMSM))
			}
			if refusedBases := gpu.refused[basesKey{&points[0], n}]; refusedBases != (site == "msm bases" || site == "every") || (refusedBases && gpu.used != 0) {
				t.Fatalf("bases refused %v, %d bytes resident", refusedBases, gpu.used)
			}
			for _, inverse := range []bool{true, false} {
				a := make([]fr.Element, n)
				for i := range a {
					a[i].SetRandom()
				}
				b := append([]fr.Element(nil), a...)
				f, g := cpu.NTT, gpu.NTT
				if inverse {
					f, g = cpu.INTT, gpu.INTT
				}
				if err := f(ctx, d, a, true); err != nil {
					t.Fatal(err)
				}
				if err := g(ctx, d, b, true); err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(a, b) {
					t.Fatalf("transform (inverse %v) differs from the CPU's", inverse)
				}
			}
			h, err := gpu.Quotient(ctx, d, fill)
			if err != nil || !slices.Equal(h, wantH) || gpu.working != 0 {
				t.Fatalf("quotient: %v, equal %v, %d bytes still working", err, slices.Equal(h, wantH), gpu.working)
			}
			if len(refused) == 0 {
				t.Fatalf("no %s allocation was asked", site)
			}
			// Through the slots, as the prover holds a device: a MemoryError
			// from an operation quarantines nothing.
			slots := NewSlots(gpu)
			if _, err := slots.Run(ctx, Order{}, func(Held) error {
				return Faulted(gpu, gpu.memoryError(&MemoryError{What: site, Err: errors.New("refused")}))
			}); err == nil {
				t.Fatal("the MemoryError was lost")
			}
			if q := slots.Quarantined(); len(q) != 0 {
				t.Fatalf("quarantined: %v", q)
			}
		})
	}

	gpu := openTest(t)
	mem := gpu.memoryError(&MemoryError{What: "msm", Err: errors.New("icicle: EIcicleError.OutOfMemory")})
	var f *Fault
	if errors.As(Faulted(gpu, mem), &f) {
		t.Fatal("a device out of memory is taken for a faulty one")
	}
	if !strings.Contains(mem.Error(), gpu.Name()) || !strings.Contains(mem.Error(), "limit") {
		t.Fatalf("the error names neither the device nor what it held: %v", mem)
	}
}

// Resident base sets are evicted least recently used when another set
// needs the room: with room for one set, a second circuit's bases take
// the first's place (not streamed point by point), and the first comes
// back when used again; every MSM agrees with the CPU's.
func TestCUDAResidentBasesEvicted(t *testing.T) {
	ctx := context.Background()
	const n = 1 << 10
	per := int64(n) * (g1AffineBytes + scalarBytes)
	gpu := openTest(t, WithDeviceMemory(per+per/2))
	gpu.evictIdle = time.Nanosecond // a set unused since the last call counts as idle
	cpu := &CPU{}
	p1, s1 := randomMSM(n)
	p2, s2 := randomMSM(n)
	for i, call := range []struct {
		points  []curve.G1Affine
		scalars []fr.Element
	}{{p1, s1}, {p2, s2}, {p1, s1}} {
		want, _ := cpu.MSMG1(ctx, call.points, call.scalars)
		got, err := gpu.MSMG1(ctx, call.points, call.scalars)
		if err != nil {
			t.Fatal(err)
		}
		if !got.Equal(&want) {
			t.Fatalf("call %d differs from the CPU's", i)
		}
		key := basesKey{&call.points[0], n}
		if _, ok := gpu.bases[key]; !ok || len(gpu.bases) != 1 || gpu.used != int64(n)*g1AffineBytes {
			t.Fatalf("call %d: %d sets resident (this one: %v), %d bytes", i, len(gpu.bases), ok, gpu.used)
		}
		// c2flow fleet shows the accounting the host publishes.
		m := NewSlots(gpu).Memory()[gpu.Name()]
		if m.ResidentSets != 1 || m.Resident != gpu.used || m.Limit != per+per/2 {
			t.Fatalf("call %d: accounting %+v", i, m)
		}
	}
}

// A streamed MSM whose chunk would fall below the floor evicts the
// resident sets to make the room, rather than crawl a few points at a
// time; its result agrees with the CPU's.
func TestCUDAStreamedChunkFloorEvicts(t *testing.T) {
	ctx := context.Background()
	const n = 1 << 10
	per := int64(n) * (g1AffineBytes + scalarBytes)
	gpu := openTest(t, WithDeviceMemory(per+per/2))
	gpu.minChunk = n
	cpu := &CPU{}
	small, ss := randomMSM(n)
	if _, err := gpu.MSMG1(ctx, small, ss); err != nil {
		t.Fatal(err)
	}
	if len(gpu.bases) != 1 || gpu.chunkPoints() >= n {
		t.Fatalf("%d sets resident, room for %d points", len(gpu.bases), gpu.chunkPoints())
	}
	large, ls := randomMSM(2 * n) // never fits: streamed
	want, _ := cpu.MSMG1(ctx, large, ls)
	got, err := gpu.MSMG1(ctx, large, ls)
	if err != nil {
		t.Fatal(err)
	}
	if !got.Equal(&want) {
		t.Fatal("the streamed MSM differs from the CPU's")
	}
	if len(gpu.bases) != 0 || gpu.used != 0 || gpu.chunkPoints() < n {
		t.Fatalf("the floor did not evict: %d sets, %d bytes resident, room for %d points", len(gpu.bases), gpu.used, gpu.chunkPoints())
	}
}

// The sets of the circuit being proved do not evict each other: with room
// for one, the second set used right after the first is streamed, and the
// first stays resident.
func TestCUDARecentSetsNotEvicted(t *testing.T) {
	ctx := context.Background()
	const n = 1 << 10
	per := int64(n) * (g1AffineBytes + scalarBytes)
	gpu := openTest(t, WithDeviceMemory(per+per/2))
	gpu.minChunk = 1
	p1, s1 := randomMSM(n)
	p2, s2 := randomMSM(n)
	for _, c := range []struct {
		points  []curve.G1Affine
		scalars []fr.Element
	}{{p1, s1}, {p2, s2}} {
		want, _ := (&CPU{}).MSMG1(ctx, c.points, c.scalars)
		got, err := gpu.MSMG1(ctx, c.points, c.scalars)
		if err != nil || !got.Equal(&want) {
			t.Fatalf("msm: %v, equal %v", err, got.Equal(&want))
		}
	}
	if _, ok := gpu.bases[basesKey{&p1[0], n}]; !ok || len(gpu.bases) != 1 || !gpu.streamed[basesKey{&p2[0], n}] {
		t.Fatalf("the first set evicted for the second (%d resident), or the second not streamed", len(gpu.bases))
	}
}
