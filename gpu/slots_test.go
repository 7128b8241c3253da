package gpu

import (
	"context"
	"errors"
	"testing"
	"time"

	curve "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
)

// broken is a device whose MSMs fail, as a GPU with an ECC error would.
type broken struct{ CPU }

func (b *broken) Name() string { return "broken/0" }
func (b *broken) MSMG1(context.Context, []curve.G1Affine, []fr.Element) (curve.G1Jac, error) {
	return curve.G1Jac{}, errors.New("device lost")
}

func TestQuarantine(t *testing.T) {
	bad, good := &broken{}, &CPU{ID: 1}
	s := NewSlots(bad, good)
	ctx := context.Background()
	seen := map[string]bool{}
	for i := 0; i < 4; i++ {
		d, err := s.Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		seen[d.Name()] = true
		if _, err := d.MSMG1(ctx, nil, nil); err != nil {
			s.Fail(d, err)
			continue
		}
		s.Release(d)
	}
	q := s.Quarantined()
	if len(q) != 1 || q["broken/0"] == "" || !seen["cpu/1"] {
		t.Fatalf("quarantined %v, seen %v", q, seen)
	}
	// Only the healthy device is handed out now.
	for i := 0; i < 3; i++ {
		d, err := s.Acquire(ctx)
		if err != nil || d.Name() != "cpu/1" {
			t.Fatalf("acquired %v, %v", d, err)
		}
		s.Release(d)
	}
	d, _ := s.Acquire(ctx)
	s.Fail(d, errors.New("also lost"))
	ctx2, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	if _, err := s.Acquire(ctx2); !errors.Is(err, ErrNoHealthyDevice) {
		t.Fatalf("all devices quarantined: %v", err)
	}
	if s.Healthy() != 0 {
		t.Fatalf("healthy %d", s.Healthy())
	}
}
