// Package batch is the client side of the pipeline: upload C1 files,
// submit a batch workflow, follow its progress, read its result.
package batch

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/c2flow/c2flow/job"
	"github.com/c2flow/c2flow/storage"
)

// Options of a submission.
type Options struct {
	BatchID          string
	MaxInFlight      int
	PartitionRetries int
	Timeouts         job.Timeouts
	Priority         int // 1 (most urgent) to 5; 0: 3
	// Deadline, where set (a PoSt's), ends its sectors' work when it
	// passes: each sector fails DeadlinePassed, named, rather than taking
	// devices for a proof too late to use; the batch then ends. A caller
	// joining the running batch with a later deadline (or none) extends
	// it; one submitting after it ended starts a new run.
	Deadline time.Time
}

// ErrDeadlinePassed is returned by Submit for a batch whose deadline has
// passed: nothing is started.
var ErrDeadlinePassed = errors.New("deadline passed")

// Identify reads a C1 file for submission: it decodes and checks the
// bytes (a Filecoin C1 natively, against the sector's identity) and returns
// the sector's identity with its declared proof, and the input's canonical
// bytes, whose digest the identity holds and which are stored. An error
// names what is wrong with the file.
type Identify func(ctx context.Context, path string, raw []byte) (job.Ref, []byte, error)

// UploadC1 identifies C1 files locally (identify) and stores them under
// their content-addressed keys, returning the batch's sector identities
// (UploadInputs of the files' bytes).
func UploadC1(ctx context.Context, store *storage.Store, files []string, identify Identify) ([]job.Ref, error) {
	ins := make([]Input, len(files))
	for i, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		ins[i] = Input{Name: f, Raw: raw}
	}
	return UploadInputs(ctx, store, ins, identify)
}

// Input is a sector's input (a C1, an update input) and the name it is
// known by in errors (its file).
type Input struct {
	Name string
	Raw  []byte
	// Ref, where set, is the input's identity from its scheme already
	// (admitted from a request: Raw is its canonical bytes), so it is not
	// identified, and its vanilla proofs not verified, a second time.
	Ref *job.Ref
}

// UploadInputs identifies inputs locally (identify) and stores their
// canonical bytes under their content-addressed keys, returning the batch's sector identities. An
// input that does not pass is an error here: nothing is submitted. The
// same sector (prover, number) twice with different inputs is refused: one
// submission proves one input per sector.
func UploadInputs(ctx context.Context, store *storage.Store, ins []Input, identify Identify) ([]job.Ref, error) {
	var refs []job.Ref
	seen := map[string]string{}
	for _, in := range ins {
		ref, canon := job.Ref{}, in.Raw
		if in.Ref != nil {
			ref = *in.Ref
		} else {
			var err error
			if ref, canon, err = identify(ctx, in.Name, in.Raw); err != nil {
				return nil, fmt.Errorf("%s: %w", in.Name, err)
			}
		}
		sector := fmt.Sprintf("%s/%d", ref.ProverID, ref.SectorID)
		if prev, ok := seen[sector]; ok {
			return nil, fmt.Errorf("%s: %s is also in %s", in.Name, ref, prev)
		}
		seen[sector] = in.Name
		if err := store.PutC1(ctx, ref, canon); err != nil {
			return nil, fmt.Errorf("%s: %w", in.Name, err)
		}
		refs = append(refs, ref)
	}
	return refs, nil
}

// ID derives a batch id from its sectors' identities: the same sectors
// with the same C1s submitted twice are the same batch; a C1 fixed and
// resubmitted is a new one.
func ID(refs []job.Ref) string {
	ids := make([]string, len(refs))
	for i, r := range refs {
		ids[i] = r.Identity()
	}
	sort.Strings(ids)
	h := sha256.Sum256([]byte(strings.Join(ids, "\n")))
	return fmt.Sprintf("b-%d-%x", len(refs), h[:8])
}

// Submit starts the batch workflow. Submitting the same batch ID while it
// runs joins the running batch, with a deadline signal: a caller with a
// later deadline (or none) extends it for every sector, a lapsed one
// among them proved again. After the batch completed, it runs again:
// each sector's stored C2 is checked, and only what is missing or bad is
// proved.
func Submit(ctx context.Context, c client.Client, refs []job.Ref, o Options) (client.WorkflowRun, error) {
	if o.BatchID == "" {
		return nil, errors.New("batch id is required")
	}
	in := job.BatchInput{BatchID: o.BatchID, Sectors: refs, MaxInFlight: o.MaxInFlight, PartitionRetries: o.PartitionRetries, Timeouts: o.Timeouts, Priority: o.Priority, Deadline: o.Deadline}
	if !o.Deadline.IsZero() {
		if left := time.Until(o.Deadline); left <= 0 {
			return nil, fmt.Errorf("start batch %s: its %w at %s, %v ago: not started", o.BatchID, ErrDeadlinePassed, o.Deadline.UTC().Format(time.RFC3339Nano), -left.Round(time.Millisecond))
		}
	}
	// No execution timeout: the deadline a later caller brings may be
	// later than the first's, and a run's timeout cannot move. The
	// sectors stop at their deadline themselves (phases canceled,
	// witnesses released), and the batch ends when they have.
	id := job.BatchWorkflowID(o.BatchID)
	run, err := c.SignalWithStartWorkflow(ctx, id, job.SignalDeadline, job.Deadline{At: o.Deadline}, client.StartWorkflowOptions{
		ID:                       id,
		TaskQueue:                job.QueueWorkflow,
		WorkflowIDReusePolicy:    enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE,
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
		Priority:                 temporal.Priority{PriorityKey: job.TaskPriority(o.Priority)},
	}, job.BatchWorkflowName, in)
	if err != nil {
		return nil, fmt.Errorf("start batch %s: %w", o.BatchID, err)
	}
	return run, nil
}

// WorkflowState is what Temporal records of a batch's workflow run: its
// status and, for a run that did not complete, why.
type WorkflowState struct {
	Status enumspb.WorkflowExecutionStatus
	Reason string // terminated: the reason given; failed: the failure; else empty
}

// Closed reports whether the run ended.
func (s WorkflowState) Closed() bool {
	return s.Status != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING && s.Status != enumspb.WORKFLOW_EXECUTION_STATUS_UNSPECIFIED
}

// Completed reports whether the run ended with a result (a batch canceled
// through Cancel completes too, its sectors saying so).
func (s WorkflowState) Completed() bool {
	return s.Status == enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED
}

// Name is the status in words: running, completed, terminated, canceled,
// timed out, failed.
func (s WorkflowState) Name() string {
	switch s.Status {
	case enumspb.WORKFLOW_EXECUTION_STATUS_TIMED_OUT:
		return "timed out"
	case enumspb.WORKFLOW_EXECUTION_STATUS_CONTINUED_AS_NEW:
		return "continued as new"
	}
	return strings.ToLower(strings.TrimPrefix(s.Status.String(), "WORKFLOW_EXECUTION_STATUS_"))
}

// State describes a batch's latest workflow run. A run closed from
// outside (terminated in the Web UI or the Temporal CLI, canceled, timed
// out) still answers the progress query from its history, as if it ran:
// its status says what happened.
func State(ctx context.Context, c client.Client, batchID string) (WorkflowState, error) {
	id := job.BatchWorkflowID(batchID)
	d, err := c.DescribeWorkflowExecution(ctx, id, "")
	if err != nil {
		return WorkflowState{}, fmt.Errorf("describe batch %s (workflow %s): %w", batchID, id, err)
	}
	info := d.GetWorkflowExecutionInfo()
	st := WorkflowState{Status: info.GetStatus()}
	switch st.Status {
	case enumspb.WORKFLOW_EXECUTION_STATUS_TERMINATED, enumspb.WORKFLOW_EXECUTION_STATUS_FAILED, enumspb.WORKFLOW_EXECUTION_STATUS_CANCELED:
	default:
		return st, nil
	}
	// The reason is in the run's close event.
	it := c.GetWorkflowHistory(ctx, id, info.GetExecution().GetRunId(), false, enumspb.HISTORY_EVENT_FILTER_TYPE_CLOSE_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			return st, fmt.Errorf("read the close event of batch %s (workflow %s): %w", batchID, id, err)
		}
		if a := ev.GetWorkflowExecutionTerminatedEventAttributes(); a != nil {
			st.Reason = a.GetReason()
			if a.GetIdentity() != "" {
				st.Reason += " (by " + a.GetIdentity() + ")"
			}
		}
		if a := ev.GetWorkflowExecutionFailedEventAttributes(); a != nil {
			st.Reason = a.GetFailure().GetMessage()
		}
	}
	return st, nil
}

// Progress queries a batch's progress.
func Progress(ctx context.Context, c client.Client, batchID string) (job.BatchProgress, error) {
	var p job.BatchProgress
	v, err := c.QueryWorkflow(ctx, job.BatchWorkflowID(batchID), "", job.QueryProgress)
	if err != nil {
		return p, err
	}
	return p, v.Get(&p)
}

// Wait follows a batch until it completes, calling progress (if set) every
// interval, and returns its result.
func Wait(ctx context.Context, c client.Client, batchID string, every time.Duration, progress func(job.BatchProgress)) (job.BatchResult, error) {
	run := c.GetWorkflow(ctx, job.BatchWorkflowID(batchID), "")
	done := make(chan error, 1)
	var res job.BatchResult
	go func() { done <- run.Get(ctx, &res) }()
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case err := <-done:
			if err == nil && progress != nil {
				if p, qerr := Progress(ctx, c, batchID); qerr == nil {
					progress(p)
				}
			}
			return res, err
		case <-t.C:
			if progress != nil {
				if p, err := Progress(ctx, c, batchID); err == nil {
					progress(p)
				}
			}
		case <-ctx.Done():
			return res, ctx.Err()
		}
	}
}

// Cancel asks a batch to cancel its sectors in flight and start no more.
func Cancel(ctx context.Context, c client.Client, batchID string) error {
	return c.SignalWorkflow(ctx, job.BatchWorkflowID(batchID), "", job.SignalCancel, nil)
}

// FillPartitions reads the partition results that a large batch's result
// leaves out (past job.FullResultsMax sectors) from each proved sector's
// own workflow.
func FillPartitions(ctx context.Context, c client.Client, res *job.BatchResult) error {
	for i := range res.Sectors {
		s := &res.Sectors[i]
		if s.Partitions != nil || s.NumPartitions == 0 || s.Status != job.StatusProved {
			continue
		}
		var r job.SectorResult
		if err := c.GetWorkflow(ctx, job.SectorWorkflowID(s.Ref), "").Get(ctx, &r); err != nil {
			return fmt.Errorf("%s: partition results: %w", s.Ref, err)
		}
		s.Partitions = r.Partitions
	}
	return nil
}
