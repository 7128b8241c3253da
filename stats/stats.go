// Package stats is the measurement method of the seeds, built in: the
// distribution of a sample as their awk computed it (sort, index int(n*q)),
// with a confidence interval of the median, and the comparison of two runs
// (bootstrap CIs of the differences, the Mann-Whitney U test, effect size)
// that says whether a difference is a regression or run-to-run noise.
package stats

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
)

// Summary is a sample's distribution.
type Summary struct {
	Count  int     `json:"count"`
	Mean   float64 `json:"mean"`
	Median float64 `json:"median"`
	P90    float64 `json:"p90"`
	P99    float64 `json:"p99"`
	Max    float64 `json:"max"`
	Min    float64 `json:"min"`
	Stddev float64 `json:"stddev"` // sample standard deviation (n-1)
	// MedianCI is a distribution-free 95% confidence interval of the
	// median from order statistics (exact binomial ranks); equal to the
	// sample's min and max when n < 6.
	MedianLo float64 `json:"median_ci_lo"`
	MedianHi float64 `json:"median_ci_hi"`
}

// Summarize computes the summary. Quantiles follow the seeds' awk: sort
// ascending, take a[int(n*q)] (0-based), so median = a[int(n/2)].
func Summarize(v []float64) Summary {
	n := len(v)
	if n == 0 {
		return Summary{}
	}
	a := sorted(v)
	var sum float64
	for _, x := range a {
		sum += x
	}
	mean := sum / float64(n)
	var ss float64
	for _, x := range a {
		ss += (x - mean) * (x - mean)
	}
	sd := 0.0
	if n > 1 {
		sd = math.Sqrt(ss / float64(n-1))
	}
	q := func(p float64) float64 { return a[min(n-1, int(float64(n)*p))] }
	lo, hi := medianCI(a)
	return Summary{Count: n, Mean: mean, Median: q(0.5), P90: q(0.9), P99: q(0.99), Max: a[n-1], Min: a[0], Stddev: sd, MedianLo: lo, MedianHi: hi}
}

func sorted(v []float64) []float64 {
	a := append([]float64(nil), v...)
	sort.Float64s(a)
	return a
}

// medianCI returns order statistics a[j], a[k] such that P(a[j] <= median
// <= a[k]) >= 0.95 under the binomial(n, 1/2) distribution of ranks.
func medianCI(a []float64) (float64, float64) {
	n := len(a)
	if n > 100 { // normal approximation of the binomial ranks
		j := int(math.Floor(float64(n)/2 - 1.96*math.Sqrt(float64(n))/2))
		return a[max(0, j-1)], a[min(n-1, n-j)]
	}
	// Largest j with P(B <= j-1) <= 0.025 where B ~ Bin(n, 1/2).
	cdf, p := 0.0, math.Pow(0.5, float64(n))
	j := 0
	coef := 1.0
	for i := 0; i <= n; i++ {
		if i > 0 {
			coef = coef * float64(n-i+1) / float64(i)
		}
		if cdf+coef*p > 0.025 {
			break
		}
		cdf += coef * p
		j = i + 1
	}
	if j == 0 {
		return a[0], a[n-1]
	}
	return a[j-1], a[n-j]
}

// String formats a summary like the seeds' awk line, plus the rest.
func (s Summary) String() string {
	return fmt.Sprintf("count=%d mean=%.1f median=%.1f p90=%.1f p99=%.1f max=%.1f stddev=%.1f median_ci95=[%.1f, %.1f]",
		s.Count, s.Mean, s.Median, s.P90, s.P99, s.Max, s.Stddev, s.MedianLo, s.MedianHi)
}

// MannWhitney returns the U statistic of a against b and the two-sided
// p-value of the normal approximation with tie correction.
func MannWhitney(a, b []float64) (u, p float64) {
	n1, n2 := len(a), len(b)
	if n1 == 0 || n2 == 0 {
		return 0, 1
	}
	type obs struct {
		v float64
		g int
	}
	all := make([]obs, 0, n1+n2)
	for _, x := range a {
		all = append(all, obs{x, 0})
	}
	for _, x := range b {
		all = append(all, obs{x, 1})
	}
	sort.Slice(all, func(i, j int) bool { return all[i].v < all[j].v })
	ranks := make([]float64, len(all))
	var tie float64
	for i := 0; i < len(all); {
		j := i
		for j < len(all) && all[j].v == all[i].v {
			j++
		}
		r := float64(i+j+1) / 2 // mean of ranks i+1..j
		for k := i; k < j; k++ {
			ranks[k] = r
		}
		t := float64(j - i)
		tie += t*t*t - t
		i = j
	}
	var r1 float64
	for i, o := range all {
		if o.g == 0 {
			r1 += ranks[i]
		}
	}
	u = r1 - float64(n1*(n1+1))/2
	N := float64(n1 + n2)
	mu := float64(n1*n2) / 2
	sigma := math.Sqrt(float64(n1*n2) / 12 * ((N + 1) - tie/(N*(N-1))))
	if sigma == 0 {
		return u, 1
	}
	z := (math.Abs(u-mu) - 0.5) / sigma // continuity correction
	if z < 0 {
		z = 0
	}
	return u, math.Erfc(z / math.Sqrt2)
}

// CliffsDelta is the effect size P(b > a) - P(b < a), in [-1, 1]: how often
// a sample of b exceeds one of a.
func CliffsDelta(a, b []float64) float64 {
	u, _ := MannWhitney(b, a) // U of b: pairs where b > a (+ half ties)
	return 2*u/float64(len(a)*len(b)) - 1
}

// DiffCI is a bootstrap estimate of new - base for a statistic.
type DiffCI struct {
	Diff float64 `json:"diff"`
	Lo   float64 `json:"lo"`
	Hi   float64 `json:"hi"`
	Rel  float64 `json:"rel"` // diff / base statistic
}

// BootstrapDiff returns the difference of stat(new) - stat(base) with a
// 95% percentile CI. Each side is a list of runs (replicates) of samples:
// every iteration resamples runs, then samples within each run (a
// hierarchical bootstrap), so between-run variance widens the interval as
// it should. The RNG is seeded: the same inputs give the same answer.
func BootstrapDiff(base, new [][]float64, stat func([]float64) float64, iters int) DiffCI {
	rng := rand.New(rand.NewPCG(1, 2))
	pool := func(runs [][]float64) []float64 {
		var out []float64
		for _, r := range runs {
			out = append(out, r...)
		}
		return out
	}
	resample := func(runs [][]float64, buf []float64) []float64 {
		buf = buf[:0]
		for range runs {
			r := runs[rng.IntN(len(runs))]
			for range r {
				buf = append(buf, r[rng.IntN(len(r))])
			}
		}
		return buf
	}
	b0, n0 := stat(pool(base)), stat(pool(new))
	diffs := make([]float64, iters)
	var bb, nb []float64
	for i := range diffs {
		bb = resample(base, bb)
		nb = resample(new, nb)
		diffs[i] = stat(nb) - stat(bb)
	}
	sort.Float64s(diffs)
	d := DiffCI{Diff: n0 - b0, Lo: diffs[int(0.025*float64(iters))], Hi: diffs[int(0.975*float64(iters))-1]}
	if b0 != 0 {
		d.Rel = d.Diff / b0
	}
	return d
}

// Mean and Median as statistics for BootstrapDiff.
func Mean(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	var s float64
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}

// Median is the seeds' median, a[int(n/2)] of the sorted sample.
func Median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	return sorted(v)[len(v)/2]
}

// Verdicts.
const (
	Regression  = "regression"
	Improvement = "improvement"
	Noise       = "within noise"
)

// Comparison is the verdict on one metric (lower is better: times).
type Comparison struct {
	Metric  string  `json:"metric"`
	Base    Summary `json:"base"`
	New     Summary `json:"new"`
	Mean    DiffCI  `json:"mean_diff"`
	Median  DiffCI  `json:"median_diff"`
	U       float64 `json:"mann_whitney_u"`
	P       float64 `json:"p_value"`
	Cliff   float64 `json:"cliffs_delta"`
	Verdict string  `json:"verdict"`
	Runs    [2]int  `json:"runs"` // replicates on each side
}

// Compare judges new against base. A difference is called only when the
// bootstrap CI of the median difference excludes zero and the rank test
// agrees (p < 0.05); otherwise it is within noise.
func Compare(metric string, base, new [][]float64) Comparison {
	pool := func(runs [][]float64) []float64 {
		var out []float64
		for _, r := range runs {
			out = append(out, r...)
		}
		return out
	}
	pb, pn := pool(base), pool(new)
	c := Comparison{Metric: metric, Base: Summarize(pb), New: Summarize(pn), Runs: [2]int{len(base), len(new)}}
	c.Mean = BootstrapDiff(base, new, Mean, 2000)
	c.Median = BootstrapDiff(base, new, Median, 2000)
	c.U, c.P = MannWhitney(pb, pn)
	c.Cliff = CliffsDelta(pb, pn)
	switch {
	case c.P < 0.05 && c.Median.Lo > 0:
		c.Verdict = Regression
	case c.P < 0.05 && c.Median.Hi < 0:
		c.Verdict = Improvement
	default:
		c.Verdict = Noise
	}
	return c
}
