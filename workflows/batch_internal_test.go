package workflows

import (
	"testing"
	"time"

	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/c2flow/c2flow/job"
)

// drainSignals applies signals that are buffered, unread, when a run is
// about to continue as new, and the cancel is carried into the next run's
// input. In a real history this happens when a sector's completion and a
// cancel land in one workflow task: the selector takes the completion, the
// run has no sector in flight, and the cancel is still in its channel. The
// test environment delivers each event in its own task, so the test reads
// the channel state directly: signals sent to a run that is not selecting.
func TestDrainSignalsBeforeContinueAsNew(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	probe := func(ctx workflow.Context, in job.BatchInput) (job.BatchInput, error) {
		b := newBatch(ctx, in)
		_, cancel := workflow.WithCancel(ctx)
		b.cancelChildren = cancel
		// Not selecting: the signals stay buffered, as at continue-as-new.
		if err := workflow.Sleep(ctx, time.Minute); err != nil {
			return job.BatchInput{}, err
		}
		b.drainSignals(ctx)
		return b.continued(), nil
	}
	env.RegisterWorkflow(probe)
	ref := job.Ref{ProverID: "aa", SectorID: 1, InputDigest: "d"}
	env.RegisterDelayedCallback(func() {
		env.SignalWorkflow(job.SignalProgress, job.Progress{Ref: ref, Status: job.StatusRunning, PartitionsDone: 3})
		env.SignalWorkflow(job.SignalCancel, nil)
	}, time.Second)
	env.ExecuteWorkflow(probe, job.BatchInput{BatchID: "b", Sectors: []job.Ref{ref}})
	var next job.BatchInput
	if err := env.GetWorkflowResult(&next); err != nil {
		t.Fatal(err)
	}
	if !next.Canceled {
		t.Fatal("a cancel buffered at continue-as-new was lost")
	}
}

// A batch starts each sector workflow with its proof name in the memo,
// what status reports count running jobs by kind from.
func TestSectorChildCarriesItsProof(t *testing.T) {
	ref := job.Ref{ProverID: "e8", SectorID: 1, InputDigest: "ab", Proof: "StackedDrg2KiBV1_1"}
	if got := sectorChildOptions(ref, 3).Memo[job.MemoProof]; got != ref.Proof {
		t.Errorf("the sector workflow's memo names proof %v, want %q", got, ref.Proof)
	}
}
