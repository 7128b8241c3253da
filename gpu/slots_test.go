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
		d, err := s.acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		seen[d.Name()] = true
		if _, err := d.MSMG1(ctx, nil, nil); err != nil {
			s.fail(d, err)
			continue
		}
		s.release(d)
	}
	q := s.Quarantined()
	if len(q) != 1 || q["broken/0"] == "" || !seen["cpu/1"] {
		t.Fatalf("quarantined %v, seen %v", q, seen)
	}
	// Only the healthy device is handed out now.
	for i := 0; i < 3; i++ {
		d, err := s.acquire(ctx)
		if err != nil || d.Name() != "cpu/1" {
			t.Fatalf("acquired %v, %v", d, err)
		}
		s.release(d)
	}
	d, _ := s.acquire(ctx)
	s.fail(d, errors.New("also lost"))
	ctx2, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	if _, err := s.acquire(ctx2); !errors.Is(err, ErrNoHealthyDevice) {
		t.Fatalf("all devices quarantined: %v", err)
	}
	if s.Healthy() != 0 {
		t.Fatalf("healthy %d", s.Healthy())
	}
}

// Waiters are served by Order, not arrival: the oldest sector's partition
// gets the device first, whatever order the partitions arrived in.
func TestAcquireOrder(t *testing.T) {
	s := NewSlots(&CPU{ID: 0})
	ctx := context.Background()
	d, err := s.acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	orders := []Order{
		{Priority: 3, Submitted: 200, Seq: 0},
		{Priority: 3, Submitted: 100, Seq: 5},
		{Priority: 1, Submitted: 900, Seq: 9}, // more urgent beats older
		{Priority: 3, Submitted: 100, Seq: 2, Partition: 7},
		{Priority: 3, Submitted: 100, Seq: 2, Partition: 1},
	}
	served := make(chan int, len(orders))
	for i, o := range orders {
		go func() {
			d, err := s.acquireOrder(ctx, o)
			if err != nil {
				t.Error(err)
				return
			}
			served <- i
			s.release(d)
		}()
		for s.Waiting() != i+1 { // arrivals in slice order
			time.Sleep(time.Millisecond)
		}
	}
	// A canceled waiter leaves without a device and without blocking others.
	cctx, cancel := context.WithCancel(ctx)
	errc := make(chan error, 1)
	go func() { _, err := s.acquireOrder(cctx, Order{}); errc <- err }()
	for s.Waiting() != len(orders)+1 {
		time.Sleep(time.Millisecond)
	}
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("canceled waiter: %v", err)
	}
	s.release(d)
	want := []int{2, 4, 3, 1, 0}
	for k, w := range want {
		if got := <-served; got != w {
			t.Fatalf("service %d: waiter %d, want %d (order %v)", k, got, w, orders[w])
		}
	}
	if s.Waiting() != 0 {
		t.Fatalf("%d still waiting", s.Waiting())
	}
	if b := s.Busy()["cpu/0"]; b <= 0 {
		t.Fatalf("busy %v", b)
	}
}
