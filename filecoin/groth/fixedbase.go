package groth

import (
	"runtime"
	"sync"
	"sync/atomic"

	bls "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
)

// jacobian is what the fixed-base multiplication needs of a Jacobian point
// type J (bls.G1Jac, bls.G2Jac) over its affine type A. The zero J is the
// point at infinity for AddMixed (Z = 0).
type jacobian[A, J any] interface {
	*J
	FromAffine(*A) *J
	AddMixed(*A) *J
	AddAssign(*J) *J
	DoubleAssign() *J
}

// scalarBits is the bit length of a BLS12-381 scalar.
const scalarBits = fr.Bits

// fixedBaseChunk is the number of scalars a worker multiplies at a time
// (its Jacobian buffer, converted to affine in one batch inversion).
const fixedBaseChunk = 1 << 13

// fixedBaseWindow returns the window width c minimizing the additions of
// n multiplications by one base, windows·(n + 2^c) (the table costs one
// addition an entry), capped at 16 bits (a G1 table of 16 windows of
// 65,535 points is 100 MB).
func fixedBaseWindow(n int) int {
	best, bestCost := 2, -1
	for c := 2; c <= 16; c++ {
		w := (scalarBits + c - 1) / c
		cost := w * (n + 1<<c)
		if bestCost < 0 || cost < bestCost {
			best, bestCost = c, cost
		}
	}
	return best
}

// fixedBaseMul returns scalars[i]·base for every i, a point at infinity
// for a zero scalar. It is the fixed-base windowed method: a table of
// d·2^(cj)·base for every window j and digit d, made once, after which a
// multiplication is one mixed addition per window and no doublings.
// gnark-crypto's BatchScalarMultiplicationG1/G2 keep one table of digits
// and double each point 255 times, which is most of gnark's groth16.Setup
// time (see BenchmarkFixedBase). toAffine is gnark-crypto's batch
// conversion (one inversion per chunk).
func fixedBaseMul[A, J any, PJ jacobian[A, J]](base *A, scalars []fr.Element, toAffine func([]J) []A) []A {
	out := make([]A, len(scalars))
	if len(scalars) == 0 {
		return out
	}
	c := fixedBaseWindow(len(scalars))
	windows := (scalarBits + c - 1) / c
	table := make([][]A, windows)
	// starts[j] = 2^(cj)·base.
	starts := make([]J, windows)
	PJ(&starts[0]).FromAffine(base)
	for j := 1; j < windows; j++ {
		starts[j] = starts[j-1]
		for range c {
			PJ(&starts[j]).DoubleAssign()
		}
	}
	parallelFor(windows, 1, func(lo, hi int) {
		for j := lo; j < hi; j++ {
			row := make([]J, 1<<c-1)
			row[0] = starts[j]
			for d := 1; d < len(row); d++ {
				row[d] = row[d-1]
				PJ(&row[d]).AddAssign(&starts[j])
			}
			table[j] = toAffine(row)
		}
	})
	mask := uint64(1)<<c - 1
	parallelFor(len(scalars), fixedBaseChunk, func(lo, hi int) {
		buf := make([]J, hi-lo)
		for i := lo; i < hi; i++ {
			limbs := scalars[i].Bits() // regular form, little-endian
			p := PJ(&buf[i-lo])
			for j := range windows {
				bit := j * c
				limb, off := bit/64, uint(bit%64)
				d := limbs[limb] >> off
				if off+uint(c) > 64 && limb+1 < len(limbs) {
					d |= limbs[limb+1] << (64 - off)
				}
				if d &= mask; d != 0 {
					p.AddMixed(&table[j][d-1])
				}
			}
		}
		copy(out[lo:hi], toAffine(buf))
	})
	return out
}

// g1FixedBase and g2FixedBase are fixedBaseMul in G1 and G2.
func g1FixedBase(base *bls.G1Affine, scalars []fr.Element) []bls.G1Affine {
	return fixedBaseMul[bls.G1Affine, bls.G1Jac](base, scalars, bls.BatchJacobianToAffineG1)
}

func g2FixedBase(base *bls.G2Affine, scalars []fr.Element) []bls.G2Affine {
	return fixedBaseMul[bls.G2Affine, bls.G2Jac](base, scalars, g2ToAffine)
}

// g2ToAffine converts points one inversion each: gnark-crypto has no
// batch conversion in G2, and b_g2 is the smallest query.
func g2ToAffine(points []bls.G2Jac) []bls.G2Affine {
	out := make([]bls.G2Affine, len(points))
	for i := range points {
		out[i].FromJacobian(&points[i])
	}
	return out
}

// parallelFor calls f on consecutive ranges of [0, n) of at most chunk
// elements, from GOMAXPROCS goroutines.
func parallelFor(n, chunk int, f func(lo, hi int)) {
	chunks := (n + chunk - 1) / chunk
	workers := min(runtime.GOMAXPROCS(0), chunks)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				c := int(next.Add(1) - 1)
				if c >= chunks {
					return
				}
				f(c*chunk, min((c+1)*chunk, n))
			}
		}()
	}
	wg.Wait()
}
