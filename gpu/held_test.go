package gpu

import (
	"context"
	"errors"
	"fmt"
	"testing"
)

// Run quarantines a device only for a Fault of its own operations: an
// error that is not the device's, or one that comes from a canceled
// context, gives the slot back. The Use names the device and counts the
// hold whatever f returned.
func TestRunQuarantinesOnFault(t *testing.T) {
	bad, good := &broken{}, &CPU{ID: 1}
	s := NewSlots(bad, good)
	ctx := context.Background()

	// Not the device's error: released, not quarantined.
	notDevice := errors.New("solution already consumed")
	use, err := s.Run(ctx, Order{}, func(dev Held) error { return notDevice })
	if !errors.Is(err, notDevice) || use.Device != "broken/0" || len(s.Quarantined()) != 0 {
		t.Fatalf("a non-device error: use %+v, err %v, quarantined %v", use, err, s.Quarantined())
	}
	// A fault under a canceled context says nothing of the device.
	cctx, cancel := context.WithCancel(ctx)
	_, err = s.Run(cctx, Order{}, func(dev Held) error {
		cancel()
		return Faulted(dev, context.Canceled)
	})
	if err == nil || len(s.Quarantined()) != 0 || s.Healthy() != 2 {
		t.Fatalf("a canceled operation: err %v, quarantined %v", err, s.Quarantined())
	}
	// A context error from an operation is no fault either, even where
	// Run's own context is alive (the phase's context ended first: a lost
	// heartbeat, a stalled host).
	for _, cerr := range []error{context.Canceled, context.DeadlineExceeded} {
		_, err = s.Run(ctx, Order{}, func(dev Held) error { return Faulted(dev, fmt.Errorf("H: %w", cerr)) })
		var f *Fault
		if errors.As(err, &f) || !errors.Is(err, cerr) || len(s.Quarantined()) != 0 {
			t.Fatalf("an operation stopped by %v: err %v, quarantined %v", cerr, err, s.Quarantined())
		}
	}
	// The device's own failure: quarantined, and only the healthy one is
	// handed out from then on.
	for range 4 {
		use, err := s.Run(ctx, Order{}, func(dev Held) error {
			_, err := dev.MSMG1(ctx, nil, nil)
			return Faulted(dev, err)
		})
		if err != nil {
			var f *Fault
			if !errors.As(err, &f) || f.Device != "broken/0" || use.Device != "broken/0" {
				t.Fatalf("the failing device's run: use %+v, err %v", use, err)
			}
		}
	}
	if q := s.Quarantined(); len(q) != 1 || q["broken/0"] == "" || s.Healthy() != 1 {
		t.Fatalf("quarantined %v, healthy %d", q, s.Healthy())
	}
	for range 3 {
		if use, err := s.Run(ctx, Order{}, func(Held) error { return nil }); err != nil || use.Device != "cpu/1" {
			t.Fatalf("after the quarantine: use %+v, err %v", use, err)
		}
	}
}
