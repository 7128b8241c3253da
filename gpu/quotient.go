package gpu

import (
	"context"
	"fmt"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr/fft"

	"github.com/c2flow/c2flow/internal/parallel"
)

// Fill writes rows [lo, lo+len(dst)) of one of a, b, c (which: 0, 1, 2)
// into dst, zeros past the circuit's last row: the device phase evaluates
// them from the packed assignment chunk by chunk, so no dense a, b, c
// exists before a backend asks for it.
type Fill func(which, lo int, dst []fr.Element) error

// InputError is an error of what a device operation was given (a, b, c
// that could not be evaluated), not of the device: Faulted leaves it as
// it is, and no device is quarantined for it.
type InputError struct{ Err error }

func (e *InputError) Error() string { return e.Err.Error() }
func (e *InputError) Unwrap() error { return e.Err }

// Quotienter is a backend that computes the quotient itself (on its
// device, from chunks Fill writes), so that the host never holds a dense
// a, b or c. Backends without it compute it on the host through their
// NTTs (Quotient).
type Quotienter interface {
	Quotient(ctx context.Context, d *fft.Domain, fill Fill) ([]fr.Element, error)
}

// Quotient computes H' = INTT_coset(A·B − C) on d for the vectors fill
// writes, where A, B, C are a, b, c brought to the coset by NTTs. H' is
// Groth16's H times Z on the coset (a constant): the prover scales the
// MSM over H' once instead of every element. dev's own Quotient runs where
// it has one; otherwise the host holds two of a, b, c's buffers at a time
// and dev transforms them.
func Quotient(ctx context.Context, dev Backend, d *fft.Domain, fill Fill) ([]fr.Element, error) {
	if y, ok := dev.(yielding); ok {
		if q, ok := y.Backend.(Quotienter); ok {
			if err := y.s.yield(ctx, y.Name()); err != nil {
				return nil, err
			}
			return q.Quotient(ctx, d, fill)
		}
		return HostQuotient(ctx, dev, d, fill)
	}
	if q, ok := dev.(Quotienter); ok {
		return q.Quotient(ctx, d, fill)
	}
	return HostQuotient(ctx, dev, d, fill)
}

// HostQuotient is Quotient with the vectors in host memory and dev's NTTs:
// a's buffer, then b's; their product kept in a's; c into b's. Two
// buffers of the domain's size at a time, never three.
func HostQuotient(ctx context.Context, dev Backend, d *fft.Domain, fill Fill) ([]fr.Element, error) {
	n := int(d.Cardinality)
	toCoset := func(which int, v []fr.Element) error {
		if err := evaluate(fill, which, 0, v); err != nil {
			return err
		}
		if err := dev.INTT(ctx, d, v, false); err != nil {
			return err
		}
		return dev.NTT(ctx, d, v, true)
	}
	a := make([]fr.Element, n)
	if err := toCoset(0, a); err != nil {
		return nil, err
	}
	b := make([]fr.Element, n)
	if err := toCoset(1, b); err != nil {
		return nil, err
	}
	parallel.Ranges(n, 1<<12, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			a[i].Mul(&a[i], &b[i])
		}
	})
	if err := toCoset(2, b); err != nil {
		return nil, err
	}
	parallel.Ranges(n, 1<<12, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			a[i].Sub(&a[i], &b[i])
		}
	})
	b = nil
	if err := dev.INTT(ctx, d, a, true); err != nil {
		return nil, err
	}
	return a, nil
}

// evaluate is fill with its error as an InputError naming the vector: a
// failed evaluation says nothing of the device.
func evaluate(fill Fill, which, lo int, dst []fr.Element) error {
	if err := fill(which, lo, dst); err != nil {
		return &InputError{fmt.Errorf("evaluate %c: %w", "abc"[which], err)}
	}
	return nil
}

// HostQuotientBytes is the host memory HostQuotient holds on a domain of
// n: two vectors.
func HostQuotientBytes(n uint64) int64 { return 2 * int64(n) * fr.Bytes }

// DeviceQuotientHostBytes is the host memory a Quotienter's quotient holds
// on a domain of n: H coming back, and a staging chunk (at most 2^20
// elements). A device that falls back to the host quotient (its two
// vectors do not fit its memory limit, logged) holds HostQuotientBytes.
func DeviceQuotientHostBytes(n uint64) int64 { return (int64(n) + min(int64(n), 1<<20)) * fr.Bytes }

// QuotientOnDevice reports whether every device of s computes the
// quotient itself (a Quotienter): its device phases hold less host
// memory.
func (s *Slots) QuotientOnDevice() bool {
	for _, d := range s.all {
		if _, ok := d.(Quotienter); !ok {
			return false
		}
	}
	return len(s.all) > 0
}
