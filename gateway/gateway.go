// Package gateway serves cuzk's gRPC protocol (cuzk.v1.ProvingEngine, the
// protocol Curio speaks through its [Cuzk] Address setting) from the c2flow
// fleet. A PoRep C2 request becomes a batch of one sector, keyed by the
// sector's identity (prover, sector number, C1 digest), never by request_id:
// a retried or concurrent request joins the running job, and a sector
// already proved gets its stored proof back, checked, without being proved
// again. The gateway keeps no state of its own (Temporal and S3 hold it),
// so any number of gateways can serve one fleet and a restart loses
// nothing. Every kind a scheme admits (scheme.Admitter: PoRep, SnapDeals
// updates) is proved the same way, keyed by its input's identity. The
// kinds no scheme admits are passed unchanged to another cuzk-protocol
// server (Config.Forward), or refused at once with codes.Unimplemented.
package gateway

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"time"

	"go.temporal.io/sdk/client"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/c2flow/c2flow/gateway/cuzkpb"
	"github.com/c2flow/c2flow/internal/yield"
	"github.com/c2flow/c2flow/job"
	"github.com/c2flow/c2flow/scheme"
	"github.com/c2flow/c2flow/storage"
)

// MaxMessageBytes is the gRPC message limit both ways: what the largest
// valid request needs, a 64GiB sector's C1 envelope (116,894,444 bytes at
// most, c1.MaxInputSize), and the request's other fields. Curio's client
// allows 256 MiB (lib/cuzk/client.go). The largest PoSt request, a 32GiB
// window partition's 2349 vanilla proofs, is about 60 MB (curio's
// post.vproof, one 32GiB sector's, is 24,960 bytes); each kind's scheme
// bounds its own entries before it decodes them.
const MaxMessageBytes = 112 << 20

// Config is what a Server works with.
type Config struct {
	Temporal client.Client
	// Namespace is Temporal's namespace of the client ("": default).
	Namespace string
	Store     *storage.Store
	// Schemes admit requests (scheme.Admitter), decode stored inputs and
	// verify every proof before it is returned, over the published
	// verifying keys (registry.Schemes with the store as its Remote).
	Schemes scheme.Set
	// Forward, when set, receives the requests of the kinds c2flow does not
	// prove, unchanged; nil refuses them.
	Forward cuzkpb.ProvingEngineClient
	// ForwardAddr names Forward in messages.
	ForwardAddr string
	// Poll is how often a waiting request re-reads its job (0: 1 s).
	Poll time.Duration
	// RequestBudget bounds the request bytes held at once, read or being
	// stored (0: DefaultRequestBudget); AdmissionWait is how long a call
	// waits for room before it is refused with ResourceExhausted (0: 30
	// s), ReadTimeout how long its message may take to arrive once begun
	// (0: 2 min), FirstByteTimeout how long a call may wait before its
	// message begins (0: 10 s). PeerStreams bounds a client's calls
	// sending their messages at once (0: 64), ClientCalls its calls in
	// flight (0: 256), ClientUrgentPerMinute its urgent requests a minute
	// (0: 60). budget.go and clients.go say how.
	RequestBudget                                int64
	AdmissionWait, ReadTimeout, FirstByteTimeout time.Duration
	PeerStreams, ClientCalls                     int
	ClientUrgentPerMinute                        int
	// Gate, in a one-process stack (c2flow dev), is its worker's urgency
	// gate: an admitted priority-1 request (WinningPoSt) holds it from its
	// admission to its answer, so that the stack's lower-priority proving
	// yields the cores to the request's whole path (storing its input,
	// Temporal's tasks, the gateway's wait), not to its activities alone.
	// Nil (a gateway of its own): nothing to hold.
	Gate *yield.Gate
	Log  *slog.Logger
}

// Server implements cuzkpb.ProvingEngineServer.
type Server struct {
	cuzkpb.UnimplementedProvingEngineServer
	cfg     Config
	log     *slog.Logger
	started time.Time
	metrics *metrics
	budget  *budget
	// fleetCache keeps the last reading of the fleet (status.go).
	fleetCache fleetCache
	requestIDs requestIDs
}

var _ cuzkpb.ProvingEngineServer = (*Server)(nil)

// New returns a gateway over cfg.
func New(cfg Config) *Server {
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.Poll <= 0 {
		cfg.Poll = time.Second
	}
	if cfg.Forward != nil {
		cfg.Forward = hopClient{up: cfg.Forward, self: newGatewayID(), addr: cfg.ForwardAddr}
	}
	now := time.Now()
	return &Server{cfg: cfg, log: cfg.Log.With("component", "gateway"), started: now, metrics: newMetrics(now),
		budget: newBudget(budgetConfig{limit: cfg.RequestBudget, wait: cfg.AdmissionWait, read: cfg.ReadTimeout, first: cfg.FirstByteTimeout, peerStreams: cfg.PeerStreams,
			clientCalls: cfg.ClientCalls, clientUrgent: cfg.ClientUrgentPerMinute})}
}

// Register adds the service to g, each call admitted against the
// request memory budget (budget.go).
func (s *Server) Register(g *grpc.Server) { g.RegisterService(s.serviceDesc(), s) }

// Bounds of the transport, outside the request budget: a stream's header
// list (grpc-go's default is 16 MiB a stream: 64 streams of a peer held
// about 1 GiB) and a connection's concurrent streams (unlimited by
// default). Curio's headers are a few hundred bytes; its calls in flight
// are its proofs in flight (MaxPending), a few dozen.
const (
	maxHeaderListBytes   = 16 << 10
	maxStreamsConnection = 256
)

// ServerOptions are the gRPC server options the gateway needs (message
// limits; fixed flow-control windows, so that a call waiting for
// admission holds at most 1 MiB of its message unread, where grpc-go's
// dynamic windows would grow; header and stream bounds); callers add
// credentials.
func ServerOptions() []grpc.ServerOption {
	return []grpc.ServerOption{grpc.MaxRecvMsgSize(MaxMessageBytes), grpc.MaxSendMsgSize(MaxMessageBytes), rawCodecOption(),
		grpc.InitialWindowSize(1 << 20), grpc.InitialConnWindowSize(1 << 20),
		grpc.MaxHeaderListSize(maxHeaderListBytes), grpc.MaxConcurrentStreams(maxStreamsConnection)}
}

// forwardedPrefix marks the job ids of forwarded jobs: the rest is the
// upstream server's job id.
const forwardedPrefix = "fwd:"

// SubmitProof starts a job and returns its id at once.
func (s *Server) SubmitProof(ctx context.Context, req *cuzkpb.SubmitProofRequest) (*cuzkpb.SubmitProofResponse, error) {
	if err := checkName("request_id", req.GetRequestId(), MaxRequestIDBytes); err != nil {
		return nil, err
	}
	switch {
	case s.proves(req.GetProofKind()):
		j, err := s.start(ctx, req, false)
		if err != nil {
			var bad *badRequest
			if errors.As(err, &bad) {
				s.metrics.finished(req.GetProofKind(), cuzkpb.AwaitProofResponse_FAILED)
				return nil, status.Error(codes.InvalidArgument, err.Error())
			}
			return nil, grpcError(err)
		}
		return &cuzkpb.SubmitProofResponse{JobId: j.id()}, nil
	default:
		fw, err := s.forward(req.GetProofKind())
		if err != nil {
			return nil, err
		}
		resp, err := fw.SubmitProof(ctx, req)
		if err != nil {
			return nil, err
		}
		resp.JobId = forwardedPrefix + resp.GetJobId()
		return resp, nil
	}
}

// Prove is SubmitProof and AwaitProof in one call, Curio's only call: it
// blocks until the proof is stored and verified, the job fails, or the
// caller's deadline passes (the job then carries on; a retry joins it).
func (s *Server) Prove(ctx context.Context, req *cuzkpb.ProveRequest) (*cuzkpb.ProveResponse, error) {
	sub := req.GetSubmit()
	if sub == nil {
		return nil, status.Error(codes.InvalidArgument, "ProveRequest has no submit")
	}
	if err := checkName("request_id", sub.GetRequestId(), MaxRequestIDBytes); err != nil {
		return nil, err
	}
	switch {
	case s.proves(sub.GetProofKind()):
		t0 := time.Now()
		res, err := s.prove(ctx, sub)
		if err != nil {
			return nil, grpcError(err)
		}
		s.metrics.finished(sub.GetProofKind(), res.Status)
		s.metrics.observe(sub.GetProofKind(), res.Status, time.Since(t0))
		return &cuzkpb.ProveResponse{Result: res}, nil
	default:
		fw, err := s.forward(sub.GetProofKind())
		if err != nil {
			return nil, err
		}
		resp, err := fw.Prove(ctx, req)
		if err != nil {
			return nil, err
		}
		if r := resp.GetResult(); r != nil {
			r.JobId = forwardedPrefix + r.GetJobId()
		}
		return resp, nil
	}
}

// AwaitProof waits for a job, at most timeout_ms (0: until it ends): on
// expiry the status is TIMEOUT and the job carries on.
func (s *Server) AwaitProof(ctx context.Context, req *cuzkpb.AwaitProofRequest) (*cuzkpb.AwaitProofResponse, error) {
	id := req.GetJobId()
	if err := checkName("job_id", id, MaxJobIDBytes); err != nil {
		return nil, err
	}
	if up, ok := strings.CutPrefix(id, forwardedPrefix); ok {
		if s.cfg.Forward == nil {
			return nil, status.Errorf(codes.NotFound, "job %q was forwarded, and this gateway has no --forward", id)
		}
		resp, err := s.cfg.Forward.AwaitProof(ctx, &cuzkpb.AwaitProofRequest{JobId: up, TimeoutMs: req.GetTimeoutMs()})
		if err != nil {
			return nil, err
		}
		resp.JobId = id
		return resp, nil
	}
	j, err := parseJobID(id, s.cfg.Schemes)
	if err != nil {
		return nil, status.Error(codes.InvalidArgument, err.Error())
	}
	res, err := s.await(ctx, j, awaitTimeout(req.GetTimeoutMs()), false)
	if err != nil {
		return nil, grpcError(err)
	}
	return res, nil
}

// CancelProof cancels a job's proving; was_running says whether it was
// running when the cancel was asked.
func (s *Server) CancelProof(ctx context.Context, req *cuzkpb.CancelProofRequest) (*cuzkpb.CancelProofResponse, error) {
	id := req.GetJobId()
	if err := checkName("job_id", id, MaxJobIDBytes); err != nil {
		return nil, err
	}
	if up, ok := strings.CutPrefix(id, forwardedPrefix); ok {
		if s.cfg.Forward == nil {
			return nil, status.Errorf(codes.NotFound, "job %q was forwarded, and this gateway has no --forward", id)
		}
		return s.cfg.Forward.CancelProof(ctx, &cuzkpb.CancelProofRequest{JobId: up})
	}
	j, err := parseJobID(id, s.cfg.Schemes)
	if err != nil {
		return nil, status.Error(codes.InvalidArgument, err.Error())
	}
	running, err := s.cancel(ctx, j)
	if err != nil {
		return nil, status.Errorf(codes.Unavailable, "cancel job %s: %v", id, err)
	}
	s.log.Info("cuzk CancelProof", "job", id, "was_running", running)
	return &cuzkpb.CancelProofResponse{WasRunning: running}, nil
}

// PreloadSRS and EvictSRS: a c2flow worker loads a proof's parameters on
// first use (or at start, worker --profiles) and keeps them; nothing lets
// the gateway make the fleet's workers load or drop them. Circuits of the
// forwarded kinds go to the --forward server; the PoRep circuits get an
// error saying so, never a reply that pretends something was loaded.
func (s *Server) PreloadSRS(ctx context.Context, req *cuzkpb.PreloadSrsRequest) (*cuzkpb.PreloadSrsResponse, error) {
	if s.forwardsCircuit(req.GetCircuitId()) {
		return s.cfg.Forward.PreloadSRS(ctx, req)
	}
	return nil, status.Errorf(codes.Unimplemented, "PreloadSRS %q: c2flow workers load a proof's parameters on first use and keep them (start workers with --profiles to load them at start); the gateway cannot make the fleet load them, nothing was loaded", req.GetCircuitId())
}

// EvictSRS: see PreloadSRS.
func (s *Server) EvictSRS(ctx context.Context, req *cuzkpb.EvictSrsRequest) (*cuzkpb.EvictSrsResponse, error) {
	if s.forwardsCircuit(req.GetCircuitId()) {
		return s.cfg.Forward.EvictSRS(ctx, req)
	}
	return nil, status.Errorf(codes.Unimplemented, "EvictSRS %q: the gateway cannot make c2flow workers drop parameters (a worker's budget counts them; restart it without the profile); nothing was evicted", req.GetCircuitId())
}

// forwardsCircuit says whether a cuzk circuit id ("porep-32g") belongs
// to a kind this gateway does not prove (proves: one --forward takes, by
// its scheme's policy, or one no scheme admits), and a --forward server
// is set. An id of no kind c2flow knows is forwarded too: the cuzk daemon
// may.
func (s *Server) forwardsCircuit(id string) bool {
	if s.cfg.Forward == nil {
		return false
	}
	for k, c := range cuzkKinds {
		if strings.HasPrefix(id, c.circuit) {
			return !s.proves(k)
		}
	}
	return true
}

// forward returns the server that takes a kind of cuzk's this gateway
// does not prove (proves), or the Unimplemented error that names the kind
// and the flag.
func (s *Server) forward(k cuzkpb.ProofKind) (cuzkpb.ProvingEngineClient, error) {
	if _, ok := cuzkKinds[k]; !ok {
		return nil, status.Errorf(codes.InvalidArgument, "invalid proof_kind %d", int32(k))
	}
	s.metrics.request(k)
	if s.cfg.Forward == nil {
		s.log.Warn("cuzk request refused: kind not proved by c2flow and no --forward", "kind", k.String())
		return nil, status.Errorf(codes.Unimplemented, "c2flow does not prove %s: start the gateway with --forward HOST:PORT to pass these requests to a cuzk daemon", k.String())
	}
	s.log.Info("cuzk request forwarded", "kind", k.String(), "to", s.cfg.ForwardAddr)
	return s.cfg.Forward, nil
}

// prove is Prove of a kind c2flow proves: a bad request is a FAILED
// result naming the fault (what Curio reads), anything else an error.
func (s *Server) prove(ctx context.Context, req *cuzkpb.SubmitProofRequest) (*cuzkpb.AwaitProofResponse, error) {
	j, err := s.start(ctx, req, true)
	// The input is stored (or refused): the wait holds none of it.
	req.VanillaProof, req.VanillaProofs = nil, nil
	inputStored(ctx)
	var bad *badRequest
	switch {
	case errors.As(err, &bad):
		return failed("", err), nil // no job; its request_id is the client's own
	case err != nil:
		return nil, err
	}
	if j.priority == job.PriorityUrgent {
		defer s.urgent()()
	}
	res, err := s.await(ctx, j, 0, true)
	if err == nil {
		s.log.Info("cuzk Prove done", "request_id", req.GetRequestId(), "job", j.id(), "status", res.Status.String(), "error", res.ErrorMessage)
	}
	return res, err
}

// urgent holds the host's urgency gate (Config.Gate) while an admitted
// priority-1 request is stored, started and awaited; it returns the
// release.
func (s *Server) urgent() (release func()) {
	if s.cfg.Gate == nil {
		return func() {}
	}
	return s.cfg.Gate.Hold()
}

// grpcError gives err a gRPC status: its own, or the context's.
func grpcError(err error) error {
	if _, ok := status.FromError(err); ok {
		return err
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return status.FromContextError(err).Err()
	}
	return status.Error(codes.Internal, err.Error())
}

// failed is a FAILED result.
func failed(jobID string, err error) *cuzkpb.AwaitProofResponse {
	return &cuzkpb.AwaitProofResponse{JobId: jobID, Status: cuzkpb.AwaitProofResponse_FAILED, ErrorMessage: err.Error()}
}

// errGone: a job whose workflow is gone and whose sector has no stored C2.
var errGone = errors.New("no such job: no batch workflow and no stored C2 for it")

func fmtMS(d time.Duration) uint64 {
	if d < 0 {
		return 0
	}
	return uint64(d / time.Millisecond)
}
