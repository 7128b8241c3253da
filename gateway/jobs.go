package gateway

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
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
	"github.com/c2flow/c2flow/storage"
)

// proofJob is a job of a kind c2flow proves: one sector identity and its
// proof. Its id names both, so that any gateway can await or cancel it
// with nothing but Temporal and S3:
// <kind>/<proof>/<prover hex>/<sector>/<input digest hex>, kind a
// scheme's request kind ("porep", "snap").
type proofJob struct {
	kind     string
	ref      job.SectorRef // Profile is the proof
	priority int           // c2flow's 1 (most urgent) to 5; 0: 3
	// deadline, for a PoSt, is when its proof is no longer of use: past it
	// the job fails, named, instead of being proved late.
	deadline time.Time
}

// PoStDeadline is a PoSt request's deadline where its call carries none:
// Curio's default ProveTimeout (lib/cuzk/client.go proveTimeout, [Cuzk]
// ProveTimeout).
const PoStDeadline = 30 * time.Minute

// deadlineOf is a request's deadline: none for PoRep and SnapDeals (hours
// of work, no chain deadline at this scale); for a PoSt, with blocking (a
// Prove, which waits for the proof) its call's deadline (Curio's Prove sets
// its ProveTimeout on the call), else PoStDeadline from now (a SubmitProof
// call's deadline is the submission's, not the proof's).
func deadlineOf(ctx context.Context, kind string, blocking bool) time.Time {
	if kind != scheme.KindWindowPoSt && kind != scheme.KindWinningPoSt {
		return time.Time{}
	}
	if d, ok := ctx.Deadline(); ok && blocking {
		return d
	}
	return time.Now().Add(PoStDeadline)
}

// id encodes the job's id; parseJobID reads it back.
func (j proofJob) id() string { return j.kind + "/" + j.ref.Profile + "/" + j.ref.Identity() }

// batchID is the job's batch: derived from the sector's identity, so every
// request for it, from any gateway (or `c2flow submit` of the same input),
// names the same batch workflow.
func (j proofJob) batchID() string { return batch.ID([]job.SectorRef{j.ref}) }

// maxJobID bounds a job id: the longest c2flow writes is under 200 bytes.
const maxJobID = 256

// parseJobID reads a job id (proofJob.id), strictly: a kind some scheme
// of set admits, a proof that scheme owns, a 32-byte prover id and
// digest, a sector number. An id over maxJobID is refused unread, and an
// error quotes at most the head of what it was given.
func parseJobID(id string, set scheme.Set) (proofJob, error) {
	if len(id) > maxJobID {
		return proofJob{}, fmt.Errorf("job id of %d bytes (%s): a c2flow job id has at most %d", len(id), quoteHead(id), maxJobID)
	}
	parts := strings.Split(id, "/")
	if len(parts) != 5 {
		return proofJob{}, fmt.Errorf("job id %s: not a c2flow job id (<kind>/<proof>/<prover>/<sector>/<input digest>, or fwd:<id> for a forwarded job)", quoteHead(id))
	}
	a, err := set.Admitter(parts[0])
	if err != nil {
		return proofJob{}, fmt.Errorf("job id %s: kind %s: %w", quoteHead(id), quoteHead(parts[0]), err)
	}
	if !a.Owns(parts[1]) {
		return proofJob{}, fmt.Errorf("job id %s: %s is not a proof of %s jobs", quoteHead(id), quoteHead(parts[1]), parts[0])
	}
	sector, err := strconv.ParseUint(parts[3], 10, 64)
	if err != nil {
		return proofJob{}, fmt.Errorf("job id %s: sector number: %w", quoteHead(id), err)
	}
	for _, h := range []struct{ what, s string }{{"prover id", parts[2]}, {"input digest", parts[4]}} {
		if b, err := hex.DecodeString(h.s); err != nil || len(b) != 32 || h.s != strings.ToLower(h.s) {
			return proofJob{}, fmt.Errorf("job id %s: %s is not 32 bytes of lower-case hex", quoteHead(id), h.what)
		}
	}
	return proofJob{kind: parts[0], ref: job.SectorRef{ProverID: parts[2], SectorID: sector, C1Digest: parts[4], Profile: parts[1]}}, nil
}

// quoteHead quotes s, or its first 64 bytes when longer: a client's
// string is never echoed whole into a log or an error.
func quoteHead(s string) string {
	const head = 64
	if len(s) <= head {
		return strconv.Quote(s)
	}
	return strconv.Quote(s[:head]) + fmt.Sprintf("... (%d bytes)", len(s))
}

// badRequest marks an error that is the request's fault: a FAILED result
// (Prove) or InvalidArgument (SubmitProof), never retried by the fleet.
type badRequest struct{ err error }

func (e *badRequest) Error() string { return e.err.Error() }
func (e *badRequest) Unwrap() error { return e.err }

// requestKinds are the request kinds of cuzk's proof kinds.
var requestKinds = map[cuzkpb.ProofKind]string{
	cuzkpb.ProofKind_POREP_SEAL_COMMIT:     scheme.KindPoRep,
	cuzkpb.ProofKind_SNAP_DEALS_UPDATE:     scheme.KindSnap,
	cuzkpb.ProofKind_WINDOW_POST_PARTITION: scheme.KindWindowPoSt,
	cuzkpb.ProofKind_WINNING_POST:          scheme.KindWinningPoSt,
}

// proves says whether a scheme of this gateway admits requests of kind k
// and the operator did not send them elsewhere: with --forward, PoSt
// kinds go to the cuzk daemon named.
func (s *Server) proves(k cuzkpb.ProofKind) bool {
	kind, ok := requestKinds[k]
	if !ok {
		return false
	}
	if s.cfg.Forward != nil && (kind == scheme.KindWindowPoSt || kind == scheme.KindWinningPoSt) {
		return false
	}
	_, err := s.cfg.Schemes.Admitter(kind)
	return err == nil
}

// start admits a request of a kind c2flow proves through the scheme of its
// kind (scheme.Set.Admit: the identity and native checks `c2flow submit`
// runs), stores its canonical input content-addressed and starts the
// sector's batch, or joins it if it runs. Nothing is stored for a bad
// request. blocking says the call waits for the proof (Prove): a PoSt's
// deadline is then the call's (deadlineOf).
func (s *Server) start(ctx context.Context, req *cuzkpb.SubmitProofRequest, blocking bool) (proofJob, error) {
	s.metrics.request(req.GetProofKind())
	kind, ok := requestKinds[req.GetProofKind()]
	if !ok {
		return proofJob{}, status.Errorf(codes.InvalidArgument, "invalid proof_kind %d", int32(req.GetProofKind()))
	}
	ref, raw, err := s.cfg.Schemes.Admit(ctx, scheme.Request{Kind: kind, RegisteredProof: req.GetRegisteredProof(),
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
	prio, asked := priority(req.GetPriority(), req.GetProofKind())
	if asked != 0 {
		s.log.Info("cuzk priority served within its kind's class", "kind", req.GetProofKind().String(), "asked", req.GetPriority().String(), "priority", prio, "request_id", quoteHead(req.GetRequestId()))
	}
	j := proofJob{kind: kind, ref: ref, priority: prio, deadline: deadlineOf(ctx, kind, blocking)}
	// A call whose deadline passed while its request was checked (a
	// PoSt's native verification) stores nothing and starts nothing: no
	// one waits for the proof.
	if err := ctx.Err(); err != nil {
		return proofJob{}, status.Errorf(status.FromContextError(err).Code(), "c2flow: job %s: the call ended before its input was stored (%v); nothing stored, nothing started", j.id(), err)
	}
	s.noteRequestID(ctx, req.GetRequestId(), j)
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
	o := batch.Options{BatchID: j.batchID(), MaxInFlight: 1, Priority: j.priority, Deadline: j.deadline}
	if j.kind == scheme.KindWinningPoSt {
		// One small partition, worthless late: a stalled host is given
		// up in seconds and the proof made again elsewhere. A window
		// partition keeps the defaults (a 32GiB one is a PoRep
		// partition's work).
		o.Timeouts = job.UrgentTimeouts()
	}
	_, err := batch.Submit(ctx, s.cfg.Temporal, []job.SectorRef{j.ref}, o)
	if errors.Is(err, batch.ErrDeadlinePassed) {
		return &badRequest{fmt.Errorf("c2flow: job %s: %w", j.id(), err)}
	}
	if err != nil {
		return status.Errorf(codes.Unavailable, "c2flow: start job %s: %v", j.id(), err)
	}
	return nil
}

// noteRequestID keeps which sector identity a request_id last named (a
// label in S3, best effort): the same request_id with a different C1 is a
// new job, and the log says so.
func (s *Server) noteRequestID(ctx context.Context, requestID string, j proofJob) {
	if requestID == "" {
		return
	}
	h := sha256.Sum256([]byte(requestID))
	key := "cuzk/request-ids/" + hex.EncodeToString(h[:16])
	prev, err := s.cfg.Store.Get(ctx, key)
	switch {
	case err == nil && string(prev) != j.id():
		s.log.Info("request_id reused with a different C1: a new job", "request_id", requestID, "previous_job", string(prev), "job", j.id())
	case err == nil:
		return
	case !errors.Is(err, storage.ErrNotFound):
		s.log.Warn("request_id label not read", "request_id", requestID, "error", err)
	}
	if err := s.cfg.Store.Put(ctx, key, []byte(j.id())); err != nil {
		s.log.Warn("request_id label not written", "request_id", requestID, "error", err)
	}
}

// priorityClasses is each kind's class of c2flow priorities (1 most urgent to 5):
// a client's priority orders its work within its kind's class and never
// outside it. 1 is the urgent lanes (the urgent synthesis reserve, a
// device's second holder, no finalize or validation slot): WinningPoSt's
// alone, whose late proof is a lost block. WindowPoSt comes next (a late
// one is a faulted partition), then PoRep and SnapDeals. Curio's CRITICAL
// on a PoRep (a careless config, or a client buying priority) is served
// as a PoRep's highest.
var priorityClasses = map[cuzkpb.ProofKind]struct{ high, normal, low int }{
	cuzkpb.ProofKind_WINNING_POST:          {1, 1, 1},
	cuzkpb.ProofKind_WINDOW_POST_PARTITION: {2, 2, 2},
	cuzkpb.ProofKind_POREP_SEAL_COMMIT:     {3, 3, 4},
	cuzkpb.ProofKind_SNAP_DEALS_UPDATE:     {3, 3, 4},
}

// priority maps cuzk's priority onto c2flow's priority keys within the
// kind's class: CRITICAL and HIGH its highest, NORMAL, UNSPECIFIED (cuzk's
// default for the kind) and an unknown value its normal, LOW its lowest.
// asked is the priority the client asked for where the class overrode
// it (0 where not): the log says so.
func priority(p cuzkpb.Priority, k cuzkpb.ProofKind) (prio, asked int) {
	c, ok := priorityClasses[k]
	if !ok {
		c.high, c.normal, c.low = 3, 3, 4
	}
	switch p {
	case cuzkpb.Priority_CRITICAL:
		prio, asked = c.high, 1
	case cuzkpb.Priority_HIGH:
		prio, asked = c.high, 2
	case cuzkpb.Priority_LOW:
		prio, asked = c.low, 4
	default:
		return c.normal, 0
	}
	if asked < prio {
		return prio, asked
	}
	return prio, 0
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
				return nil, status.Errorf(codes.InvalidArgument, "job %s: its stored input is not a %s input of this sector (%v): a job id names the proof its request declared", id, j.ref.Profile, err)
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
func sectorOf(res job.BatchResult, ref job.SectorRef) (job.SectorResult, bool) {
	for _, r := range res.Sectors {
		if r.SectorRef.Identity() == ref.Identity() {
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
