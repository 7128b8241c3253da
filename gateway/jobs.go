package gateway

import (
	"container/list"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/temporal"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/c2flow/c2flow/batch"
	"github.com/c2flow/c2flow/gateway/cuzkpb"
	"github.com/c2flow/c2flow/job"
	"github.com/c2flow/c2flow/scheme"
)

// start admits a request of a kind c2flow proves through the scheme of its
// kind (scheme.Set.Admit: the identity and native checks `c2flow submit`
// runs), stores its canonical input content-addressed and starts the
// sector's batch, or joins it if it runs. Nothing is stored for a bad
// request. blocking says the call waits for the proof (Prove): a PoSt's
// deadline is then the call's (scheme.Policy.Deadline).
func (s *Server) start(ctx context.Context, req *cuzkpb.SubmitProofRequest, blocking bool) (proofJob, error) {
	s.metrics.request(req.GetProofKind())
	c, ok := cuzkKinds[req.GetProofKind()]
	kind := c.kind
	if !ok {
		return proofJob{}, status.Errorf(codes.InvalidArgument, "invalid proof_kind %d", int32(req.GetProofKind()))
	}
	a, err := s.cfg.Schemes.Admit(ctx, scheme.Request{Kind: kind, RegisteredProof: req.GetRegisteredProof(),
		MinerID: req.GetMinerId(), SectorNumber: req.GetSectorNumber(), SectorSize: req.GetSectorSize(),
		Envelope: req.GetVanillaProof(), Vanilla: req.GetVanillaProofs(), Randomness: req.GetRandomness(), PartitionIndex: req.GetPartitionIndex(),
		CommROld: req.GetCommROld(), CommRNew: req.GetCommRNew(), CommDNew: req.GetCommDNew()})
	if err != nil {
		if errors.Is(err, scheme.ErrBadRequest) {
			s.log.Warn("cuzk request refused", "kind", req.GetProofKind().String(), "request_id", quoteHead(req.GetRequestId()), "miner", req.GetMinerId(), "sector", req.GetSectorNumber(), "error", err)
			return proofJob{}, &badRequest{fmt.Errorf("c2flow: %w", err)}
		}
		return proofJob{}, err
	}
	prio, asked := priority(req.GetPriority(), a.Policy.Priorities)
	if asked != 0 {
		s.log.Info("cuzk priority served within its kind's class", "kind", req.GetProofKind().String(), "asked", req.GetPriority().String(), "priority", prio, "request_id", quoteHead(req.GetRequestId()))
	}
	if prio == job.PriorityUrgent {
		defer s.urgent()()
	}
	ref, raw := a.Ref, a.Input
	j := proofJob{kind: kind, ref: ref, priority: prio, deadline: a.Policy.Deadline(ctx, blocking), timeouts: a.Policy.Timeouts()}
	// A call whose deadline passed while its request was checked (a
	// PoSt's native verification) stores nothing and starts nothing: no
	// one waits for the proof.
	if err := ctx.Err(); err != nil {
		return proofJob{}, status.Errorf(status.FromContextError(err).Code(), "c2flow: job %s: the call ended before its input was stored (%v); nothing stored, nothing started", j.id(), err)
	}
	s.noteRequestID(req.GetRequestId(), j)
	if err := s.cfg.Store.PutC1(ctx, ref, raw); err != nil {
		return proofJob{}, status.Errorf(codes.Unavailable, "c2flow: upload the input of job %s: %v", j.id(), err)
	}
	if err := s.submit(ctx, j); err != nil {
		return proofJob{}, err
	}
	s.log.Info("cuzk job", "kind", req.GetProofKind().String(), "request_id", quoteHead(req.GetRequestId()), "job", j.id(), "batch", j.batchID(), "miner", req.GetMinerId(), "sector", ref.SectorID)
	return j, nil
}

// submit starts the job's batch, or joins it while it runs (batch.Submit:
// one run at a time per batch id). After a completed run, a new one
// starts: its lookup finds a stored C2 and checks it, and proves only what
// is missing or bad.
func (s *Server) submit(ctx context.Context, j proofJob) error {
	o := batch.Options{BatchID: j.batchID(), MaxInFlight: 1, Priority: j.priority, Deadline: j.deadline, Timeouts: j.timeouts}
	_, err := batch.Submit(ctx, s.cfg.Temporal, []job.Ref{j.ref}, o)
	if errors.Is(err, batch.ErrDeadlinePassed) {
		return &badRequest{fmt.Errorf("c2flow: job %s: %w", j.id(), err)}
	}
	if err != nil {
		return status.Errorf(codes.Unavailable, "c2flow: start job %s: %v", j.id(), err)
	}
	return nil
}

// noteRequestID keeps which job a request_id last named, so that the same
// request_id with a different input (a new job) is logged. It is this
// gateway's memory alone (requestIDs): a label is worth a log line, not
// storage that grows with every request (issue 55).
func (s *Server) noteRequestID(requestID string, j proofJob) {
	if requestID == "" {
		return
	}
	if prev, ok := s.requestIDs.swap(requestID, j.id()); ok && prev != j.id() {
		s.log.Info("request_id reused with a different C1: a new job", "request_id", quoteHead(requestID), "previous_job", prev, "job", j.id())
	}
}

// maxRequestIDs is how many request_ids a gateway remembers: the jobs a
// busy fleet starts in hours.
const maxRequestIDs = 4096

// requestIDs remembers the last job of the most recent request_ids, by
// their digest (a request_id is at most MaxRequestIDBytes; its digest
// bounds what is kept of it), the oldest forgotten first.
type requestIDs struct {
	mu    sync.Mutex
	jobs  map[[16]byte]*list.Element
	order list.List // of *requestIDEntry, the most recent in front
}

type requestIDEntry struct {
	key [16]byte
	job string
}

// swap records job under requestID and returns the job it named before.
func (r *requestIDs) swap(requestID, job string) (prev string, ok bool) {
	h := sha256.Sum256([]byte(requestID))
	var key [16]byte
	copy(key[:], h[:])
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.jobs == nil {
		r.jobs = map[[16]byte]*list.Element{}
	}
	if e, found := r.jobs[key]; found {
		ent := e.Value.(*requestIDEntry)
		prev, ok = ent.job, true
		ent.job = job
		r.order.MoveToFront(e)
		return prev, ok
	}
	r.jobs[key] = r.order.PushFront(&requestIDEntry{key: key, job: job})
	if r.order.Len() > maxRequestIDs {
		old := r.order.Back()
		r.order.Remove(old)
		delete(r.jobs, old.Value.(*requestIDEntry).key)
	}
	return "", false
}

// maxRestarts bounds how often one await starts its batch again (a stored
// C2 that went bad after the lookup, a sector proved by another batch).
const maxRestarts = 3

// await waits for a job's result, at most timeout (0: until it ends or
// ctx does). A completed job's proof is read from S3 and verified here
// before it is returned. With restart (Prove: the request itself is at
// hand), a job whose stored proof cannot be returned is proved again;
// without (AwaitProof, a bare job id), nothing is started.
func (s *Server) await(ctx context.Context, j proofJob, timeout time.Duration, restart bool) (*cuzkpb.AwaitProofResponse, error) {
	wctx := ctx
	if timeout > 0 {
		var cancel context.CancelFunc
		wctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	id := j.id()
	timedOut := func(err error) (*cuzkpb.AwaitProofResponse, error) {
		if ended(ctx) {
			return nil, callerEnded(ctx)
		}
		if ended(wctx) {
			return &cuzkpb.AwaitProofResponse{JobId: id, Status: cuzkpb.AwaitProofResponse_TIMEOUT,
				ErrorMessage: fmt.Sprintf("not done within %v; the job carries on", timeout)}, nil
		}
		return nil, err
	}
	for restarts := 0; ; restarts++ {
		var res job.BatchResult
		err := s.cfg.Temporal.GetWorkflow(wctx, job.BatchWorkflowID(j.batchID()), "").Get(wctx, &res)
		if err != nil {
			if r, terr := timedOut(nil); r != nil || terr != nil {
				return r, terr
			}
			if interrupted(err) {
				return nil, status.Errorf(codes.Unavailable, "c2flow: the wait for job %s was interrupted (%v); the job carries on: await it again", id, err)
			}
			var nf *serviceerror.NotFound
			if errors.As(err, &nf) {
				// No batch (its history was removed, or the sector was
				// proved by `c2flow submit` under another batch id): a
				// stored C2 still answers.
				r, perr := s.completed(wctx, j, nil)
				if perr != nil && ended(wctx) {
					return timedOut(perr)
				}
				if perr != nil {
					return nil, status.Errorf(codes.NotFound, "job %s: %v (%v)", id, errGone, perr)
				}
				return r, nil
			}
			var te *temporal.TimeoutError
			if errors.As(err, &te) {
				return failed(id, fmt.Errorf("c2flow: job %s: its deadline passed before it was proved (batch %s timed out): not proved late", id, j.batchID())), nil
			}
			var ce *temporal.CanceledError
			if errors.As(err, &ce) {
				return &cuzkpb.AwaitProofResponse{JobId: id, Status: cuzkpb.AwaitProofResponse_CANCELLED}, nil
			}
			return failed(id, fmt.Errorf("c2flow: batch %s: %w", j.batchID(), err)), nil
		}
		sr, ok := sectorOf(res, j.ref)
		if !ok {
			return failed(id, fmt.Errorf("c2flow: batch %s has no result for %s", j.batchID(), j.ref)), nil
		}
		switch sr.Status {
		case job.StatusProved, job.StatusDuplicate:
			if sr.C2Key == "" {
				// Running in another batch: wait for that sector workflow,
				// then look again.
				s.log.Info("job's sector is being proved by another batch; waiting for it", "job", id)
				_ = s.cfg.Temporal.GetWorkflow(wctx, job.SectorWorkflowID(j.ref), "").Get(wctx, nil)
				if ended(wctx) {
					return timedOut(wctx.Err())
				}
				break
			}
			r, err := s.completed(wctx, j, &sr)
			if err == nil {
				return r, nil
			}
			if ended(wctx) {
				return timedOut(wctx.Err())
			}
			if errors.Is(err, scheme.ErrBadInput) && !restart {
				return nil, status.Errorf(codes.InvalidArgument, "job %s: its stored input is not a %s input of this sector (%v): a job id names the proof its request declared", id, j.ref.Proof, err)
			}
			if restarts >= maxRestarts {
				return failed(id, fmt.Errorf("c2flow: the stored C2 of %s: %w", j.ref, err)), nil
			}
			s.log.Warn("stored C2 not returned; proving again", "job", id, "reason", err)
		case job.StatusCanceled:
			return &cuzkpb.AwaitProofResponse{JobId: id, Status: cuzkpb.AwaitProofResponse_CANCELLED, ErrorMessage: sr.Error}, nil
		default:
			return failed(id, fmt.Errorf("c2flow: %s: %s", j.ref, userError(sr.Error))), nil
		}
		if restarts >= maxRestarts {
			return failed(id, fmt.Errorf("c2flow: %s: no proof after %d runs of its batch", j.ref, restarts+1)), nil
		}
		if !restart {
			return failed(id, fmt.Errorf("c2flow: %s: its batch ended without a proof that verifies; send the request again (Prove or SubmitProof) to prove it again", j.ref)), nil
		}
		if err := s.submit(ctx, j); err != nil {
			return nil, err
		}
	}
}

// sectorOf finds ref's result in a batch result.
func sectorOf(res job.BatchResult, ref job.Ref) (job.SectorResult, bool) {
	for _, r := range res.Sectors {
		if r.Ref.Identity() == ref.Identity() {
			return r, true
		}
	}
	return job.SectorResult{}, false
}

// userError is the first line of a sector's error: the workflow's cause,
// without the Temporal wrapping that repeats it.
func userError(e string) string {
	if i := strings.IndexByte(e, '\n'); i >= 0 {
		e = e[:i]
	}
	return e
}

// completed reads the job's stored proof and returns it once it verifies
// against the sector's input under the proof's verifying key (the load
// path and the stored-proof check the workers use), with the pipeline's
// recorded times: the sums over partitions of the device-queue wait,
// synthesis and device phase, and the sector's wall time (sr, when
// known; else the sum of the partitions' phases).
func (s *Server) completed(ctx context.Context, j proofJob, sr *job.SectorResult) (*cuzkpb.AwaitProofResponse, error) {
	sec, _, err := s.cfg.Schemes.LoadSector(ctx, s.cfg.Store, j.ref)
	if err != nil {
		return nil, fmt.Errorf("the input of job %s: %w", j.id(), err)
	}
	m, proof, err := s.cfg.Schemes.StoredC2(ctx, s.cfg.Store, j.ref, sec)
	if err != nil {
		return nil, err
	}
	r := &cuzkpb.AwaitProofResponse{JobId: j.id(), Status: cuzkpb.AwaitProofResponse_COMPLETED, Proof: proof}
	var phases int64
	for _, p := range m.PartitionMS {
		r.QueueWaitMs += uint64(max(p.QueueMS, 0))
		r.SynthesisMs += uint64(max(p.SynthMS, 0))
		r.GpuComputeMs += uint64(max(p.DeviceMS, 0))
		phases += max(p.SynthMS, 0) + max(p.QueueMS, 0) + max(p.DeviceMS, 0) + max(p.FinalizeMS, 0)
	}
	r.TotalMs = uint64(phases)
	if sr != nil && sr.Status == job.StatusProved && !sr.Started.IsZero() && sr.Finished.After(sr.Started) {
		r.TotalMs = fmtMS(sr.Finished.Sub(sr.Started))
	}
	return r, nil
}

// cancel cancels the job's batch (its sector's proving; what was stored
// stays) and says whether it was running.
func (s *Server) cancel(ctx context.Context, j proofJob) (bool, error) {
	d, err := s.cfg.Temporal.DescribeWorkflowExecution(ctx, job.BatchWorkflowID(j.batchID()), "")
	var nf *serviceerror.NotFound
	switch {
	case errors.As(err, &nf):
		return false, nil
	case err != nil:
		return false, err
	}
	if d.GetWorkflowExecutionInfo().GetStatus() != enums.WORKFLOW_EXECUTION_STATUS_RUNNING {
		return false, nil
	}
	if err := batch.Cancel(ctx, s.cfg.Temporal, j.batchID()); err != nil {
		var nf *serviceerror.NotFound
		if errors.As(err, &nf) { // it ended meanwhile
			return false, nil
		}
		return false, err
	}
	return true, nil
}
