package prover_test

import (
	"context"
	"errors"
	"runtime"
	"testing"

	curve "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	groth16bls "github.com/consensys/gnark/backend/groth16/bls12-381"

	"github.com/c2flow/c2flow/gpu"
	"github.com/c2flow/c2flow/prover"
	"github.com/c2flow/c2flow/scheme/testscheme"
	"github.com/c2flow/c2flow/scheme/testscheme/params"
	"github.com/c2flow/c2flow/scheme/testscheme/params/paramstest"
	"github.com/c2flow/c2flow/scheme/testscheme/porep"
	"github.com/c2flow/c2flow/scheme/testscheme/porep/poreptest"
	"github.com/c2flow/c2flow/scheme/testscheme/schemetest"
)

// testProver is the split prover over a test-scheme profile's keys, with
// the test scheme's synthesis beside it.
type testProver struct {
	*prover.Prover
	keys *params.Keys
}

func (p testProver) Synthesize(ctx context.Context, c1 *porep.C1, k int) (*prover.Solution, error) {
	return testscheme.Synthesize(ctx, p.keys, c1, k)
}

func newProver(t testing.TB, profile string) testProver {
	t.Helper()
	keys := paramstest.Keys(t, profile)
	p, err := testscheme.NewProver(keys)
	if err != nil {
		t.Fatal(err)
	}
	return testProver{p, keys}
}

func cpuSlots(t testing.TB, n int) *gpu.Slots {
	s, err := gpu.CPUSlots(n, 0)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestSplitProofsVerify(t *testing.T) {
	for _, tc := range []struct {
		profile string
		earlyG2 bool
	}{{"2KiB", false}, {"2KiB", true}, {"32KiB", false}, {"32KiB", true}} {
		p := newProver(t, tc.profile)
		p.EarlyG2 = tc.earlyG2
		c1 := poreptest.Sector(t, tc.profile, 11).C1()
		c2, times, err := schemetest.ProveSector(context.Background(), p.Prover, p.keys, cpuSlots(t, 1), c1, nil)
		if err != nil {
			t.Fatalf("%s early_g2=%v: %v", tc.profile, tc.earlyG2, err)
		}
		if len(times) != c1.Profile.Partitions {
			t.Fatalf("got %d partition timings", len(times))
		}
		b, err := c2.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		back, err := testscheme.UnmarshalC2(b)
		if err != nil {
			t.Fatal(err)
		}
		if err := testscheme.VerifyC2(p.Keys.VK, c1.Statement(), back); err != nil {
			t.Fatalf("decoded C2 rejected: %v", err)
		}
		other := poreptest.Sector(t, tc.profile, 12).C1()
		if testscheme.VerifyC2(p.Keys.VK, other.Statement(), back) == nil {
			t.Fatal("C2 of sector 11 verified for sector 12")
		}
	}
}

func prove(t *testing.T, p testProver, id uint64, tamper func(*prover.Partial)) error {
	t.Helper()
	c1 := poreptest.Sector(t, p.keys.Profile.Name, id).C1()
	ctx := context.Background()
	sol, err := p.Synthesize(ctx, c1, 0)
	if err != nil {
		t.Fatal(err)
	}
	pt, err := p.Start(ctx, cpuSlots(t, 1), sol)
	if err != nil {
		t.Fatal(err)
	}
	// The device's own operations are part of the slot's hold, the
	// host's work inside it the rest.
	if pt.BusyTime <= 0 || pt.BusyTime > pt.DeviceTime {
		t.Fatalf("device busy %v of a slot held %v", pt.BusyTime, pt.DeviceTime)
	}
	if tamper != nil {
		tamper(pt)
	}
	proof, _, err := p.Finalize(ctx, pt)
	if err != nil {
		t.Fatal(err)
	}
	return testscheme.Verify(p.Keys.VK, c1.Statement(), 0, proof)
}

func TestTamperedPartialFailsVerification(t *testing.T) {
	p := newProver(t, "2KiB")
	if err := prove(t, p, 1, nil); err != nil {
		t.Fatalf("untampered: %v", err)
	}
	for name, f := range map[string]func(*prover.Partial){
		"ar":  func(pt *prover.Partial) { prover.TamperPartial(pt, "ar") },
		"h":   func(pt *prover.Partial) { prover.TamperPartial(pt, "h") },
		"krs": func(pt *prover.Partial) { prover.TamperPartial(pt, "krs") },
		"b":   func(pt *prover.Partial) { prover.TamperPartial(pt, "wireB") },
	} {
		if prove(t, p, 1, f) == nil {
			t.Errorf("partial with tampered %s verified", name)
		}
	}
}

func TestWrongProvingKeyFailsVerification(t *testing.T) {
	good := newProver(t, "2KiB")
	pk := *good.Keys.PK // shallow copy: replace one base of K
	pk.G1.K = append([]curve.G1Affine(nil), pk.G1.K...)
	pk.G1.K[len(pk.G1.K)/2].Double(&pk.G1.K[len(pk.G1.K)/2])
	keys := *good.Keys
	keys.PK = &pk
	bad, err := prover.New(&keys, nil)
	if err != nil {
		t.Fatal(err)
	}
	if prove(t, testProver{bad, good.keys}, 2, nil) == nil {
		t.Fatal("proof from a wrong proving key verified")
	}
}

func TestSolutionBytesMatchesHeap(t *testing.T) {
	p := newProver(t, "32KiB")
	c1 := poreptest.Sector(t, "32KiB", 3).C1()
	// gc runs twice: sync.Pool's victim caches (gnark's solver keeps
	// buffers there) survive one collection.
	gc := func(m *runtime.MemStats) {
		runtime.GC()
		runtime.GC()
		runtime.ReadMemStats(m)
	}
	if _, err := p.Synthesize(context.Background(), c1, 0); err != nil { // pools and caches warmed
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	gc(&before)
	sol, err := p.Synthesize(context.Background(), c1, 0)
	if err != nil {
		t.Fatal(err)
	}
	gc(&after)
	grew := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	ratio := float64(sol.Bytes()) / float64(grew)
	t.Logf("Solution.Bytes()=%d heap growth=%d ratio=%.3f", sol.Bytes(), grew, ratio)
	if ratio < 0.8 || ratio > 1.2 {
		t.Fatalf("Solution.Bytes()=%d, heap grew %d bytes: off by more than 20%%", sol.Bytes(), grew)
	}
	runtime.KeepAlive(sol)
}

func TestC2RejectsGarbage(t *testing.T) {
	for name, b := range map[string][]byte{
		"empty":     nil,
		"bad magic": []byte("C2FLOW\x00\x02\x04test\x00\x00"),
		"short":     append([]byte("C2FLOW\x00\x01\x04test\x00\x01"), make([]byte, 10)...),
		"not on curve": append([]byte("C2FLOW\x00\x01\x04test\x00\x01"), func() []byte {
			b := make([]byte, testscheme.ProofBytes)
			for i := range b {
				b[i] = 0x5a
			}
			return b
		}()...),
	} {
		if _, err := testscheme.UnmarshalC2(b); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	var _ *groth16bls.Proof
}

// failingDevice is a device whose MSMs fail, as a GPU with an ECC error would.
type failingDevice struct{ gpu.CPU }

func (f *failingDevice) Name() string { return "failing/0" }
func (f *failingDevice) MSMG1(context.Context, []curve.G1Affine, []fr.Element) (curve.G1Jac, error) {
	return curve.G1Jac{}, errors.New("device lost")
}

// A device that fails is quarantined; the partition, synthesized again,
// proves on a healthy device of the same pool.
func TestFailingDeviceIsQuarantined(t *testing.T) {
	p := newProver(t, "2KiB")
	slots := gpu.NewSlots(&failingDevice{}, &gpu.CPU{ID: 1})
	c1 := poreptest.Sector(t, "2KiB", 41).C1()
	ctx := context.Background()
	var proof *groth16bls.Proof
	for attempt := 0; attempt < 2 && proof == nil; attempt++ {
		sol, err := p.Synthesize(ctx, c1, 0)
		if err != nil {
			t.Fatal(err)
		}
		pt, err := p.Start(ctx, slots, sol)
		if err != nil {
			continue
		}
		if proof, _, err = p.Finalize(ctx, pt); err != nil {
			t.Fatal(err)
		}
	}
	if proof == nil {
		t.Fatal("no proof after the failing device was quarantined")
	}
	if err := testscheme.Verify(p.Keys.VK, c1.Statement(), 0, proof); err != nil {
		t.Fatal(err)
	}
	if q := slots.Quarantined(); len(q) != 1 || q["failing/0"] == "" || slots.Healthy() != 1 {
		t.Fatalf("quarantined %v, healthy %d", q, slots.Healthy())
	}
}

// MSMs run chunk by chunk, the next chunk's scalars expanded while the
// device runs the current one (double buffering), give proofs that
// verify, whether or not the chunk divides the wires, with the early G2
// MSM too; a device lane reserves the second buffer.
func TestChunkedMSMsVerify(t *testing.T) {
	p := newProver(t, "2KiB")
	whole := p.LaneBytes(false)
	for _, chunk := range []int{4096, 5000} {
		p.Chunk, p.EarlyG2 = chunk, false
		if got, want := p.LaneBytes(false)-whole, int64(2*chunk-p.Keys.Wires())*32; got != want {
			t.Errorf("chunk %d: a lane reserves %d bytes more than one whole chunk, want %d", chunk, got, want)
		}
		for _, early := range []bool{false, true} {
			p.EarlyG2 = early
			if err := prove(t, p, 3, nil); err != nil {
				t.Fatalf("chunk %d, early G2 %v: %v", chunk, early, err)
			}
		}
	}
}
