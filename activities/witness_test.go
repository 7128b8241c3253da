package activities

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/c2flow/c2flow/gpu"
	"github.com/c2flow/c2flow/internal/yield"
	"github.com/c2flow/c2flow/job"
	"github.com/c2flow/c2flow/registry"
)

// fakePhases makes partitions out of nothing: enough for the host's
// bookkeeping (witness table, budget) to be tested without a circuit.
// Finalize draws a fresh random proof each call, as a real finalize draws
// fresh randomness: a replayed proof is recognisable.
type fakePhases struct{ Phases }

type fakeSolved struct{ k int }

func (s fakeSolved) Partition() string        { return fmt.Sprintf("fake/%d", s.k) }
func (s fakeSolved) Bytes() int64             { return 1 << 20 }
func (s fakeSolved) SynthTime() time.Duration { return time.Millisecond }

type fakeProving struct{ fakeSolved }

func (fakePhases) Synthesize(_ context.Context, _ job.Ref, k int) (Solution, error) {
	return fakeSolved{k}, nil
}

func (fakePhases) Validate(context.Context, job.Ref) (job.ValidateOutput, error) {
	return job.ValidateOutput{Partitions: 1}, nil
}

func (fakePhases) PartitionBytes(context.Context, job.Ref) (int64, error) { return 1 << 20, nil }

func (fakePhases) Quotient(_ context.Context, s Solution, _ gpu.Held) (Quotient, error) {
	return s.(fakeSolved), nil
}

func (fakePhases) MSM(_ context.Context, r Quotient, _ gpu.Held) (Partial, error) {
	return fakeProving{r.(fakeSolved)}, nil
}

func (fakePhases) Finalize(context.Context, Partial) ([]byte, time.Duration, error) {
	proof := make([]byte, 192)
	rand.Read(proof)
	return proof, time.Millisecond, nil
}

// newFakeHost is a host of fakePhases with its activities registered in
// a test activity environment.
func newFakeHost(t *testing.T, budget int) (*Host, *Budget, *testsuite.TestActivityEnvironment) {
	t.Helper()
	b, err := NewBudget(budget)
	if err != nil {
		t.Fatal(err)
	}
	slots, err := gpu.CPUSlots(1, 1)
	if err != nil {
		t.Fatal(err)
	}
	h := NewHost("h", fakePhases{}, slots, b, slog.New(slog.DiscardHandler))
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestActivityEnvironment()
	for _, a := range []any{h.Synthesize, h.DevicePhase, h.Finalize, h.Release} {
		env.RegisterActivity(a)
	}
	return h, b, env
}

// synthesize runs the synthesis activity f in env and returns its output.
func synthesize(t *testing.T, env *testsuite.TestActivityEnvironment, f any, in job.SynthInput) job.SynthOutput {
	t.Helper()
	v, err := env.ExecuteActivity(f, in)
	if err != nil {
		t.Fatal(err)
	}
	var out job.SynthOutput
	if err := v.Get(&out); err != nil {
		t.Fatal(err)
	}
	return out
}

// A synthesis whose completion never reached the workflow (Temporal's
// database was down as it reported) leaves a witness nobody will claim:
// the host drops it once its claim deadline passes, giving the budget
// back, instead of holding it until the witness TTL. A claimed witness is
// not dropped so.
func TestUnclaimedWitnessIsDropped(t *testing.T) {
	h, b, env := newFakeHost(t, 2)
	synth := func(k int) job.SynthOutput {
		t.Helper()
		return synthesize(t, env, h.Synthesize, job.SynthInput{Partition: k, ClaimWithin: time.Second})
	}
	lost, claimed := synth(0), synth(1)
	if _, err := env.ExecuteActivity(h.DevicePhase, job.HandleInput{Witness: claimed.Witness, Partition: 1}); err != nil {
		t.Fatal(err)
	}
	if st := b.Stats(); st.Held != 1 {
		t.Fatalf("budget before the claim deadline: %+v, want the lost witness held", st)
	}
	if expired, unclaimed := h.ws.expire(time.Hour); expired != 0 || unclaimed != 0 {
		t.Fatalf("dropped %d/%d before the claim deadline", expired, unclaimed)
	}
	// Past the deadline (claimDeadline(1s) = 32 s; moved, not waited for).
	h.ws.mu.Lock()
	for _, w := range h.ws.m {
		if !w.dropAt.IsZero() {
			w.dropAt = time.Now().Add(-time.Second)
		}
	}
	h.ws.mu.Unlock()
	if expired, unclaimed := h.ws.expire(time.Hour); expired != 0 || unclaimed != 1 {
		t.Fatalf("dropped %d expired, %d unclaimed; want 0, 1", expired, unclaimed)
	}
	if st := b.Stats(); st.Held != 0 {
		t.Fatalf("budget after dropping the unclaimed witness: %+v", st)
	}
	// A device phase that comes for it after all is late, not failed: a
	// host loss, not a loss of the partition's own retries.
	_, err := env.ExecuteActivity(h.DevicePhase, job.HandleInput{Witness: lost.Witness})
	var ae *temporal.ApplicationError
	if !errors.As(err, &ae) || ae.Type() != job.ErrHostLost || !strings.Contains(err.Error(), "unclaimed") {
		t.Fatalf("device phase of the dropped witness: %v, want a %s error", err, job.ErrHostLost)
	}
	if w := h.ws.take(claimed.Witness.Handle, time.Time{}); w == nil || w.proving == nil {
		t.Fatal("the claimed witness was dropped with the unclaimed one")
	}
}

// A finalize whose completion was lost is retried: the retry answers with
// the proof the first attempt made (verified then) instead of failing the
// partition with a lost witness, and a release still drops it.
func TestFinalizeRetryReplaysItsProof(t *testing.T) {
	h, b, env := newFakeHost(t, 1)
	v, err := env.ExecuteActivity(h.Synthesize, job.SynthInput{Partition: 0, ClaimWithin: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	var so job.SynthOutput
	if err := v.Get(&so); err != nil {
		t.Fatal(err)
	}
	in := job.HandleInput{Witness: so.Witness}
	if _, err := env.ExecuteActivity(h.DevicePhase, in); err != nil {
		t.Fatal(err)
	}
	finalize := func() []byte {
		t.Helper()
		v, err := env.ExecuteActivity(h.Finalize, in)
		if err != nil {
			t.Fatal(err)
		}
		var fo job.FinalizeOutput
		if err := v.Get(&fo); err != nil {
			t.Fatal(err)
		}
		return fo.Proof
	}
	first, again := finalize(), finalize()
	if !bytes.Equal(first, again) {
		t.Fatal("the retried finalize made a new proof instead of returning the first")
	}
	if st := h.Stats(); st.Finalized != 1 || st.Replayed != 1 {
		t.Fatalf("stats %+v: want 1 finalized, 1 replayed", st)
	}
	if n := h.Witnesses(); n != 0 {
		t.Fatalf("%d witnesses to drain: a kept proof is a finished partition", n)
	}
	// Past the witness TTL but within its keep: kept, and not an expiry.
	h.ws.mu.Lock()
	for _, w := range h.ws.m {
		w.created = time.Now().Add(-time.Hour)
	}
	h.ws.mu.Unlock()
	if expired, unclaimed := h.ws.expire(time.Minute); expired != 0 || unclaimed != 0 || len(h.ws.m) != 1 {
		t.Fatalf("a kept proof past the TTL: %d expired, %d unclaimed, %d left", expired, unclaimed, len(h.ws.m))
	}
	if _, err := env.ExecuteActivity(h.Release, in); err != nil {
		t.Fatal(err)
	}
	if _, err := env.ExecuteActivity(h.Finalize, in); err == nil {
		t.Fatal("finalize after the release found its proof")
	}
	if len(h.ws.m) != 0 || b.Stats().Held != 0 {
		t.Fatalf("left after the release: %d witnesses, budget %+v", len(h.ws.m), b.Stats())
	}
}

// faultyPhases fails the quotient on its device "cpu/0", as a GPU with an
// ECC error fails its NTTs.
type faultyPhases struct{ fakePhases }

func (f faultyPhases) Quotient(ctx context.Context, s Solution, dev gpu.Held) (Quotient, error) {
	if dev.Name() == "cpu/0" {
		return nil, gpu.Faulted(dev, errors.New("NTT failed"))
	}
	return f.fakePhases.Quotient(ctx, s, dev)
}

// The host acquires the device for the device phase: a device that
// faults is quarantined there, the partition's witness is dropped (its
// workflow synthesizes again) and its budget given back, and the next
// partition proves on the healthy device. A host whose every device is
// quarantined takes no more synthesis.
func TestHostQuarantinesAFaultyDevice(t *testing.T) {
	b, err := NewBudget(2)
	if err != nil {
		t.Fatal(err)
	}
	slots := gpu.NewSlots(&gpu.CPU{ID: 0}, &gpu.CPU{ID: 1})
	h := NewHost("h", faultyPhases{}, slots, b, slog.New(slog.DiscardHandler))
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestActivityEnvironment()
	env.RegisterActivity(h.Synthesize)
	env.RegisterActivity(h.DevicePhase)
	device := func(k int) (job.DeviceOutput, error) {
		t.Helper()
		v, err := env.ExecuteActivity(h.Synthesize, job.SynthInput{Partition: k})
		if err != nil {
			t.Fatal(err)
		}
		var so job.SynthOutput
		if err := v.Get(&so); err != nil {
			t.Fatal(err)
		}
		v, err = env.ExecuteActivity(h.DevicePhase, job.HandleInput{Witness: so.Witness, Partition: k})
		var out job.DeviceOutput
		if err == nil {
			err = v.Get(&out)
		}
		return out, err
	}
	if _, err := device(0); err == nil || !strings.Contains(err.Error(), "NTT failed") {
		t.Fatalf("the device phase on the faulty device: %v", err)
	}
	if q := slots.Quarantined(); len(q) != 1 || q["cpu/0"] == "" {
		t.Fatalf("quarantined %v", q)
	}
	// (Running is the slot supplier's count, which this environment has
	// not: the held witnesses are the budget's part here.)
	if st := b.Stats(); st.Held != 0 || h.Witnesses() != 0 {
		t.Fatalf("after the fault: budget %+v, %d witnesses", st, h.Witnesses())
	}
	out, err := device(1)
	if err != nil || out.Device != "cpu/1" {
		t.Fatalf("the next partition: %+v, %v", out, err)
	}
	// The last device too (a fault of its own, through the one way to a
	// device): the host stops taking synthesis.
	if _, err := slots.Run(context.Background(), gpu.Order{}, func(dev gpu.Held) error {
		return gpu.Faulted(dev, errors.New("lost"))
	}); err == nil || slots.Healthy() != 0 {
		t.Fatalf("the last device's fault: %v, %d healthy", err, slots.Healthy())
	}
	if _, err := device(2); err == nil {
		t.Fatal("a device phase with every device quarantined succeeded")
	}
	b.mu.Lock()
	frozen := b.frozen
	b.mu.Unlock()
	if !frozen {
		t.Error("a host without devices still admits synthesis")
	}
}

// A priority-1 partition's finalize never waits behind lower priorities'
// for the host's CPU finalize slots: with every slot taken it finalizes at
// once, and leaves the slots as they were.
func TestUrgentFinalizeTakesNoSlot(t *testing.T) {
	h, _, env := newFakeHost(t, 2)
	h.SetFinalizeSlots(1)
	if err := h.finalizeSlots.acquire(context.Background(), 3); err != nil { // a PoRep finalize running
		t.Fatal(err)
	}
	so := synthesize(t, env, h.Synthesize, job.SynthInput{Partition: 0})
	if _, err := env.ExecuteActivity(h.DevicePhase, job.HandleInput{Witness: so.Witness, Order: job.DeviceOrder{Priority: 1}}); err != nil {
		t.Fatal(err)
	}
	notBlocked(t, "a priority-1 finalize", func() error {
		_, err := env.ExecuteActivity(h.Finalize, job.HandleInput{Witness: so.Witness})
		return err
	})
	if n := h.finalizeSlots.free; n != 0 {
		t.Fatalf("%d finalize slots free after it, want the PoRep's still taken", n)
	}
}

// Nor does its C1 validation wait for the validation slots a batch of
// PoRep sectors holds.
func TestUrgentValidationTakesNoSlot(t *testing.T) {
	h, _, env := newFakeHost(t, 1)
	env.RegisterActivity(h.ValidateC1)
	for h.validateSlots.free > 0 {
		if err := h.validateSlots.acquire(context.Background(), 3); err != nil {
			t.Fatal(err)
		}
	}
	notBlocked(t, "a priority-1 validation", func() error {
		_, err := env.ExecuteActivity(h.ValidateC1, job.SectorInput{Order: job.DeviceOrder{Priority: 1}})
		return err
	})
}

// notBlocked runs f and fails if it errs or is still blocked after 30 s
// (a hang guard: what it waits for never comes).
func notBlocked(t *testing.T, what string, f func() error) {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- f() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("%s waited for the taken slots", what)
	}
}

// waitUntil polls cond until it holds or within passes.
func waitUntil(t *testing.T, within time.Duration, what string, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(within); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("not within %v: %s", within, what)
		}
	}
}

// assertDeadlinePassed fails unless err is a DeadlinePassed refusal.
func assertDeadlinePassed(t *testing.T, what string, err error) {
	t.Helper()
	var ae *temporal.ApplicationError
	if !errors.As(err, &ae) || ae.Type() != job.ErrDeadlinePassed || ae.NonRetryable() != true {
		t.Fatalf("%s: %v, want a non-retryable %s error", what, err, job.ErrDeadlinePassed)
	}
}

// A WinningPoSt whose deadline passes between its synthesis and its device
// phase (its call gave up, its workflow timed out): the host drops the
// witness at the deadline itself, giving its reserve back at once rather
// than a minute later as unclaimed, and a device phase that still comes
// is refused by name.
func TestWitnessDroppedAtItsDeadline(t *testing.T) {
	h, b, env := newFakeHost(t, 2)
	deadline := time.Now().Add(300 * time.Millisecond)
	so := synthesize(t, env, h.Synthesize, job.SynthInput{Partition: 0, ClaimWithin: 10 * time.Second, Deadline: deadline})
	kept := synthesize(t, env, h.Synthesize, job.SynthInput{Partition: 1, ClaimWithin: 10 * time.Second})
	if n := h.Witnesses(); n != 2 {
		t.Fatalf("%d witnesses held before the deadline, want 2", n)
	}
	// Well within the sweep's claim deadline (claimDeadline(10s) = 50 s).
	waitUntil(t, 2*time.Second, "the lapsed witness dropped", func() bool { return h.Witnesses() == 1 })
	if st := b.Stats(); st.Held != 1 {
		t.Fatalf("budget after the deadline: %+v, want only the other job's witness held", st)
	}
	if st := h.Stats(); st.Lapsed != 1 || st.Unclaimed != 0 {
		t.Fatalf("stats %+v: want 1 lapsed witness", st)
	}
	_, err := env.ExecuteActivity(h.DevicePhase, job.HandleInput{Witness: so.Witness, Deadline: deadline})
	assertDeadlinePassed(t, "device phase past the deadline", err)
	if _, err := env.ExecuteActivity(h.DevicePhase, job.HandleInput{Witness: kept.Witness, Partition: 1}); err != nil {
		t.Fatalf("the other job's device phase: %v", err)
	}
	if st := h.Stats(); st.Lapsed != 1 {
		t.Fatalf("stats %+v: the lapsed witness was counted twice", st)
	}
}

// slowPhases synthesize for d, deaf to cancellation, as an MSM-bound
// synthesis is.
type slowPhases struct {
	fakePhases
	d time.Duration
}

func (p slowPhases) Synthesize(_ context.Context, _ job.Ref, k int) (Solution, error) {
	time.Sleep(p.d)
	return fakeSolved{k}, nil
}

// A synthesis that completes after its job's deadline stores nothing: it
// is refused by name and the budget is back at once. Nor does a phase
// start past the deadline.
func TestSynthesisPastItsDeadlineStoresNothing(t *testing.T) {
	h, b, env := newFakeHost(t, 2)
	h.Phases = slowPhases{d: 400 * time.Millisecond}
	deadline := time.Now().Add(100 * time.Millisecond)
	_, err := env.ExecuteActivity(h.Synthesize, job.SynthInput{Partition: 0, Deadline: deadline})
	assertDeadlinePassed(t, "synthesis finishing past its deadline", err)
	if n := h.Witnesses(); n != 0 {
		t.Fatalf("%d witnesses stored past the deadline", n)
	}
	if st := b.Stats(); st.Running != 0 || st.Held != 0 {
		t.Fatalf("budget after a lapsed synthesis: %+v", st)
	}
	time.Sleep(400 * time.Millisecond) // the abandoned synthesis returns
	if n := h.Witnesses(); n != 0 {
		t.Fatalf("%d witnesses stored once the abandoned synthesis returned", n)
	}
	env.RegisterActivity(h.ValidateC1)
	for _, c := range []struct {
		name  string
		f, in any
	}{{"validate", h.ValidateC1, job.SectorInput{Deadline: deadline}}, {"synthesize", h.Synthesize, job.SynthInput{Deadline: deadline}},
		{"finalize", h.Finalize, job.HandleInput{Deadline: deadline}}} {
		_, err := env.ExecuteActivity(c.f, c.in)
		assertDeadlinePassed(t, c.name+" started past its deadline", err)
	}
}

// A synthesis counts as retried (HostStats.Retried) only beside a witness
// an earlier attempt of the same activity made and still holds: a second
// activity for the same partition (a resubmission) is not a retry, and an
// attempt given up before it synthesized made nothing to count.
func TestRetriedCountsOnlyASupersededWitness(t *testing.T) {
	h, _, env := newFakeHost(t, 4)
	synthesize(t, env, h.Synthesize, job.SynthInput{Partition: 0})
	synthesize(t, env, h.Synthesize, job.SynthInput{Partition: 0})
	if st := h.Stats(); st.Syntheses != 2 || st.Retried != 0 {
		t.Fatalf("two activities for one partition: %+v, want 2 syntheses, none retried", st)
	}
	ws := h.ws
	ws.put(&witness{made: "run/7"})
	if !ws.heldFrom("run/7") || ws.heldFrom("run/8") || ws.heldFrom("") {
		t.Error("heldFrom does not find exactly the activity's witness")
	}
	if (&witness{}).made != "" || ws.heldFrom(synthesisOf(context.Background())) {
		t.Error("outside an activity, a synthesis is no activity's")
	}
}

// Priority 1 is the urgent kinds' alone below the gateway too: a batch
// started on Temporal directly at priority 1 for a PoRep (or a PoSt of a
// window) is refused at validation, non-retryable and named, before any
// work; a WinningPoSt, and a proof of no kind (the test scheme's), pass
// to their validation.
func TestPriorityOneRefusedForNonUrgentKinds(t *testing.T) {
	h, _, env := newFakeHost(t, 1)
	pp := &ProverPhases{Schemes: registry.Schemes(registry.Options{})}
	h.Phases = urgentFake{fakePhases{}, pp}
	env.RegisterActivity(h.ValidateC1)
	for _, c := range []struct {
		proof  string
		refuse bool
	}{
		{"StackedDrg2KiBV1_1", true},
		{"StackedDrgWindow2KiBV1_2", true},
		{"StackedDrgWinning2KiBV1", false},
		{"test-2k", false},
	} {
		_, err := env.ExecuteActivity(h.ValidateC1, job.SectorInput{Ref: job.Ref{Proof: c.proof}, Order: job.DeviceOrder{Priority: job.PriorityUrgent}})
		var ae *temporal.ApplicationError
		refused := errors.As(err, &ae) && ae.Type() == job.ErrBadPriority && ae.NonRetryable()
		if refused != c.refuse {
			t.Errorf("%s at priority 1: %v, want refused %v", c.proof, err, c.refuse)
		}
		if _, err := env.ExecuteActivity(h.ValidateC1, job.SectorInput{Ref: job.Ref{Proof: c.proof}, Order: job.DeviceOrder{Priority: 3}}); err != nil {
			t.Errorf("%s at priority 3: %v", c.proof, err)
		}
	}
}

// urgentFake is fakePhases with ProverPhases' policy of urgent proofs.
type urgentFake struct {
	fakePhases
	pp *ProverPhases
}

func (u urgentFake) UrgentProof(proof string) (bool, bool) { return u.pp.UrgentProof(proof) }

// A host whose clock runs 30 s ahead of Temporal's takes a phase whose
// deadline (Temporal's time) is 10 s away, though its own clock says it
// passed 20 s ago (issue 55: it refused it, non-retryably, where another
// host would have proved it in time); a deadline 10 s past by Temporal's
// clock is still refused. Offsets within 5 s are the poll's latency as
// much as the clock's and move nothing.
func TestDeadlineOnTemporalsClock(t *testing.T) {
	h, _, env := newFakeHost(t, 1)
	env.RegisterActivity(h.ValidateC1)
	h.ClockOffset = func(context.Context) time.Duration { return 30 * time.Second }
	validate := func(deadline time.Time) error {
		_, err := env.ExecuteActivity(h.ValidateC1, job.SectorInput{Ref: job.Ref{Proof: "test-2k"}, Deadline: deadline})
		return err
	}
	if err := validate(time.Now().Add(-20 * time.Second)); err != nil {
		t.Errorf("a deadline 10 s away by Temporal's clock, on a host 30 s fast: %v", err)
	}
	var ae *temporal.ApplicationError
	if err := validate(time.Now().Add(20 * time.Second)); err != nil {
		t.Errorf("a deadline 50 s away: %v", err)
	}
	if err := validate(time.Now().Add(-40 * time.Second)); !errors.As(err, &ae) || ae.Type() != job.ErrDeadlinePassed {
		t.Errorf("a deadline 10 s past by Temporal's clock: %v, want DeadlinePassed", err)
	}
	if got := h.hostDeadline(t.Context(), time.Time{}); !got.IsZero() {
		t.Errorf("no deadline became %v", got)
	}
	h.ClockOffset = func(context.Context) time.Duration { return 4 * time.Second }
	d := time.Now()
	if got := h.hostDeadline(t.Context(), d); !got.Equal(d) {
		t.Errorf("an offset of 4 s moved the deadline by %v", got.Sub(d))
	}
}

// A phase that takes a witness with a later deadline than the one it was
// synthesized under (a caller joined its job with one) moves the
// witness's lapse: it is not dropped at the first caller's deadline.
func TestWitnessTakesALaterDeadline(t *testing.T) {
	for _, c := range []struct {
		name  string
		later time.Time
		kept  bool
	}{
		{"later", time.Now().Add(time.Hour), true},
		{"none", time.Time{}, true},
		{"earlier", time.Now().Add(10 * time.Millisecond), false},
	} {
		b, err := NewBudget(1)
		if err != nil {
			t.Fatal(err)
		}
		b.Hold(1, 0)
		ws := &witnesses{m: map[string]*witness{}, budget: b, log: slog.Default()}
		h := ws.put(&witness{deadline: time.Now().Add(100 * time.Millisecond)})
		w := ws.take(h, c.later)
		if w == nil {
			t.Fatalf("%s: the witness was not taken", c.name)
		}
		ws.give(w)
		time.Sleep(300 * time.Millisecond)
		ws.mu.Lock()
		_, kept := ws.m[h]
		ws.mu.Unlock()
		if kept != c.kept {
			t.Errorf("%s deadline: witness kept past the first deadline = %v, want %v", c.name, kept, c.kept)
		}
	}
}

// urgentFirstPhases is fakePhases whose syntheses say when they start;
// partition 1's (the urgent one's) runs until go is closed.
type urgentFirstPhases struct {
	fakePhases
	urgentIn, urgentGo chan struct{}
	ordinary           atomic.Bool // partition 0's synthesis started
}

func (p *urgentFirstPhases) Synthesize(_ context.Context, _ job.Ref, k int) (Solution, error) {
	if k == 1 {
		close(p.urgentIn)
		<-p.urgentGo
	} else {
		p.ordinary.Store(true)
	}
	return fakeSolved{k}, nil
}

// While a priority-1 synthesis runs on a host, an ordinary one waits at its
// checkpoint, holding nothing the urgent one needs, and runs once the
// urgent work is done and the gate's linger has passed; nothing is lost.
func TestOrdinaryWorkYieldsToUrgent(t *testing.T) {
	h, _, env := newFakeHost(t, 2)
	p := &urgentFirstPhases{urgentIn: make(chan struct{}), urgentGo: make(chan struct{})}
	h.Phases = p
	h.Gate = yield.New(50*time.Millisecond, time.Minute)
	env.RegisterActivity(h.SynthesizeUrgent)
	var suite testsuite.WorkflowTestSuite
	env2 := suite.NewTestActivityEnvironment()
	env2.RegisterActivity(h.Synthesize)

	urgent := make(chan job.SynthOutput, 1)
	go func() { urgent <- synthesize(t, env, h.SynthesizeUrgent, job.SynthInput{Partition: 1}) }()
	<-p.urgentIn
	ordinary := make(chan job.SynthOutput, 1)
	go func() { ordinary <- synthesize(t, env2, h.Synthesize, job.SynthInput{Partition: 0}) }()
	time.Sleep(300 * time.Millisecond)
	if p.ordinary.Load() {
		t.Fatal("an ordinary synthesis started while a priority-1 one ran")
	}
	close(p.urgentGo)
	<-urgent
	select {
	case out := <-ordinary:
		if out.Witness.Handle == "" {
			t.Fatalf("the ordinary synthesis: %+v", out)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the ordinary synthesis still waits after the urgent one ended")
	}
	if st := h.Gate.Stats(); st.Yields != 1 || st.YieldedMS < 300 {
		t.Errorf("gate stats %+v: one checkpoint waited through the urgent synthesis", st)
	}
}
