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
	"github.com/c2flow/c2flow/intake"
	"github.com/c2flow/c2flow/job"
	"github.com/c2flow/c2flow/scheme"
	"github.com/c2flow/c2flow/storage"
)

// porepJob is a job of a kind c2flow proves (a PoRep C2, a SnapDeals
// update): one sector identity and its proof. Its id names both, so that
// any gateway can await or cancel it with nothing but Temporal and S3:
// <kind>/<proof>/<prover hex>/<sector>/<input digest hex>, kind "porep" or
// "snap".
type porepJob struct {
	kind     string
	ref      job.SectorRef // Profile is the proof
	priority int           // c2flow's 1 (most urgent) to 5; 0: 3
}

// The job id kinds.
const (
	kindPoRep = "porep"
	kindSnap  = "snap"
)

func (j porepJob) id() string { return j.kind + "/" + j.ref.Profile + "/" + j.ref.Identity() }

// batchID is the job's batch: derived from the sector's identity, so every
// request for it, from any gateway (or `c2flow submit` of the same C1),
// names the same batch workflow.
func (j porepJob) batchID() string { return batch.ID([]job.SectorRef{j.ref}) }

// parseJobID reads a porep job id.
func parseJobID(id string) (porepJob, error) {
	parts := strings.Split(id, "/")
	if len(parts) != 5 || (parts[0] != kindPoRep && parts[0] != kindSnap) {
		return porepJob{}, fmt.Errorf("job id %q: not a c2flow job id (porep/<proof>/<prover>/<sector>/<C1 digest>, snap/<update proof>/<prover>/<sector>/<input digest>, or fwd:<id> for a forwarded job)", id)
	}
	sector, err := strconv.ParseUint(parts[3], 10, 64)
	if err != nil {
		return porepJob{}, fmt.Errorf("job id %q: sector number: %w", id, err)
	}
	for _, h := range []struct{ what, s string }{{"prover id", parts[2]}, {"C1 digest", parts[4]}} {
		if b, err := hex.DecodeString(h.s); err != nil || len(b) != 32 {
			return porepJob{}, fmt.Errorf("job id %q: %s is not 32 bytes of hex", id, h.what)
		}
	}
	return porepJob{kind: parts[0], ref: job.SectorRef{ProverID: parts[2], SectorID: sector, C1Digest: parts[4], Profile: parts[1]}}, nil
}

// badRequest marks an error that is the request's fault: a FAILED result
// (Prove) or InvalidArgument (SubmitProof), never retried by the fleet.
type badRequest struct{ err error }

func (e *badRequest) Error() string { return e.err.Error() }
func (e *badRequest) Unwrap() error { return e.err }

// start checks a request of a kind c2flow proves (intake.Curio or
// intake.CurioUpdate: the identity and native checks `c2flow submit`
// runs), uploads its input content-addressed and starts the sector's
// batch, or joins it if it runs. Nothing is stored for a bad request.
func (s *Server) start(ctx context.Context, req *cuzkpb.SubmitProofRequest) (porepJob, error) {
	s.metrics.request(req.GetProofKind())
	var (
		ref  job.SectorRef
		raw  []byte
		kind string
		err  error
	)
	switch req.GetProofKind() {
	case cuzkpb.ProofKind_POREP_SEAL_COMMIT:
		kind, raw = kindPoRep, req.GetVanillaProof()
		ref, err = intake.Curio(ctx, intake.CurioRequest{Envelope: raw, MinerID: req.GetMinerId(),
			SectorNumber: req.GetSectorNumber(), RegisteredProof: req.GetRegisteredProof(), SectorSize: req.GetSectorSize()})
	case cuzkpb.ProofKind_SNAP_DEALS_UPDATE:
		kind = kindSnap
		ref, raw, err = intake.CurioUpdate(ctx, s.cfg.Schemes, intake.CurioUpdateRequest{Vanilla: req.GetVanillaProofs(), Envelope: req.GetVanillaProof(),
			MinerID: req.GetMinerId(), SectorNumber: req.GetSectorNumber(), RegisteredProof: req.GetRegisteredProof(), SectorSize: req.GetSectorSize(),
			CommROld: req.GetCommROld(), CommRNew: req.GetCommRNew(), CommDNew: req.GetCommDNew()})
	default:
		return porepJob{}, status.Errorf(codes.InvalidArgument, "invalid proof_kind %d", int32(req.GetProofKind()))
	}
	if err != nil {
		if errors.Is(err, intake.ErrBadRequest) {
			s.log.Warn("cuzk request refused", "kind", req.GetProofKind().String(), "request_id", req.GetRequestId(), "miner", req.GetMinerId(), "sector", req.GetSectorNumber(), "error", err)
			return porepJob{}, &badRequest{fmt.Errorf("c2flow: %w", err)}
		}
		return porepJob{}, err
	}
	j := porepJob{kind: kind, ref: ref, priority: priority(req.GetPriority(), req.GetProofKind())}
	s.noteRequestID(ctx, req.GetRequestId(), j)
	if err := intake.Upload(ctx, s.cfg.Store, ref, raw); err != nil {
		return porepJob{}, status.Errorf(codes.Unavailable, "c2flow: upload the input of job %s: %v", j.id(), err)
	}
	if err := s.submit(ctx, j); err != nil {
		return porepJob{}, err
	}
	s.log.Info("cuzk job", "kind", req.GetProofKind().String(), "request_id", req.GetRequestId(), "job", j.id(), "batch", j.batchID(), "miner", req.GetMinerId(), "sector", ref.SectorID)
	return j, nil
}

// submit starts the job's batch, or joins it while it runs (batch.Submit:
// one run at a time per batch id). After a completed run, a new one
// starts: its lookup finds a stored C2 and checks it, and proves only what
// is missing or bad.
func (s *Server) submit(ctx context.Context, j porepJob) error {
	_, err := batch.Submit(ctx, s.cfg.Temporal, []job.SectorRef{j.ref}, batch.Options{BatchID: j.batchID(), MaxInFlight: 1, Priority: j.priority})
	if err != nil {
		return status.Errorf(codes.Unavailable, "c2flow: start job %s: %v", j.id(), err)
	}
	return nil
}

// noteRequestID keeps which sector identity a request_id last named (a
// label in S3, best effort): the same request_id with a different C1 is a
// new job, and the log says so.
func (s *Server) noteRequestID(ctx context.Context, requestID string, j porepJob) {
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

// priority maps cuzk's priority onto c2flow's priority keys (1 most urgent
// to 5): CRITICAL 1, HIGH 2, NORMAL 3, LOW 4. UNSPECIFIED takes cuzk's
// default for the kind (cuzk-core types.rs default_for: WinningPoSt
// critical, WindowPoSt high, PoRep and SnapDeals normal); an unknown
// value is normal, as cuzk reads it.
func priority(p cuzkpb.Priority, k cuzkpb.ProofKind) int {
	if p == cuzkpb.Priority_PRIORITY_UNSPECIFIED {
		switch k {
		case cuzkpb.ProofKind_WINNING_POST:
			p = cuzkpb.Priority_CRITICAL
		case cuzkpb.ProofKind_WINDOW_POST_PARTITION:
			p = cuzkpb.Priority_HIGH
		default:
			p = cuzkpb.Priority_NORMAL
		}
	}
	switch p {
	case cuzkpb.Priority_CRITICAL:
		return 1
	case cuzkpb.Priority_HIGH:
		return 2
	case cuzkpb.Priority_LOW:
		return 4
	}
	return 3
}

// maxRestarts bounds how often one await starts its batch again (a stored
// C2 that went bad after the lookup, a sector proved by another batch).
const maxRestarts = 3

// await waits for a job's result, at most timeout (0: until it ends or
// ctx does). A completed job's proof is read from S3 and verified here
// before it is returned.
func (s *Server) await(ctx context.Context, j porepJob, timeout time.Duration) (*cuzkpb.AwaitProofResponse, error) {
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
// against the sector's input under the proof's verifying key, with the
// pipeline's recorded times: the sums over partitions of the device-queue
// wait, synthesis and device phase, and the sector's wall time (sr, when
// known; else the sum of the partitions' phases).
func (s *Server) completed(ctx context.Context, j porepJob, sr *job.SectorResult) (*cuzkpb.AwaitProofResponse, error) {
	sec, err := s.sector(ctx, j.ref)
	if err != nil {
		return nil, err
	}
	m, proof, err := s.cfg.Store.GetC2(ctx, j.ref.Identity())
	if err != nil {
		return nil, err
	}
	sc, err := s.cfg.Schemes.For(sec.Proof())
	if err != nil {
		return nil, err
	}
	v, err := sc.Verifier(ctx, sec.Proof())
	if err != nil {
		return nil, fmt.Errorf("verifying key of %s: %w", sec.Proof(), err)
	}
	if err := v.VerifyC2(sec, proof); err != nil {
		return nil, fmt.Errorf("stored C2 does not verify: %w", err)
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

// sector reads and decodes the job's input (C1, update input) from S3 (its
// digest checked, its size bounded by the proof's bound first).
func (s *Server) sector(ctx context.Context, ref job.SectorRef) (scheme.Sector, error) {
	sc, err := s.cfg.Schemes.For(ref.Profile)
	if err != nil {
		return nil, err
	}
	limit, err := sc.MaxC1Bytes(ref.Profile)
	if err != nil {
		return nil, err
	}
	size, err := s.cfg.Store.Size(ctx, storage.C1Key(ref.Identity()))
	if err != nil {
		return nil, fmt.Errorf("C1 of %s: %w", ref, err)
	}
	if size > limit {
		return nil, fmt.Errorf("C1 of %s: %d bytes, a %s C1 is at most %d", ref, size, ref.Profile, limit)
	}
	raw, err := s.cfg.Store.GetC1(ctx, ref.Identity(), ref.C1Digest)
	if err != nil {
		return nil, err
	}
	return sc.Decode(raw, ref)
}

// cancel cancels the job's batch (its sector's proving; what was stored
// stays) and says whether it was running.
func (s *Server) cancel(ctx context.Context, j porepJob) (bool, error) {
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
