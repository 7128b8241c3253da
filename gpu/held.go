package gpu

import (
	"context"
	"errors"
	"fmt"
	"time"

	curve "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr/fft"
)

// Held is a device slot its holder has: the device, and how the wait for
// it went. Run hands one to the device phase; nothing else acquires one.
type Held struct {
	Backend
	Queue time.Duration // waited for the slot
	Start time.Time     // the slot acquired
}

// Use is the account of one Run: which device, when, how long waited and
// how long held.
type Use struct {
	Device string
	Start  time.Time
	Queue  time.Duration
	Busy   time.Duration
}

// Fault is an error of a device operation (a failed NTT or MSM): Run
// quarantines the device it came from instead of handing it to the next
// partition.
type Fault struct {
	Device string
	Err    error
}

func (f *Fault) Error() string { return fmt.Sprintf("device %s: %v", f.Device, f.Err) }
func (f *Fault) Unwrap() error { return f.Err }

// Faulted wraps err, an error of an operation on dev, as a Fault; nil
// stays nil, and so do a canceled or expired context's error (an
// operation that was stopped says nothing of the device) and an
// InputError (nor does bad input) and a MemoryError (nor does a device
// that was full).
func Faulted(dev Backend, err error) error {
	var in *InputError
	var mem *MemoryError
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || errors.As(err, &in) || errors.As(err, &mem) {
		return err
	}
	return &Fault{Device: dev.Name(), Err: err}
}

// yielding is an ordinary holder's device: every operation first waits
// while an urgent phase holds the device, so the urgent phase has the
// device (a CPU pseudo-device's cores, a GPU's SMs and memory) to itself
// but for the operation in flight when it came; and each is a checkpoint
// of the host's urgency gate (yield.Point), where ctx carries one.
type yielding struct {
	Backend
	s *Slots
}

func (y yielding) MSMG1(ctx context.Context, points []curve.G1Affine, scalars []fr.Element) (curve.G1Jac, error) {
	if err := y.s.yield(ctx, y.Name()); err != nil {
		return curve.G1Jac{}, err
	}
	return y.Backend.MSMG1(ctx, points, scalars)
}

func (y yielding) INTT(ctx context.Context, d *fft.Domain, v []fr.Element, coset bool) error {
	if err := y.s.yield(ctx, y.Name()); err != nil {
		return err
	}
	return y.Backend.INTT(ctx, d, v, coset)
}

func (y yielding) NTT(ctx context.Context, d *fft.Domain, v []fr.Element, coset bool) error {
	if err := y.s.yield(ctx, y.Name()); err != nil {
		return err
	}
	return y.Backend.NTT(ctx, d, v, coset)
}

// Run acquires a slot in order o (an Urgent order may share a held
// device: see Slots), runs f on its device, and releases the slot when f
// returns: the one place a device is acquired, so a slot is
// held for exactly its phase. A Fault from f quarantines the device
// (unless ctx ended: a canceled operation says nothing of the device).
// The Use is filled in whenever a slot was acquired, even if f failed.
func (s *Slots) Run(ctx context.Context, o Order, f func(Held) error) (Use, error) {
	tq := time.Now()
	dev, urgent, err := s.acquireOrder(ctx, o)
	if err != nil {
		return Use{}, fmt.Errorf("waiting for a device: %w", err)
	}
	h := Held{Backend: dev, Queue: time.Since(tq), Start: time.Now()}
	if !urgent {
		h.Backend = yielding{dev, s}
	}
	err = f(h)
	use := Use{Device: dev.Name(), Start: h.Start, Queue: h.Queue, Busy: time.Since(h.Start)}
	var fault *Fault
	if errors.As(err, &fault) && ctx.Err() == nil {
		s.failLane(dev, urgent, err)
		return use, err
	}
	s.releaseLane(dev, urgent)
	return use, err
}
