package gadgets

import (
	"testing"

	"github.com/c2flow/c2flow/filecoin/r1cs"
)

// benchCompressions synthesizes n SHA-256 compressions of allocated input.
func benchCompressions(b *testing.B, mk func() r1cs.System) {
	rng := newRand()
	vals := make([]bool, 512)
	for i := range vals {
		vals[i] = rng.Uint32()%2 != 0
	}
	b.ReportAllocs()
	for b.Loop() {
		cs := mk()
		in := allocBits(cs, "in", vals)
		for k := 0; k < 4; k++ {
			if _, err := SHA256Compression(cs, in, SHA256IV()); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(4*25840*b.N)/b.Elapsed().Seconds(), "constraints/s")
}

func BenchmarkSHA256WitnessABC(b *testing.B) {
	benchCompressions(b, func() r1cs.System {
		return r1cs.NewWitness(r1cs.WitnessOptions{ABC: true, AuxHint: 4*26000 + 512, ConstraintsHint: 4*25840 + 512})
	})
}

func BenchmarkSHA256WitnessOnly(b *testing.B) {
	benchCompressions(b, func() r1cs.System { return r1cs.NewWitness(r1cs.WitnessOptions{AuxHint: 4*26000 + 512}) })
}

func BenchmarkSHA256Shape(b *testing.B) {
	benchCompressions(b, func() r1cs.System { return r1cs.NewShape() })
}

func BenchmarkSHA256Counter(b *testing.B) {
	benchCompressions(b, func() r1cs.System { return r1cs.NewCounter() })
}

func BenchmarkPoseidon11Witness(b *testing.B) {
	c, err := PoseidonConstantsFor(11)
	if err != nil {
		b.Fatal(err)
	}
	rng := newRand()
	w := r1cs.NewWitness(r1cs.WitnessOptions{ABC: true})
	nums := make([]AllocatedNum, 11)
	for i := range nums {
		nums[i] = AllocNum(w, randFr(rng))
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := PoseidonHash(w, nums, c); err != nil {
			b.Fatal(err)
		}
	}
}
