package activities

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	sdkworker "go.temporal.io/sdk/worker"

	"github.com/c2flow/c2flow/job"
)

// The partition sizes of the example: a 2KiB Filecoin partition
// (Solution.Bytes 343,987,072 B, reserved 352,375,680 B) and a 32GiB one
// (15.54 GiB).
const (
	bytes2KiB  = 352_375_680
	bytes32GiB = 16_686_000_000
)

// reserve takes a poller's slot as the SDK does, without waiting.
func reserve(t *testing.T, b *Budget) (*sdkworker.SlotPermit, bool) {
	t.Helper()
	p := b.TryReserveSlot(nil)
	if p == nil {
		return nil, false
	}
	b.MarkSlotUsed(markInfo{p: p})
	return p, true
}

// markInfo and releaseInfo carry a permit as the SDK's do.
type markInfo struct {
	sdkworker.SlotMarkUsedInfo
	p *sdkworker.SlotPermit
}

func (m markInfo) Permit() *sdkworker.SlotPermit { return m.p }

type releaseInfo struct {
	sdkworker.SlotReleaseInfo
	p *sdkworker.SlotPermit
}

func (r releaseInfo) Permit() *sdkworker.SlotPermit { return r.p }

// A host whose byte budget fits one 32GiB-sized partition admits many 2KiB
// partitions at once (as many as their bytes fit, not one), and never two
// 32GiB-sized ones: the second waits until the first's witness is freed,
// and while it waits no 2KiB reservation overtakes it.
func TestByteBudgetMixedSizes(t *testing.T) {
	ctx := context.Background()
	budget := int64(bytes32GiB + bytes2KiB) // one 32GiB partition and one 2KiB one
	b, err := NewByteBudget(budget, bytes2KiB)
	if err != nil {
		t.Fatal(err)
	}
	// 2KiB partitions: reserve, acquire, hold until nothing more fits.
	var small int
	for {
		p, ok := reserve(t, b)
		if !ok {
			break
		}
		if err := b.Acquire(ctx, bytes2KiB); err != nil {
			t.Fatal(err)
		}
		b.Hold(bytes2KiB, bytes2KiB)
		b.ReleaseSlot(releaseInfo{p: p})
		small++
	}
	t.Logf("a budget of %d bytes: %d 2KiB partitions held at once, or one 32GiB-sized one", budget, small)
	if want := int(budget / bytes2KiB); small != want {
		t.Fatalf("%d 2KiB partitions admitted at once, want %d (the bytes of the budget)", small, want)
	}
	if s := b.Stats(); s.Held != small || s.MaxBytes != budget {
		t.Fatalf("stats %+v", s)
	}
	for range small {
		b.Free(bytes2KiB)
	}

	// One 32GiB-sized partition fits; a second one waits for it.
	p1, ok := reserve(t, b)
	if !ok {
		t.Fatal("no slot for the first 32GiB partition")
	}
	if err := b.Acquire(ctx, bytes32GiB); err != nil {
		t.Fatal(err)
	}
	b.Hold(bytes32GiB, bytes32GiB)
	b.ReleaseSlot(releaseInfo{p: p1})
	p2, ok := reserve(t, b)
	if !ok {
		t.Fatal("no reservation while a 2KiB partition's bytes are free")
	}
	short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	if err := b.Acquire(short, bytes32GiB); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("second 32GiB partition while the first is held: %v, want a wait", err)
	}
	done := make(chan error, 1)
	go func() { done <- b.Acquire(ctx, bytes32GiB) }()
	for waiting := int64(0); waiting == 0; time.Sleep(time.Millisecond) { // until it waits, however loaded the machine
		b.mu.Lock()
		waiting = b.waiting
		b.mu.Unlock()
	}
	if _, ok := reserve(t, b); ok {
		t.Fatal("a reservation overtook the waiting 32GiB partition")
	}
	b.Free(bytes32GiB) // the first one's device phase freed its witness
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the second 32GiB partition was not admitted once the first was freed")
	}
	b.Giveback(bytes32GiB)
	b.ReleaseSlot(releaseInfo{p: p2})

	// A partition larger than the whole budget is refused at once.
	if err := b.Acquire(ctx, 2*budget); err == nil {
		t.Fatal("a partition larger than the budget was admitted")
	}
	if s := b.Stats(); s.InFlight != 0 || s.HeldBytes != 0 {
		t.Fatalf("stats after everything was freed: %+v", s)
	}
}

// A partition budget counts partitions whatever their size, as before.
func TestPartitionBudgetCounts(t *testing.T) {
	b, err := NewBudget(2)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, ok := reserve(t, b); !ok {
			t.Fatal("slot refused under the budget")
		}
		if err := b.Acquire(context.Background(), bytes32GiB); err != nil {
			t.Fatal(err)
		}
	}
	if _, ok := reserve(t, b); ok {
		t.Fatal("a third partition admitted by a budget of 2")
	}
}

// What a loaded circuit holds (proving keys, recorded system, and one
// device phase's expansion per device lane) is held out of a host's byte
// budget: a partition must fit beside it, a reservation counts it, and a
// circuit that leaves no room for the smallest partition is an error. A
// partition budget only reports it.
func TestByteBudgetHoldsCircuits(t *testing.T) {
	ctx := context.Background()
	const gb = int64(1) << 30
	b, err := NewByteBudget(10*gb, gb)
	if err != nil {
		t.Fatal(err)
	}
	b.SetLanes(2, false)
	if err := b.HoldCircuit("32GiB-sized", CircuitBytes{Keys: 2 * gb, System: gb, Lane: gb / 2}); err != nil {
		t.Fatal(err)
	}
	if err := b.Acquire(ctx, 7*gb); err == nil || !strings.Contains(err.Error(), "beside the loaded circuits") {
		t.Fatalf("a 7 GB partition beside 4 GB of circuits in 10 GB: %v", err)
	}
	if _, ok := reserve(t, b); !ok {
		t.Fatal("no reservation with 6 GB free")
	}
	if err := b.Acquire(ctx, 5*gb); err != nil {
		t.Fatal(err)
	}
	if _, ok := reserve(t, b); !ok {
		t.Fatal("no reservation with 1 GB free")
	}
	if _, ok := reserve(t, b); ok {
		t.Fatal("a reservation beyond circuits + used + the floor")
	}
	if s := b.Stats(); s.KeyBytes != 2*gb || s.SystemBytes != gb || s.ExpansionBytes != gb || s.Lanes != 2 {
		t.Fatalf("stats %+v", s)
	}
	// A smaller circuit's lane leaves the largest one's in place.
	if err := b.HoldCircuit("2KiB-sized", CircuitBytes{Lane: gb / 8}); err != nil || b.Stats().ExpansionBytes != gb {
		t.Fatalf("a smaller lane: %v, %+v", err, b.Stats())
	}
	if err := b.HoldCircuit("another", CircuitBytes{Keys: 6 * gb}); err == nil {
		t.Fatal("a circuit leaving no room for a partition was accepted")
	}

	// A host whose devices compute the quotient holds the smaller lane.
	db, err := NewByteBudget(10*gb, gb)
	if err != nil {
		t.Fatal(err)
	}
	db.SetLanes(2, true)
	if err := db.HoldCircuit("32GiB-sized", CircuitBytes{Lane: 3 * gb, LaneOnDevice: gb}); err != nil || db.Stats().ExpansionBytes != 2*gb {
		t.Fatalf("lanes on the device: %v, %+v", err, db.Stats())
	}

	pb, err := NewBudget(2)
	if err != nil {
		t.Fatal(err)
	}
	if err := pb.HoldCircuit("big", CircuitBytes{Keys: 100 * gb}); err != nil {
		t.Fatal(err)
	}
	if _, ok := reserve(t, pb); !ok {
		t.Fatal("a partition budget rations by circuits")
	}
}

// A synthesis reserves what it may hold at most; its witness then holds
// what it does hold (packed), and the rest goes back to the budget at
// once: the next synthesis that waited for it starts.
func TestHoldGivesBackWhatTheWitnessDoesNotHold(t *testing.T) {
	ctx := context.Background()
	const gb = int64(1) << 30
	b, err := NewByteBudget(4*gb, gb)
	if err != nil {
		t.Fatal(err)
	}
	reserve(t, b)
	if err := b.Acquire(ctx, 3*gb); err != nil {
		t.Fatal(err)
	}
	waited := make(chan error, 1)
	go func() {
		reserve(t, b)
		waited <- b.Acquire(ctx, 3*gb)
	}()
	select {
	case err := <-waited:
		t.Fatalf("a second 3 GB synthesis in a 4 GB budget started: %v", err)
	case <-time.After(50 * time.Millisecond):
	}
	b.Hold(3*gb, 100<<20) // the first one's witness: 100 MiB packed
	if err := <-waited; err != nil {
		t.Fatal(err)
	}
	if s := b.Stats(); s.Held != 1 || s.HeldBytes != 100<<20 || s.Running != 1 {
		t.Fatalf("stats %+v", s)
	}
	b.Free(100 << 20)
	b.Giveback(3 * gb)
	if s := b.Stats(); s.Held != 0 || s.HeldBytes != 0 {
		t.Fatalf("stats after free %+v", s)
	}
}

// A priority-1 synthesis runs while the budget is full of others: it takes
// the host's urgent reserve, and its witness gives the reserve back when
// its device phase frees it, not the main budget. A partition larger than
// the whole reserve is synthesized within the main budget instead.
func TestUrgentSynthesisHasItsOwnReserve(t *testing.T) {
	h, b, env := newFakeHost(t, 1)
	urgent, err := NewBudget(1)
	if err != nil {
		t.Fatal(err)
	}
	h.Urgent = urgent
	env.RegisterActivity(h.SynthesizeUrgent)
	synth := func(f any, k int) job.SynthOutput {
		t.Helper()
		return synthesize(t, env, f, job.SynthInput{Partition: k})
	}
	synth(h.Synthesize, 0) // the main budget is full now
	full, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := b.Acquire(full, 1); err == nil {
		t.Fatalf("main budget: %+v, want it full", b.Stats())
	}
	w := synth(h.SynthesizeUrgent, 1)
	if st, ust := b.Stats(), urgent.Stats(); st.Held != 1 || ust.Held != 1 {
		t.Fatalf("after the urgent synthesis: main %+v, urgent %+v", st, ust)
	}
	if _, err := env.ExecuteActivity(h.DevicePhase, job.HandleInput{Witness: w.Witness, Partition: 1, Order: job.DeviceOrder{Priority: 1}}); err != nil {
		t.Fatal(err)
	}
	if st, ust := b.Stats(), urgent.Stats(); st.Held != 1 || ust.Held != 0 {
		t.Fatalf("after its device phase: main %+v, urgent %+v: the urgent witness must free the reserve", st, ust)
	}

	// A reserve smaller than the partition (1 MiB): the main budget.
	small, err := NewByteBudget(512<<10, 512<<10)
	if err != nil {
		t.Fatal(err)
	}
	h2, b2, env2 := newFakeHost(t, 1)
	h2.Urgent = small
	env2.RegisterActivity(h2.SynthesizeUrgent)
	env = env2
	synth(h2.SynthesizeUrgent, 2)
	if st, ust := b2.Stats(), small.Stats(); st.Held != 1 || ust.Held != 0 {
		t.Fatalf("a partition larger than the reserve: main %+v, reserve %+v", st, ust)
	}
}
