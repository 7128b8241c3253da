package gpu

import (
	"context"
	"errors"
	"runtime"
	"sync/atomic"
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
		{Priority: 2, Submitted: 900, Seq: 9}, // more urgent beats older
		{Priority: 3, Submitted: 100, Seq: 2, Partition: 7},
		{Priority: 3, Submitted: 100, Seq: 2, Partition: 1},
	}
	served := make(chan int, len(orders))
	for i, o := range orders {
		go func() {
			d, _, err := s.acquireOrder(ctx, o)
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
	go func() { _, _, err := s.acquireOrder(cctx, Order{}); errc <- err }()
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

// A priority-1 phase never waits behind lower priorities: with every
// device held by long priority-3 phases and more queued, it runs at once
// in a device's urgent lane (one per device), while priority 2 and 3
// still wait; a priority-1 phase finding every urgent lane taken waits for
// the next lane freed, ahead of the queue. Busy counts wall time held.
func TestUrgentLane(t *testing.T) {
	t0 := time.Now()
	s := NewSlots(&CPU{ID: 0}, &CPU{ID: 1})
	ctx := context.Background()
	type done struct {
		name string
		use  Use
		err  error
	}
	finished := make(chan done, 16)
	start := func(name string, prio int, release chan struct{}) {
		go func() {
			u, err := s.Run(ctx, Order{Priority: prio}, func(Held) error {
				if release != nil {
					<-release
				}
				return nil
			})
			finished <- done{name, u, err}
		}()
	}
	waitFor := func(what string, ok func() bool) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); !ok(); time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %s", what)
			}
		}
	}
	holding := func() int {
		s.mu.Lock()
		defer s.mu.Unlock()
		n := 0
		for _, h := range s.holders {
			n += h
		}
		return n
	}
	long := []chan struct{}{make(chan struct{}), make(chan struct{})}
	start("porep-a", 3, long[0])
	start("porep-b", 3, long[1])
	waitFor("both devices held", func() bool { return holding() == 2 })
	start("porep-queued", 3, nil)
	start("window", 2, nil)
	waitFor("two waiters", func() bool { return s.Waiting() == 2 })

	// Two priority-1 phases run beside the long ones, one on each device.
	hold1, hold2 := make(chan struct{}), make(chan struct{})
	start("winning-1", 1, hold1)
	start("winning-2", 1, hold2)
	waitFor("both urgent lanes taken", func() bool { return holding() == 4 })
	// A third waits, ahead of the queue, for an urgent lane.
	start("winning-3", 1, nil)
	waitFor("a third priority-1 waiter", func() bool { return s.Waiting() == 3 })
	close(hold1)
	if d := <-finished; d.name != "winning-1" || d.err != nil {
		t.Fatalf("first to finish: %s (%v), want winning-1", d.name, d.err)
	}
	if d := <-finished; d.name != "winning-3" || d.err != nil || d.use.Queue <= 0 {
		t.Fatalf("next to finish: %s (%v, queued %v), want winning-3 through the freed urgent lane", d.name, d.err, d.use.Queue)
	}
	close(hold2)
	if d := <-finished; d.name != "winning-2" {
		t.Fatalf("next to finish: %s, want winning-2", d.name)
	}
	// Priorities 2 and 3 still wait for an ordinary lane.
	if w := s.Waiting(); w != 2 {
		t.Fatalf("%d waiting, want the priority-2 and priority-3 phases", w)
	}
	busy, elapsed := s.Busy(), time.Since(t0)
	close(long[0])
	for _, name := range []string{"porep-a", "window"} {
		if d := <-finished; d.name != name {
			t.Fatalf("finished %s, want %s", d.name, name)
		}
	}
	close(long[1])
	got := map[string]bool{}
	for range 2 {
		got[(<-finished).name] = true
	}
	if !got["porep-b"] || !got["porep-queued"] {
		t.Fatalf("last two finished: %v", got)
	}
	// Every holder gave its device back: both are free, each once.
	if n := holding(); n != 0 {
		t.Fatalf("%d holders left", n)
	}
	s.mu.Lock()
	free, urgent := len(s.free), s.urgent
	s.mu.Unlock()
	if free != 2 || urgent["cpu/0"] || urgent["cpu/1"] {
		t.Fatalf("free %d, urgent lanes %v", free, urgent)
	}
	// Held continuously since the long phases began: wall time, not a sum
	// over holders (which would exceed the time since the test started).
	for dev, b := range busy {
		if b <= 0 || b > elapsed {
			t.Fatalf("%s busy %v, %v since the test began", dev, b, elapsed)
		}
	}
}

// An urgent holder's fault quarantines the device as any fault does, and
// the ordinary holder's release then hands it to nobody.
func TestUrgentLaneFault(t *testing.T) {
	bad := &broken{}
	s := NewSlots(bad)
	ctx := context.Background()
	release := make(chan struct{})
	held := make(chan struct{})
	errc := make(chan error, 1)
	go func() {
		_, err := s.Run(ctx, Order{Priority: 3}, func(Held) error { close(held); <-release; return nil })
		errc <- err
	}()
	<-held
	_, err := s.Run(ctx, Order{Priority: 1}, func(h Held) error {
		_, err := h.MSMG1(ctx, nil, nil)
		return Faulted(h, err)
	})
	var f *Fault
	if !errors.As(err, &f) {
		t.Fatalf("urgent run: %v, want a device fault", err)
	}
	close(release)
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	if s.Healthy() != 0 || s.Quarantined()["broken/0"] == "" {
		t.Fatalf("healthy %d, quarantined %v", s.Healthy(), s.Quarantined())
	}
	if _, err := s.Run(ctx, Order{Priority: 1}, func(Held) error { return nil }); !errors.Is(err, ErrNoHealthyDevice) {
		t.Fatalf("after quarantine: %v", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.free) != 0 || s.holders["broken/0"] != 0 {
		t.Fatalf("free %d, holders %d", len(s.free), s.holders["broken/0"])
	}
}

// counting is a device whose MSMs are instant and counted.
type counting struct {
	CPU
	n atomic.Int64
}

func (c *counting) MSMG1(context.Context, []curve.G1Affine, []fr.Element) (curve.G1Jac, error) {
	c.n.Add(1)
	return curve.G1Jac{}, nil
}

// While a priority-1 phase holds a device's urgent lane, the phase on it
// starts no device operation (it yields between operations): the urgent
// one has the device but for the operation in flight when it came. Once
// the urgent phase is done the other carries on.
func TestOrdinaryHolderYieldsToUrgent(t *testing.T) {
	dev := &counting{}
	s := NewSlots(dev)
	ctx := context.Background()
	var ordinary atomic.Int64
	stop, running := make(chan struct{}), make(chan struct{})
	errc := make(chan error, 1)
	go func() {
		_, err := s.Run(ctx, Order{Priority: 3}, func(h Held) error {
			for i := 0; ; i++ {
				if i == 1 {
					close(running)
				}
				select {
				case <-stop:
					return nil
				default:
				}
				if _, err := h.MSMG1(ctx, nil, nil); err != nil {
					return err
				}
				ordinary.Add(1)
			}
		})
		errc <- err
	}()
	<-running
	_, err := s.Run(ctx, Order{Priority: 1}, func(h Held) error {
		// The ordinary phase comes to its next operation and waits there.
		for deadline := time.Now().Add(10 * time.Second); ; runtime.Gosched() {
			s.mu.Lock()
			n := s.yielding
			s.mu.Unlock()
			if n == 1 {
				break
			}
			if time.Now().After(deadline) {
				return errors.New("the ordinary phase never yielded to the urgent one")
			}
		}
		before := ordinary.Load()
		for range 1000 {
			if _, err := h.MSMG1(ctx, nil, nil); err != nil {
				return err
			}
			runtime.Gosched()
		}
		if n := ordinary.Load() - before; n > 1 {
			t.Errorf("the ordinary phase ran %d device operations while the urgent phase held the device", n)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	resumed := ordinary.Load()
	for ordinary.Load() < resumed+10 {
		runtime.Gosched()
	}
	close(stop)
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
}
