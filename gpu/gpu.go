// Package gpu holds the device backends of the Groth16 device phase and the
// device slots that ration them.
//
// A Backend offers the few operations the device phase needs: G1 MSMs and
// NTTs over BLS12-381's scalar field. The CPU backend (the default, what CI
// runs) implements them with gnark-crypto's MultiExp and fft.Domain; the
// CUDA backend (build tag cuda) with icicle.
package gpu

import (
	"cmp"
	"context"
	"fmt"
	"runtime"
	"strconv"
	"strings"

	"github.com/consensys/gnark-crypto/ecc"
	curve "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr/fft"

	"github.com/c2flow/c2flow/internal/yield"
)

// Backend is one device's implementation of the device phase's operations.
// The orderings follow gnark's prover, so H comes out as gnark's proving
// key expects it (bit-reversed, matching pk.G1.Z).
type Backend interface {
	// Name is the backend's kind and device, e.g. "cpu/0" or "cuda/1".
	Name() string
	// MSMG1 returns sum scalars[i]*points[i]. A backend may keep points
	// resident between calls (they are proving-key bases, reused by every
	// partition), so callers must not modify a points slice once passed.
	MSMG1(ctx context.Context, points []curve.G1Affine, scalars []fr.Element) (curve.G1Jac, error)
	// INTT is the inverse NTT on d, natural order in, bit-reversed out,
	// on the coset of d's generator when coset is set.
	INTT(ctx context.Context, d *fft.Domain, v []fr.Element, coset bool) error
	// NTT is the forward NTT on d, bit-reversed in, natural order out, on
	// the coset when coset is set.
	NTT(ctx context.Context, d *fft.Domain, v []fr.Element, coset bool) error
}

// CPU is the gnark-crypto backend, limited to a number of goroutines so
// several pseudo-devices can share a host's cores.
type CPU struct {
	ID    int
	Tasks int
	// YieldChunk is the MSM chunk of yielding work (0: CPUYieldChunk).
	YieldChunk int
}

// Name implements Backend.
func (c *CPU) Name() string { return "cpu/" + strconv.Itoa(c.ID) }

// MSMG1 implements Backend with gnark-crypto's MultiExp.
func (c *CPU) MSMG1(ctx context.Context, points []curve.G1Affine, scalars []fr.Element) (curve.G1Jac, error) {
	var r curve.G1Jac
	if err := ctx.Err(); err != nil {
		return r, err
	}
	if len(points) != len(scalars) {
		return r, fmt.Errorf("msm g1: %d points, %d scalars", len(points), len(scalars))
	}
	chunk := len(points)
	if yield.Yields(ctx) {
		chunk = YieldChunk(len(points), cmp.Or(c.YieldChunk, CPUYieldChunk))
	}
	first := min(chunk, len(points))
	if _, err := r.MultiExp(points[:first], scalars[:first], c.cfg()); err != nil {
		return r, fmt.Errorf("msm g1: %w", err)
	}
	for lo := first; lo < len(points); lo += chunk {
		if err := yield.Point(ctx); err != nil {
			return r, err
		}
		hi := min(lo+chunk, len(points))
		var part curve.G1Jac
		if _, err := part.MultiExp(points[lo:hi], scalars[lo:hi], c.cfg()); err != nil {
			return r, fmt.Errorf("msm g1: %w", err)
		}
		r.AddAssign(&part)
	}
	return r, nil
}

// CPUYieldChunk is about how many points a CPU MSM of work that yields to
// urgent work (yield.Yields) takes between checkpoints: gnark-crypto's
// MultiExp cannot stop midway, and a 2KiB PoRep MSM (2.7M points) is 3.5
// s of both cores here. Measured on this 2-core box, a 2.7M-point MSM in
// chunks of 1M points took 1.0% longer than whole, of 512K 4.5%, and
// 512K chunks made the 2KiB pipeline's MSMs 20% slower beside its
// syntheses (docs/performance.md).
const CPUYieldChunk = 1 << 20

// YieldChunk splits an MSM of n points into equal chunks of at most about
// max points (a 2.7M-point MSM in three of 0.9M, not two of 1M and a
// 0.7M tail).
func YieldChunk(n, max int) int {
	if n <= max {
		return n
	}
	k := (n + max - 1) / max
	return (n + k - 1) / k
}

func (c *CPU) cfg() ecc.MultiExpConfig { return ecc.MultiExpConfig{NbTasks: c.tasks()} }

func (c *CPU) tasks() int {
	if c.Tasks > 0 {
		return c.Tasks
	}
	return runtime.NumCPU()
}

// INTT implements Backend with fft.Domain (DIF).
func (c *CPU) INTT(ctx context.Context, d *fft.Domain, v []fr.Element, coset bool) error {
	if err := checkNTT(ctx, d, v); err != nil {
		return err
	}
	opts := []fft.Option{fft.WithNbTasks(c.tasks())}
	if coset {
		opts = append(opts, fft.OnCoset())
	}
	d.FFTInverse(v, fft.DIF, opts...)
	return nil
}

// NTT implements Backend with fft.Domain (DIT).
func (c *CPU) NTT(ctx context.Context, d *fft.Domain, v []fr.Element, coset bool) error {
	if err := checkNTT(ctx, d, v); err != nil {
		return err
	}
	opts := []fft.Option{fft.WithNbTasks(c.tasks())}
	if coset {
		opts = append(opts, fft.OnCoset())
	}
	d.FFT(v, fft.DIT, opts...)
	return nil
}

func checkNTT(ctx context.Context, d *fft.Domain, v []fr.Element) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if uint64(len(v)) != d.Cardinality {
		return fmt.Errorf("ntt: %d elements on a domain of %d", len(v), d.Cardinality)
	}
	return nil
}

// ParseDevices parses a --devices list ("0,1"); an empty string means all.
func ParseDevices(s string) ([]int, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var ids []int
	seen := map[int]bool{}
	for _, f := range strings.Split(s, ",") {
		id, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || id < 0 {
			return nil, fmt.Errorf("--devices: %q is not a device index", f)
		}
		if seen[id] {
			return nil, fmt.Errorf("--devices: device %d listed twice", id)
		}
		seen[id] = true
		ids = append(ids, id)
	}
	return ids, nil
}
