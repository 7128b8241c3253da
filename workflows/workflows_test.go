package workflows_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/c2flow/c2flow/job"
	"github.com/c2flow/c2flow/workflows"
)

// fakes are activity implementations whose behaviour a test sets; they
// count calls by name.
type fakes struct {
	mu         sync.Mutex
	calls      map[string]int
	partitions int
	validate   error
	// validateFail returns an error for the n-th validation of a sector.
	validateFail func(ref job.Ref, n int) error
	validations  map[uint64]int
	// deviceFail returns an error for the n-th device phase of a partition.
	deviceFail func(k, n int) error
	devCount   map[int]int
	handles    map[string]int
	stored     *job.StoreInput
	// onDevice, if set, runs in every device phase, which then waits for
	// its cancellation.
	onDevice func()
	// lookup, if set, answers LookupC2 (default: nothing stored).
	lookup func(job.Ref) job.LookupOutput
	// synthFail returns an error for the n-th synthesis of a partition.
	synthFail  func(k, n int) error
	synthCount map[int]int
	// synthQueues counts the task queues syntheses were scheduled on.
	synthQueues map[string]int
	// synthAt is when each synthesis started, on the workflow clock.
	synthAt []time.Time
	clock   func() time.Time
	// synthIn is the last synthesis's input.
	synthIn job.SynthInput
	// finalizeFail returns an error for the n-th finalize (from 1).
	finalizeFail func(n int) error
}

func newFakes(partitions int) *fakes {
	return &fakes{calls: map[string]int{}, validations: map[uint64]int{}, partitions: partitions, devCount: map[int]int{}, handles: map[string]int{}, synthCount: map[int]int{}, synthQueues: map[string]int{}}
}

func (f *fakes) count(name string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[name]
}

func (f *fakes) register(env interface {
	RegisterActivityWithOptions(a interface{}, options activity.RegisterOptions)
}) {
	inc := func(n string) { f.mu.Lock(); f.calls[n]++; f.mu.Unlock() }
	env.RegisterActivityWithOptions(func(ctx context.Context, in job.SectorInput) (job.ValidateOutput, error) {
		inc(job.ActValidateC1)
		f.mu.Lock()
		f.validations[in.Ref.SectorID]++
		n := f.validations[in.Ref.SectorID]
		f.mu.Unlock()
		if f.validateFail != nil {
			if err := f.validateFail(in.Ref, n); err != nil {
				return job.ValidateOutput{}, err
			}
		}
		if f.validate != nil {
			return job.ValidateOutput{}, f.validate
		}
		return job.ValidateOutput{Proof: "2KiB", Partitions: f.partitions}, nil
	}, activity.RegisterOptions{Name: job.ActValidateC1})
	env.RegisterActivityWithOptions(func(ctx context.Context, in job.SynthInput) (job.SynthOutput, error) {
		inc(job.ActSynthesize)
		f.mu.Lock()
		f.synthCount[in.Partition]++
		f.synthQueues[activity.GetInfo(ctx).TaskQueue]++
		if f.clock != nil {
			f.synthAt = append(f.synthAt, f.clock())
		}
		f.synthIn = in
		n := f.synthCount[in.Partition]
		f.mu.Unlock()
		if f.synthFail != nil {
			if err := f.synthFail(in.Partition, n); err != nil {
				return job.SynthOutput{}, err
			}
		}
		f.mu.Lock()
		h := "h" + string(rune('a'+len(f.handles)))
		f.handles[h] = in.Partition
		f.mu.Unlock()
		return job.SynthOutput{Witness: job.WitnessLocation{Host: "host1", DeviceQueue: "dq", FinalizeQueue: "fq", ControlQueue: "cq", Handle: h}, SynthMS: 5}, nil
	}, activity.RegisterOptions{Name: job.ActSynthesize})
	env.RegisterActivityWithOptions(func(ctx context.Context, in job.HandleInput) (job.DeviceOutput, error) {
		inc(job.ActDevicePhase)
		f.mu.Lock()
		k := f.handles[in.Witness.Handle]
		f.devCount[k]++
		n := f.devCount[k]
		f.mu.Unlock()
		if f.onDevice != nil {
			f.onDevice()
			<-ctx.Done()
			return job.DeviceOutput{}, ctx.Err()
		}
		if f.deviceFail != nil {
			if err := f.deviceFail(k, n); err != nil {
				return job.DeviceOutput{}, err
			}
		}
		return job.DeviceOutput{Device: "cpu/0", DeviceMS: 7}, nil
	}, activity.RegisterOptions{Name: job.ActDevicePhase})
	env.RegisterActivityWithOptions(func(ctx context.Context, in job.HandleInput) (job.FinalizeOutput, error) {
		inc(job.ActFinalize)
		if f.finalizeFail != nil {
			if err := f.finalizeFail(f.count(job.ActFinalize)); err != nil {
				return job.FinalizeOutput{}, err
			}
		}
		return job.FinalizeOutput{Proof: []byte(in.Witness.Handle), FinalizeMS: 3}, nil
	}, activity.RegisterOptions{Name: job.ActFinalize})
	env.RegisterActivityWithOptions(func(ctx context.Context, in job.StoreInput) (job.StoreOutput, error) {
		inc(job.ActStoreC2)
		f.mu.Lock()
		f.stored = &in
		f.mu.Unlock()
		return job.StoreOutput{C2Key: "c2/1.proof", Created: true}, nil
	}, activity.RegisterOptions{Name: job.ActStoreC2})
	env.RegisterActivityWithOptions(func(ctx context.Context, in job.HandleInput) error {
		inc(job.ActRelease)
		return nil
	}, activity.RegisterOptions{Name: job.ActRelease})
	env.RegisterActivityWithOptions(func(ctx context.Context, ref job.Ref) error {
		inc(job.ActDropInput)
		return nil
	}, activity.RegisterOptions{Name: job.ActDropInput})
	env.RegisterActivityWithOptions(func(ctx context.Context, ref job.Ref) (job.LookupOutput, error) {
		inc(job.ActLookupC2)
		if f.lookup != nil {
			return f.lookup(ref), nil
		}
		return job.LookupOutput{}, nil
	}, activity.RegisterOptions{Name: job.ActLookupC2})
}

func sectorEnv(t *testing.T, f *fakes) *testsuite.TestWorkflowEnvironment {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	workflows.Register(env)
	f.register(env)
	f.clock = env.Now
	return env
}

var sector = job.SectorInput{Ref: job.Ref{ProverID: "aa", SectorID: 1, InputDigest: "d"}}

func TestSectorProvesEveryPartition(t *testing.T) {
	f := newFakes(4)
	env := sectorEnv(t, f)
	env.ExecuteWorkflow(job.SectorWorkflowName, sector)
	var res job.SectorResult
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	if res.Status != job.StatusProved || res.C2Key != "c2/1.proof" {
		t.Fatalf("result %+v", res)
	}
	if f.count(job.ActSynthesize) != 4 || f.count(job.ActFinalize) != 4 || f.count(job.ActStoreC2) != 1 {
		t.Fatalf("calls %v", f.calls)
	}
	if len(f.stored.Proofs) != 4 {
		t.Fatalf("stored %d proofs", len(f.stored.Proofs))
	}
	for k, p := range f.stored.Proofs { // in partition order
		if f.handles[string(p)] != k {
			t.Fatalf("proof %d came from partition %d", k, f.handles[string(p)])
		}
	}
}

// Priority 1's syntheses go to the urgent synthesis queue, which every
// synthesis host polls within a reserve of its own; the others (the
// default priority included) to the ordinary one.
func TestUrgentSynthesisQueue(t *testing.T) {
	for _, c := range []struct {
		priority int
		queue    string
	}{{1, job.QueueSynthUrgent}, {2, job.QueueSynth}, {0, job.QueueSynth}} {
		f := newFakes(2)
		env := sectorEnv(t, f)
		in := sector
		in.Order.Priority = c.priority
		env.ExecuteWorkflow(job.SectorWorkflowName, in)
		if err := env.GetWorkflowError(); err != nil {
			t.Fatal(err)
		}
		if f.synthQueues[c.queue] != 2 || len(f.synthQueues) != 1 {
			t.Fatalf("priority %d: syntheses on %v, want both on %s", c.priority, f.synthQueues, c.queue)
		}
	}
}

func TestBadC1FailsWithoutSynthesis(t *testing.T) {
	f := newFakes(4)
	f.validate = temporal.NewNonRetryableApplicationError("bad C1: comm_d: wrong length", job.ErrBadC1, nil)
	env := sectorEnv(t, f)
	env.ExecuteWorkflow(job.SectorWorkflowName, sector)
	err := env.GetWorkflowError()
	var ae *temporal.ApplicationError
	if !errors.As(err, &ae) || ae.Type() != job.ErrBadC1 {
		t.Fatalf("got %v, want a BadC1 application error", err)
	}
	if f.count(job.ActValidateC1) != 1 {
		t.Fatalf("a non-retryable error was retried: %d validations", f.count(job.ActValidateC1))
	}
	if f.count(job.ActSynthesize) != 0 || f.count(job.ActStoreC2) != 0 {
		t.Fatalf("work done for a bad C1: %v", f.calls)
	}
}

func TestLostWitnessIsResynthesizedAlone(t *testing.T) {
	f := newFakes(3)
	f.deviceFail = func(k, n int) error {
		if k == 1 && n == 1 {
			return temporal.NewNonRetryableApplicationError("witness gone", job.ErrWitnessLost, nil)
		}
		return nil
	}
	env := sectorEnv(t, f)
	env.ExecuteWorkflow(job.SectorWorkflowName, sector)
	var res job.SectorResult
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	if got := f.count(job.ActSynthesize); got != 4 {
		t.Fatalf("%d syntheses, want 3 + 1 redo", got)
	}
	if got := f.count(job.ActRelease); got != 1 {
		t.Fatalf("%d releases, want 1 for the lost witness", got)
	}
	for _, p := range res.Partitions {
		want := 1
		if p.Partition == 1 {
			want = 2
		}
		if p.Syntheses != want {
			t.Fatalf("partition %d synthesized %d times, want %d", p.Partition, p.Syntheses, want)
		}
	}
}

func TestPartitionRetriesExhausted(t *testing.T) {
	f := newFakes(2)
	f.deviceFail = func(k, n int) error {
		if k == 0 {
			return temporal.NewNonRetryableApplicationError("device error", job.ErrWitnessLost, nil)
		}
		return nil
	}
	env := sectorEnv(t, f)
	in := sector
	in.PartitionRetries = 2
	env.ExecuteWorkflow(job.SectorWorkflowName, in)
	if err := env.GetWorkflowError(); err == nil {
		t.Fatal("sector succeeded with a partition that always fails")
	}
	if f.count(job.ActStoreC2) != 0 {
		t.Fatal("a failed sector stored a C2")
	}
	if f.devCount[0] != 2 {
		t.Fatalf("partition 0 device phases: %d, want 2", f.devCount[0])
	}
}

func TestBatchCancel(t *testing.T) {
	f := newFakes(2)
	env := sectorEnv(t, f)
	// The cancel comes once a device phase runs, on the environment's
	// clock: no wall-clock sleep for a loaded machine to outrun.
	var once sync.Once
	f.onDevice = func() {
		once.Do(func() {
			env.RegisterDelayedCallback(func() { env.SignalWorkflow(job.SignalCancel, nil) }, 100*time.Millisecond)
		})
	}
	env.ExecuteWorkflow(job.BatchWorkflowName, job.BatchInput{BatchID: "b", MaxInFlight: 1, Sectors: []job.Ref{
		{ProverID: "aa", SectorID: 1, InputDigest: "d"}, {ProverID: "aa", SectorID: 2, InputDigest: "d"}}})
	var res job.BatchResult
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	if len(res.Sectors) != 2 {
		t.Fatalf("results %+v", res.Sectors)
	}
	for _, s := range res.Sectors {
		if s.Status != job.StatusCanceled {
			t.Fatalf("sector %d: %s, want canceled", s.SectorID, s.Status)
		}
	}
	if f.count(job.ActStoreC2) != 0 {
		t.Fatal("a canceled batch stored a C2")
	}
}

func TestBatchProvesAllAndReportsProgress(t *testing.T) {
	f := newFakes(2)
	env := sectorEnv(t, f)
	var sectors []job.Ref
	for i := uint64(1); i <= 5; i++ {
		sectors = append(sectors, job.Ref{ProverID: "aa", SectorID: i, InputDigest: "d"})
	}
	env.ExecuteWorkflow(job.BatchWorkflowName, job.BatchInput{BatchID: "b", MaxInFlight: 2, ContinueAfter: 100, Sectors: sectors})
	var res job.BatchResult
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	if len(res.Sectors) != 5 {
		t.Fatalf("got %d results", len(res.Sectors))
	}
	for _, s := range res.Sectors {
		if s.Status != job.StatusProved || len(s.Partitions) != 2 {
			t.Fatalf("sector %d: %s %s, %d partition results", s.SectorID, s.Status, s.Error, len(s.Partitions))
		}
	}
	v, err := env.QueryWorkflow(job.QueryProgress)
	if err != nil {
		t.Fatal(err)
	}
	var p job.BatchProgress
	if err := v.Get(&p); err != nil {
		t.Fatal(err)
	}
	if p.Total != 5 || len(p.Sectors) != 5 || p.Sectors[0].Status != job.StatusProved {
		t.Fatalf("progress %+v", p)
	}
}

// A batch past FullResultsMax keeps per-sector summaries only, across
// continue-as-new, so a 1,000-sector result stays far below Temporal's
// 2 MB payload limit (with every partition's detail it did not: the final
// workflow task failed with PayloadsTooLarge and the batch wedged).
func TestLargeBatchResultStaysSmall(t *testing.T) {
	f := newFakes(10)
	env := sectorEnv(t, f)
	n := job.FullResultsMax + 1
	var sectors []job.Ref
	for i := 1; i <= n; i++ {
		sectors = append(sectors, job.Ref{ProverID: "aa", SectorID: uint64(i), InputDigest: "d"})
	}
	env.ExecuteWorkflow(job.BatchWorkflowName, job.BatchInput{BatchID: "big", MaxInFlight: 16, ContinueAfter: 60, Sectors: sectors})
	var res job.BatchResult
	err := env.GetWorkflowResult(&res)
	var can *workflow.ContinueAsNewError
	if !errors.As(err, &can) {
		t.Fatalf("no continue-as-new after 60 of %d sectors: %v", n, err)
	}
	{
		// The test environment stops at continue-as-new: run the next leg.
		env2 := sectorEnv(t, f)
		var in job.BatchInput
		if err := converter.GetDefaultDataConverter().FromPayloads(can.Input, &in); err != nil {
			t.Fatal(err)
		}
		if len(in.Done) != 60 || in.Done[0].NumPartitions != 10 || in.Done[0].Partitions != nil {
			t.Fatalf("carried %d results, first %+v", len(in.Done), in.Done[0])
		}
		env2.ExecuteWorkflow(job.BatchWorkflowName, in)
		err = env2.GetWorkflowResult(&res)
	}
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Sectors) != n {
		t.Fatalf("%d results of %d", len(res.Sectors), n)
	}
	for _, s := range res.Sectors {
		if s.Status != job.StatusProved || s.Partitions != nil || s.NumPartitions != 10 {
			t.Fatalf("sector %d: %s, %d partition results, num %d", s.SectorID, s.Status, len(s.Partitions), s.NumPartitions)
		}
	}
	b, _ := json.Marshal(res)
	if per := len(b) / n; per*1000 > 1<<20 {
		t.Fatalf("%d bytes per sector: a 1,000-sector result would be %d bytes", per, per*1000)
	}
}

// A cancel received while the run's last sector is being looked up is
// applied before the run would continue as new: nothing more starts, and
// the batch ends canceled instead of continuing.
func TestBatchCancelBeforeContinueAsNew(t *testing.T) {
	f := newFakes(1)
	env := sectorEnv(t, f)
	f.lookup = func(ref job.Ref) job.LookupOutput {
		if ref.SectorID == 1 {
			// The test environment runs its callbacks in the order they
			// were posted: this signal's, then the lookup's result, as a
			// server orders the signal's event before the completion's.
			env.SignalWorkflow(job.SignalCancel, nil)
			return job.LookupOutput{Found: true, Valid: true, C2Key: "c2/x"}
		}
		return job.LookupOutput{}
	}
	env.ExecuteWorkflow(job.BatchWorkflowName, job.BatchInput{BatchID: "b", MaxInFlight: 1, ContinueAfter: 1,
		Sectors: []job.Ref{{ProverID: "aa", SectorID: 1, InputDigest: "d"}, {ProverID: "aa", SectorID: 3, InputDigest: "d"}}})
	var res job.BatchResult
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatalf("batch did not end canceled: %v", err)
	}
	if len(res.Sectors) != 2 || res.Sectors[1].Status != job.StatusCanceled {
		t.Fatalf("results %+v", res.Sectors)
	}
	if n := f.count(job.ActLookupC2); n != 1 {
		t.Fatalf("%d lookups, want 1: a sector started after the cancel", n)
	}
}

// A batch continued as new after a cancel starts nothing.
func TestBatchCanceledAcrossContinueAsNew(t *testing.T) {
	f := newFakes(1)
	env := sectorEnv(t, f)
	env.ExecuteWorkflow(job.BatchWorkflowName, job.BatchInput{BatchID: "b", Canceled: true,
		Sectors: []job.Ref{{ProverID: "aa", SectorID: 5, InputDigest: "d"}}})
	var res job.BatchResult
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	if f.count(job.ActValidateC1) != 0 || len(res.Sectors) != 1 || res.Sectors[0].Status != job.StatusCanceled {
		t.Fatalf("canceled batch ran: %d validations, %+v", f.count(job.ActValidateC1), res.Sectors)
	}
}

// Syntheses lost with dead hosts (heartbeat or host-queue timeouts) do not
// use up a partition's retries; its own failures do, and both are
// reported.
func TestHostLossDoesNotUsePartitionRetries(t *testing.T) {
	f := newFakes(2)
	f.deviceFail = func(k, n int) error {
		switch {
		case k == 0 && n <= 3:
			return temporal.NewTimeoutError(enumspb.TIMEOUT_TYPE_HEARTBEAT, nil)
		case k == 0 && n == 4:
			return temporal.NewNonRetryableApplicationError("device phase canceled on host h", job.ErrHostLost, nil)
		case k == 0 && n == 5:
			return temporal.NewTimeoutError(enumspb.TIMEOUT_TYPE_SCHEDULE_TO_START, nil)
		case k == 0 && n == 6:
			return temporal.NewNonRetryableApplicationError("device error", job.ErrWitnessLost, nil)
		}
		return nil
	}
	env := sectorEnv(t, f)
	in := sector
	in.PartitionRetries = 2
	env.ExecuteWorkflow(job.SectorWorkflowName, in)
	var res job.SectorResult
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatalf("5 host losses and 1 failure failed the sector with 2 retries: %v", err)
	}
	p := res.Partitions[0]
	if p.Syntheses != 7 || p.HostLosses != 5 || p.Failures != 1 {
		t.Fatalf("partition 0: %d syntheses, %d host losses, %d failures; want 7, 5, 1", p.Syntheses, p.HostLosses, p.Failures)
	}
}

// Host losses are bounded apart, so a fleet that keeps dying still ends.
func TestHostLossesBounded(t *testing.T) {
	f := newFakes(1)
	f.synthFail = func(k, n int) error { return temporal.NewTimeoutError(enumspb.TIMEOUT_TYPE_HEARTBEAT, nil) }
	env := sectorEnv(t, f)
	in := sector
	in.HostLossRetries = 4
	env.ExecuteWorkflow(job.SectorWorkflowName, in)
	if err := env.GetWorkflowError(); err == nil {
		t.Fatal("a partition whose hosts always die succeeded")
	}
	// Each synthesis activity is tried 3 times by its retry policy; the
	// workflow synthesizes again 4 times: 5 x 3 attempts.
	if got := f.count(job.ActSynthesize); got != 15 {
		t.Fatalf("%d synthesis attempts, want 15", got)
	}
}

// A failed sector says what went wrong in one line, naming the sector,
// the partition, the phase and the activity's own message, without
// Temporal's event ids, identities and "retryable" flags, and without the
// cause repeated by every layer (it reached users as 2-4 KB lines).
func TestSectorFailureIsOneLine(t *testing.T) {
	f := newFakes(2)
	f.synthFail = func(k, n int) error {
		if k == 1 {
			return temporal.NewNonRetryableApplicationError("no proving keys for StackedDrg2KiBV1_1", job.ErrNoKeys, errors.New("open v28.params: no such file"))
		}
		return nil
	}
	env := sectorEnv(t, f)
	env.ExecuteWorkflow(job.SectorWorkflowName, sector)
	err := env.GetWorkflowError()
	var ae *temporal.ApplicationError
	if !errors.As(err, &ae) || ae.Type() != job.ErrNoKeys {
		t.Fatalf("got %v, want a NoKeys application error", err)
	}
	msg := ae.Message()
	for _, want := range []string{sector.Ref.String(), "partition 1", "synthesize", "no proving keys for StackedDrg2KiBV1_1", "open v28.params"} {
		if !strings.Contains(msg, want) {
			t.Errorf("the sector's error %q lacks %q", msg, want)
		}
	}
	for _, noise := range []string{"scheduledEventID", "identity", "retryable", "\n"} {
		if strings.Contains(msg, noise) {
			t.Errorf("the sector's error %q says %q", msg, noise)
		}
	}
	if strings.Count(msg, "no proving keys") != 1 {
		t.Errorf("the cause is repeated: %q", msg)
	}
}

// A WinningPoSt's prove worker killed in its device phase: Temporal times
// the phase out on its heartbeat (10 s), and the partition is synthesized
// again at once, not after the release sent to the dead host's control
// queue has timed out (30 s: the takeover took 41 s).
func TestDeadHostTakeoverWithinUrgentHeartbeat(t *testing.T) {
	f := newFakes(1)
	f.deviceFail = func(k, n int) error {
		if n == 1 {
			return temporal.NewTimeoutError(enumspb.TIMEOUT_TYPE_HEARTBEAT, nil)
		}
		return nil
	}
	env := sectorEnv(t, f)
	// Nobody polls the dead host's control queue: its release ends only
	// at its schedule-to-close timeout.
	env.OnActivity(job.ActRelease, mock.Anything, mock.Anything).After(30 * time.Second).Return(nil)
	in := sector
	in.Order.Priority = 1
	in.Timeouts = job.UrgentTimeouts()
	start := env.Now()
	env.ExecuteWorkflow(job.SectorWorkflowName, in)
	var res job.SectorResult
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	if len(f.synthAt) != 2 || res.Partitions[0].HostLosses != 1 {
		t.Fatalf("%d syntheses, %d host losses; want 2, 1", len(f.synthAt), res.Partitions[0].HostLosses)
	}
	if d := f.synthAt[1].Sub(start); d >= time.Second {
		t.Errorf("synthesized again %v after the device phase's heartbeat timeout, want at once", d)
	}
	if d := res.Finished.Sub(res.Started); d >= in.Timeouts.Heartbeat {
		t.Errorf("the sector ended %v after its host died, waiting for the dead host's release", d)
	}
}

// A sector whose deadline passes in its device phase (a WinningPoSt's
// call gave up) stops at once: the phase is canceled, the witness its
// host holds is released, nothing more runs or is stored, and the sector
// fails DeadlinePassed.
func TestSectorStopsAtItsDeadline(t *testing.T) {
	f := newFakes(1)
	env := sectorEnv(t, f)
	env.OnActivity(job.ActDevicePhase, mock.Anything, mock.Anything).After(time.Minute).Return(job.DeviceOutput{}, nil)
	var device job.HandleInput
	env.SetOnActivityStartedListener(func(info *activity.Info, _ context.Context, args converter.EncodedValues) {
		if info.ActivityType.Name == job.ActDevicePhase {
			args.Get(&device)
		}
	})
	in := sector
	in.Order.Priority = 1
	in.Timeouts = job.UrgentTimeouts()
	in.Deadline = env.Now().Add(5 * time.Second)
	env.ExecuteWorkflow(job.SectorWorkflowName, in)
	err := env.GetWorkflowError()
	var ae *temporal.ApplicationError
	if !errors.As(err, &ae) || ae.Type() != job.ErrDeadlinePassed {
		t.Fatalf("got %v, want a DeadlinePassed error", err)
	}
	if !f.synthIn.Deadline.Equal(in.Deadline) {
		t.Errorf("the synthesis's deadline is %v, want the sector's %v", f.synthIn.Deadline, in.Deadline)
	}
	if n := f.count(job.ActRelease); n != 1 {
		t.Errorf("%d releases, want 1: the witness of the canceled device phase", n)
	}
	if n := f.count(job.ActFinalize) + f.count(job.ActStoreC2); n != 0 || f.count(job.ActSynthesize) != 1 {
		t.Errorf("ran past the deadline: %v", f.calls)
	}
	if n := f.count(job.ActDropInput); n != 0 {
		t.Errorf("the lapsed job's input dropped %d times: a joiner with a later deadline proves it again from it", n)
	}
	if d := env.Now().Sub(in.Deadline); d < 0 || d >= time.Second {
		t.Errorf("the sector ended %v after its deadline, want at it", d)
	}
	if !device.Deadline.Equal(in.Deadline) {
		t.Errorf("the device phase's deadline is %v, want the sector's %v", device.Deadline, in.Deadline)
	}
}

// A sector started past its deadline runs nothing.
func TestSectorPastItsDeadlineRunsNothing(t *testing.T) {
	f := newFakes(1)
	env := sectorEnv(t, f)
	in := sector
	in.Deadline = env.Now().Add(-time.Second)
	env.ExecuteWorkflow(job.SectorWorkflowName, in)
	var ae *temporal.ApplicationError
	if err := env.GetWorkflowError(); !errors.As(err, &ae) || ae.Type() != job.ErrDeadlinePassed {
		t.Fatalf("got %v, want a DeadlinePassed error", err)
	}
	if len(f.calls) != 0 {
		t.Fatalf("ran past the deadline: %v, want nothing (its input kept for a joiner)", f.calls)
	}
}

// A caller joining a running batch with a later deadline is served: the
// batch and its sector in flight take the later deadline (an earlier one
// changes nothing), and the sector is proved past the first caller's
// deadline (issue 55, finding 5: the joiner was answered "deadline
// passed" at the first caller's).
func TestJoinerKeepsItsLaterDeadline(t *testing.T) {
	f := newFakes(1)
	env := sectorEnv(t, f)
	env.OnActivity(job.ActDevicePhase, mock.Anything, mock.Anything).After(time.Minute).Return(job.DeviceOutput{Device: "cpu/0"}, nil)
	start := env.Now()
	env.RegisterDelayedCallback(func() {
		env.SignalWorkflow(job.SignalDeadline, job.Deadline{At: start.Add(3 * time.Second)})
	}, time.Second)
	env.RegisterDelayedCallback(func() {
		env.SignalWorkflow(job.SignalDeadline, job.Deadline{At: start.Add(30 * time.Minute)})
	}, 4*time.Second)
	env.ExecuteWorkflow(job.BatchWorkflowName, job.BatchInput{BatchID: "b", Deadline: start.Add(5 * time.Second),
		Sectors: []job.Ref{{ProverID: "aa", SectorID: 1, InputDigest: "d"}}})
	var res job.BatchResult
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	if len(res.Sectors) != 1 || res.Sectors[0].Status != job.StatusProved {
		t.Fatalf("got %+v, want the sector proved under the joiner's deadline", res.Sectors)
	}
	if d := env.Now().Sub(start); d < time.Minute {
		t.Errorf("ended after %v, before the device phase's minute", d)
	}
	if n := f.count(job.ActStoreC2); n != 1 {
		t.Errorf("%d C2s stored, want 1", n)
	}
}

// A sector that lapsed under the first caller's deadline while its batch
// still runs is proved again when a caller joins with a later one, from
// the input it kept.
func TestLapsedSectorProvedAgainForAJoiner(t *testing.T) {
	f := newFakes(1)
	f.validateFail = func(ref job.Ref, n int) error {
		if ref.SectorID == 1 && n == 1 { // its phase refused: the deadline passed
			return temporal.NewNonRetryableApplicationError("deadline passed", job.ErrDeadlinePassed, nil)
		}
		return nil
	}
	env := sectorEnv(t, f)
	env.OnActivity(job.ActDevicePhase, mock.Anything, mock.Anything).After(time.Minute).Return(job.DeviceOutput{Device: "cpu/0"}, nil)
	start := env.Now()
	env.RegisterDelayedCallback(func() {
		env.SignalWorkflow(job.SignalDeadline, job.Deadline{}) // a caller with no deadline
	}, 10*time.Second)
	env.ExecuteWorkflow(job.BatchWorkflowName, job.BatchInput{BatchID: "b", MaxInFlight: 2, Deadline: start.Add(time.Hour),
		Sectors: []job.Ref{{ProverID: "aa", SectorID: 1, InputDigest: "d"}, {ProverID: "aa", SectorID: 2, InputDigest: "d"}}})
	var res job.BatchResult
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	if len(res.Sectors) != 2 {
		t.Fatalf("got %d results: %+v", len(res.Sectors), res.Sectors)
	}
	for _, s := range res.Sectors {
		if s.Status != job.StatusProved {
			t.Errorf("sector %d: %s %s, want proved", s.SectorID, s.Status, s.Error)
		}
	}
	if n := f.validations[1]; n != 2 {
		t.Errorf("sector 1 validated %d times, want 2 (lapsed, then proved again)", n)
	}
	if n := f.count(job.ActDropInput); n != 0 {
		t.Errorf("the lapsed sector's input dropped %d times, want kept", n)
	}
}

// Killed in its finalize, a WinningPoSt's host is given up on the
// finalize's heartbeat timeout: the finalize is not tried again on the
// dead host's queue (a retry there would wait the host-queue timeout
// more), the partition is synthesized again. A C2's finalize is retried
// on its host, sparing minutes of synthesis.
func TestUrgentFinalizeNotRetriedOnADeadHost(t *testing.T) {
	for _, c := range []struct {
		name                 string
		timeouts             job.Timeouts
		finalizes, syntheses int
	}{{"urgent", job.UrgentTimeouts(), 2, 2}, {"default", job.Timeouts{}, 2, 1}} {
		f := newFakes(1)
		f.finalizeFail = func(n int) error {
			if n == 1 {
				return temporal.NewTimeoutError(enumspb.TIMEOUT_TYPE_HEARTBEAT, nil)
			}
			return nil
		}
		env := sectorEnv(t, f)
		in := sector
		in.Timeouts = c.timeouts
		env.ExecuteWorkflow(job.SectorWorkflowName, in)
		if err := env.GetWorkflowError(); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got, want := [2]int{f.count(job.ActFinalize), f.count(job.ActSynthesize)}, [2]int{c.finalizes, c.syntheses}; got != want {
			t.Errorf("%s: %d finalizes, %d syntheses; want %d, %d", c.name, got[0], got[1], want[0], want[1])
		}
	}
}

// Every activity of an urgent batch, the workflow queue's too (lookup,
// validate, store), heartbeats on the urgent timeout: a workflow worker
// that dies in one is given up in 10 s, not at its start-to-close timeout
// (5 to 10 minutes).
func TestUrgentBatchHeartbeatsEverywhere(t *testing.T) {
	hb := map[string]time.Duration{}
	run := func(name string, in any) {
		env := sectorEnv(t, newFakes(1))
		var mu sync.Mutex
		env.SetOnActivityStartedListener(func(info *activity.Info, _ context.Context, _ converter.EncodedValues) {
			mu.Lock()
			hb[info.ActivityType.Name] = info.HeartbeatTimeout
			mu.Unlock()
		})
		env.ExecuteWorkflow(name, in)
		if err := env.GetWorkflowError(); err != nil {
			t.Fatal(err)
		}
	}
	// The test environment tells of the activities of the workflow it
	// runs, not of its children: the sector's are run on their own.
	run(job.BatchWorkflowName, job.BatchInput{BatchID: "b", Priority: 1, Timeouts: job.UrgentTimeouts(), Sectors: []job.Ref{sector.Ref}})
	in := sector
	in.Order.Priority, in.Timeouts = 1, job.UrgentTimeouts()
	run(job.SectorWorkflowName, in)
	for _, a := range []string{job.ActLookupC2, job.ActValidateC1, job.ActSynthesize, job.ActDevicePhase, job.ActFinalize, job.ActStoreC2} {
		if got := hb[a]; got != job.UrgentTimeouts().Heartbeat {
			t.Errorf("%s: heartbeat timeout %v, want the urgent %v", a, got, job.UrgentTimeouts().Heartbeat)
		}
	}
}
