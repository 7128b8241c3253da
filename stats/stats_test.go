package stats

import (
	"math"
	"math/rand/v2"
	"testing"
)

func near(t *testing.T, name string, got, want, tol float64) {
	t.Helper()
	if math.Abs(got-want) > tol {
		t.Errorf("%s = %v, want %v", name, got, want)
	}
}

// The seeds' awk: sort -n; median=a[int(n/2)], p90=a[int(n*0.9)], p99=a[int(n*0.99)], max=a[n-1].
func TestSummaryMatchesTheSeedsAwk(t *testing.T) {
	s := Summarize([]float64{10, 3, 7, 1, 9, 2, 8, 4, 6, 5})
	if s.Count != 10 || s.Median != 6 || s.P90 != 10 || s.P99 != 10 || s.Max != 10 || s.Min != 1 {
		t.Fatalf("%+v", s)
	}
	near(t, "mean", s.Mean, 5.5, 1e-12)
	near(t, "stddev", s.Stddev, 3.0276503540974917, 1e-12)
	// Exact binomial ranks for n=10: (x(2), x(9)), coverage 97.9%.
	if s.MedianLo != 2 || s.MedianHi != 9 {
		t.Fatalf("median CI [%v, %v], want [2, 9]", s.MedianLo, s.MedianHi)
	}
	// n=150 (the seeds' baseline): median a[75], p90 a[135], p99 a[148].
	v := make([]float64, 150)
	for i := range v {
		v[i] = float64(149 - i)
	}
	s = Summarize(v)
	if s.Median != 75 || s.P90 != 135 || s.P99 != 148 || s.Max != 149 {
		t.Fatalf("n=150: %+v", s)
	}
	if s.MedianLo >= s.Median || s.MedianHi <= s.Median {
		t.Fatalf("n=150 median CI [%v, %v]", s.MedianLo, s.MedianHi)
	}
}

func TestMannWhitneyKnownValues(t *testing.T) {
	// scipy.stats.mannwhitneyu([1,2,3],[4,5,6], method="asymptotic") -> U=0, p=0.0809
	u, p := MannWhitney([]float64{1, 2, 3}, []float64{4, 5, 6})
	near(t, "U", u, 0, 0)
	near(t, "p", p, 0.0809, 0.0005)
	// With ties, by hand: ranks 1, 3, 3, 5.5 -> R1 = 12.5, U = 2.5; mu = 8;
	// sigma^2 = 16/12 * (9 - (24+6)/56) = 11.286; z = (5.5-0.5)/3.3594 = 1.4884;
	// p = erfc(z/sqrt2) = 0.1367.
	u, p = MannWhitney([]float64{1, 2, 2, 3}, []float64{2, 3, 4, 5})
	near(t, "U ties", u, 2.5, 1e-12)
	near(t, "p ties", p, 0.1367, 0.0005)
	near(t, "cliff", CliffsDelta([]float64{1, 2, 3}, []float64{4, 5, 6}), 1, 1e-12)
}

func sample(rng *rand.Rand, n int, median float64) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = median * math.Exp(0.08*rng.NormFloat64()) // ~8% spread, like GPU_END gpu_ms
	}
	return v
}

// The seeds' situation: 150 vs 200 partitions. A planted 5% shift is a
// regression; two draws of the same distribution are within noise.
func TestVerdictsOnPlantedShiftAndNoise(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	base := sample(rng, 150, 1000)
	shifted := sample(rng, 200, 1050)
	same := sample(rng, 200, 1000)
	if c := Compare("gpu_ms", [][]float64{base}, [][]float64{shifted}); c.Verdict != Regression {
		t.Fatalf("5%% shift: %s (p=%.3g, median diff %+v)", c.Verdict, c.P, c.Median)
	}
	if c := Compare("gpu_ms", [][]float64{shifted}, [][]float64{base}); c.Verdict != Improvement {
		t.Fatalf("-5%% shift: %s", c.Verdict)
	}
	if c := Compare("gpu_ms", [][]float64{base}, [][]float64{same}); c.Verdict != Noise {
		t.Fatalf("noise: %s (p=%.3g, median diff %+v)", c.Verdict, c.P, c.Median)
	}
}

// Replicates: a shift that is as large as the difference between runs of
// the same code is within noise once between-run variance is counted.
func TestReplicatesWidenTheInterval(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	// Each run has its own offset (thermal state, neighbours): +-4%.
	run := func(offset float64) []float64 { return sample(rng, 150, 1000*offset) }
	base := [][]float64{run(0.96), run(1.04), run(1.0)}
	new := [][]float64{run(1.03), run(0.99), run(1.07)}
	single := Compare("gpu_ms", base[:1], new[:1])
	repl := Compare("gpu_ms", base, new)
	wSingle := single.Median.Hi - single.Median.Lo
	wRepl := repl.Median.Hi - repl.Median.Lo
	if wRepl <= wSingle {
		t.Fatalf("replicates did not widen the CI: %v vs %v", wRepl, wSingle)
	}
	if repl.Verdict != Noise {
		t.Fatalf("between-run noise called a %s", repl.Verdict)
	}
}
