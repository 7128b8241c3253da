package gateway

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"
	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	taskqueuepb "go.temporal.io/api/taskqueue/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/converter"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/c2flow/c2flow/batch"
	"github.com/c2flow/c2flow/gateway/cuzkpb"
	"github.com/c2flow/c2flow/job"
	"github.com/c2flow/c2flow/scheme"
)

// metrics are the gateway's own counters, served by GetMetrics with the
// fleet's state as Temporal reports it.
type metrics struct {
	reg      *prometheus.Registry
	requests *prometheus.CounterVec
	results  *prometheus.CounterVec
	seconds  *prometheus.HistogramVec
	fleet    *prometheus.GaugeVec
	jobs     *prometheus.GaugeVec
}

func newMetrics(started time.Time) *metrics {
	m := &metrics{
		reg: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "c2flow_gateway_requests_total",
			Help: "cuzk proof requests received (Prove and SubmitProof), by proof kind."}, []string{"proof_kind"}),
		results: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "c2flow_gateway_results_total",
			Help: "cuzk requests answered with a result, by proof kind and status."}, []string{"proof_kind", "status"}),
		seconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "c2flow_gateway_prove_seconds",
			Help:    "Wall time of a Prove call, by proof kind and status.",
			Buckets: prometheus.ExponentialBuckets(1, 2, 14)}, []string{"proof_kind", "status"}),
		fleet: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "c2flow_fleet",
			Help: "The fleet as Temporal reports it when the metrics are read (see GetStatus)."}, []string{"what"}),
		jobs: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "c2flow_fleet_jobs_running",
			Help: "Running jobs by proof kind (GetStatus's in_progress) when the metrics are read."}, []string{"proof_kind"}),
	}
	uptime := prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "c2flow_gateway_uptime_seconds", Help: "Seconds since this gateway started."},
		func() float64 { return time.Since(started).Seconds() })
	m.reg.MustRegister(m.requests, m.results, m.seconds, m.fleet, m.jobs, uptime)
	return m
}

func (m *metrics) request(k cuzkpb.ProofKind) { m.requests.WithLabelValues(kindName(k)).Inc() }

func (m *metrics) finished(k cuzkpb.ProofKind, st cuzkpb.AwaitProofResponse_Status) {
	m.results.WithLabelValues(kindName(k), strings.ToLower(st.String())).Inc()
}

func (m *metrics) observe(k cuzkpb.ProofKind, st cuzkpb.AwaitProofResponse_Status, d time.Duration) {
	m.seconds.WithLabelValues(kindName(k), strings.ToLower(st.String())).Observe(d.Seconds())
}

// fleetStatus is the fleet as Temporal sees it.
type fleetStatus struct {
	devices         []*cuzkpb.GPUStatus
	backlog         int64 // synthesis tasks waiting
	completed, fail int64 // sector workflows completed, failed
	// byKind is the running sector workflows by queue (runningByKind).
	byKind map[string]int64
	// byKey is the synthesis queue's waiting tasks by priority key, urgent
	// the urgent synthesis queue's.
	byKey  map[int32]int64
	urgent int64
}

// running is the sector workflows running: every queue's.
func (f fleetStatus) running() int64 {
	var n int64
	for _, k := range f.byKind {
		n += k
	}
	return n
}

// sectorsIn is the visibility query for the sector workflows in one
// execution status.
func sectorsIn(st string) string {
	return fmt.Sprintf("WorkflowType = '%s' AND ExecutionStatus = '%s'", job.SectorWorkflowName, st)
}

// countSectors counts the sector workflows in one execution status.
func (s *Server) countSectors(ctx context.Context, st string) (int64, error) {
	r, err := s.cfg.Temporal.CountWorkflow(ctx, &workflowservice.CountWorkflowExecutionsRequest{Query: sectorsIn(st)})
	if err != nil {
		return 0, fmt.Errorf("count %s sector workflows: %w", st, err)
	}
	return r.GetCount(), nil
}

// backlog describes a synthesis queue's waiting tasks.
func (s *Server) backlog(ctx context.Context, queue string) (*workflowservice.DescribeTaskQueueResponse, error) {
	d, err := s.cfg.Temporal.WorkflowService().DescribeTaskQueue(ctx, &workflowservice.DescribeTaskQueueRequest{
		Namespace: s.namespace(), TaskQueue: &taskqueuepb.TaskQueue{Name: queue, Kind: enumspb.TASK_QUEUE_KIND_NORMAL},
		TaskQueueType: enumspb.TASK_QUEUE_TYPE_ACTIVITY, ReportStats: true})
	if err != nil {
		return nil, fmt.Errorf("describe %s: %w", queue, err)
	}
	return d, nil
}

// statusTTL is how long one reading of the fleet answers GetStatus and
// GetMetrics: each reading is two visibility counts, a visibility list,
// two task-queue descriptions and the pollers, and clients polling status
// in a loop would otherwise put them all on Temporal each time.
const statusTTL = 2 * time.Second

// fleetCache is the last reading of the fleet (fleet).
type fleetCache struct {
	mu sync.Mutex // held while reading: one reading at a time
	at time.Time
	f  fleetStatus
}

// fleet is the fleet's state, read at most every statusTTL.
func (s *Server) fleet(ctx context.Context) (fleetStatus, error) {
	c := &s.fleetCache
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.at.IsZero() && time.Since(c.at) < statusTTL {
		return c.f, nil
	}
	f, err := s.readFleet(ctx)
	if err != nil {
		return f, err
	}
	c.f, c.at = f, time.Now()
	return f, nil
}

// readFleet reads the fleet's state from Temporal.
func (s *Server) readFleet(ctx context.Context) (fleetStatus, error) {
	var f fleetStatus
	var err error
	for _, c := range []struct {
		dst *int64
		st  string
	}{{&f.completed, "Completed"}, {&f.fail, "Failed"}} {
		if *c.dst, err = s.countSectors(ctx, c.st); err != nil {
			return f, err
		}
	}
	if f.byKind, err = s.runningByKind(ctx); err != nil {
		return f, err
	}
	d, err := s.backlog(ctx, job.QueueSynth)
	if err != nil {
		return f, err
	}
	f.backlog = d.GetStats().GetApproximateBacklogCount()
	f.byKey = map[int32]int64{}
	for k, st := range d.GetStatsByPriorityKey() {
		f.byKey[k] = st.GetApproximateBacklogCount()
	}
	if d, err = s.backlog(ctx, job.QueueSynthUrgent); err != nil {
		return f, err
	}
	f.urgent = d.GetStats().GetApproximateBacklogCount()
	pollers, err := batch.Fleet(ctx, s.cfg.Temporal)
	if err != nil {
		return f, err
	}
	f.devices = devices(pollers)
	return f, nil
}

// unlabelled names the queue of running jobs whose workflow carries no
// proof name (started by a release before job.MemoProof).
const unlabelled = "unlabelled"

// runningByKind counts the running sector workflows by their kind's cuzk
// name, from the proof name in each one's memo (job.MemoProof) and the
// scheme that owns it; a job of a proof no cuzk kind serves (a test
// scheme's profile, a submitted file's) is counted under its proof name.
// Running jobs are few (a fleet's in-flight sectors), so listing them is
// cheap where counting all of history would not be.
func (s *Server) runningByKind(ctx context.Context) (map[string]int64, error) {
	out := map[string]int64{}
	req := &workflowservice.ListWorkflowExecutionsRequest{Namespace: s.namespace(), PageSize: 1000,
		Query: sectorsIn("Running")}
	for {
		r, err := s.cfg.Temporal.ListWorkflow(ctx, req)
		if err != nil {
			return nil, fmt.Errorf("list running sector workflows: %w", err)
		}
		for _, w := range r.GetExecutions() {
			out[s.queueOf(w.GetMemo().GetFields()[job.MemoProof])]++
		}
		if len(r.GetNextPageToken()) == 0 {
			return out, nil
		}
		req.NextPageToken = r.GetNextPageToken()
	}
}

// queueOf is the queue a job whose memo's proof name is p is counted in.
func (s *Server) queueOf(p *commonpb.Payload) string {
	var proof string
	if p == nil || converter.GetDefaultDataConverter().FromPayload(p, &proof) != nil || proof == "" {
		return unlabelled
	}
	if k, ok := s.cfg.Schemes.KindOf(proof); ok {
		if name, ok := cuzkName(k); ok {
			return name
		}
	}
	return proof
}

// pending is the synthesis tasks waiting at the priorities of policy p:
// an urgent kind's in the urgent queue, another's in the synthesis queue
// at its priority keys. Kinds whose priorities overlap (PoRep and
// SnapDeals, 3 and 4) each report the backlog at the keys they share: a
// task carries its priority, not its kind.
func (f fleetStatus) pending(p scheme.Policy) int64 {
	if p.Urgent() {
		return f.urgent
	}
	var n int64
	seen := map[int]bool{}
	for _, prio := range []int{p.Priorities.High, p.Priorities.Normal, p.Priorities.Low} {
		if key := job.TaskPriority(prio); !seen[key] {
			seen[key] = true
			n += f.byKey[int32(key)]
		}
	}
	return n
}

// queues is every kind's queue: each cuzk kind this gateway proves or has
// running jobs of, in cuzk's order, then the other queues with running
// jobs by name. Pending counts partitions waiting for a synthesis slot,
// in progress the kind's running jobs.
func (s *Server) queues(f fleetStatus) []*cuzkpb.QueueStatus {
	running := f.byKind
	var out []*cuzkpb.QueueStatus
	listed := map[string]bool{}
	for _, k := range slices.Sorted(maps.Keys(cuzkKinds)) {
		name := kindName(k)
		if !s.proves(k) && running[name] == 0 {
			continue
		}
		p, ok := s.policy(k)
		q := &cuzkpb.QueueStatus{ProofKind: name, InProgress: clampU32(running[name])}
		if ok {
			q.Pending = clampU32(f.pending(p))
		}
		out = append(out, q)
		listed[name] = true
	}
	for _, name := range slices.Sorted(maps.Keys(running)) {
		if !listed[name] {
			out = append(out, &cuzkpb.QueueStatus{ProofKind: name, InProgress: clampU32(running[name])})
		}
	}
	return out
}

// namespace is the client's namespace ("default" unless the operator's
// flags say otherwise).
func (s *Server) namespace() string {
	if s.cfg.Namespace != "" {
		return s.cfg.Namespace
	}
	return "default"
}

// devices lists each proving device of the workers that poll the shared
// queues, once, from their identities ("id host=.. roles=.. devices=a,b
// budget=N").
func devices(pollers []batch.Poller) []*cuzkpb.GPUStatus {
	seen := map[string]bool{}
	var out []*cuzkpb.GPUStatus
	for _, p := range pollers {
		fields := strings.Fields(p.Identity)
		if len(fields) == 0 || seen[fields[0]] {
			continue
		}
		seen[fields[0]] = true
		for _, f := range fields[1:] {
			list, ok := strings.CutPrefix(f, "devices=")
			if !ok || list == "" {
				continue
			}
			for _, d := range strings.Split(list, ",") {
				out = append(out, &cuzkpb.GPUStatus{Name: fields[0] + "/" + d})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	for i, g := range out {
		g.Ordinal = uint32(i)
	}
	return out
}

// GetStatus reports the fleet as Temporal sees it: every worker's device
// (worker id / device), every kind's queue (queues: pending partitions,
// running jobs), the completed and failed sector proofs, and this
// gateway's uptime. With --forward, the upstream server's devices follow
// c2flow's, and its queues are added to those of the same kind.
func (s *Server) GetStatus(ctx context.Context, _ *cuzkpb.GetStatusRequest) (*cuzkpb.GetStatusResponse, error) {
	f, err := s.fleet(ctx)
	if err != nil {
		return nil, status.Errorf(codes.Unavailable, "c2flow fleet status: %v", err)
	}
	resp := &cuzkpb.GetStatusResponse{
		Gpus:                 slices.Clone(f.devices), // the reading is shared (fleet)
		Queues:               s.queues(f),
		TotalProofsCompleted: uint64(f.completed),
		TotalProofsFailed:    uint64(f.fail),
		UptimeSeconds:        uint64(time.Since(s.started) / time.Second),
	}
	if s.cfg.Forward != nil {
		up, err := s.cfg.Forward.GetStatus(ctx, &cuzkpb.GetStatusRequest{})
		if err != nil {
			s.log.Warn("forward server's status not read", "to", s.cfg.ForwardAddr, "error", err)
		} else {
			for _, g := range up.GetGpus() {
				g.Name = "forward " + s.cfg.ForwardAddr + "/" + g.GetName()
				g.Ordinal = uint32(len(resp.Gpus))
				resp.Gpus = append(resp.Gpus, g)
			}
			resp.Queues = merge(resp.Queues, up.GetQueues())
			resp.LoadedSrs = up.GetLoadedSrs()
		}
	}
	return resp, nil
}

// merge adds the upstream's queues to ours: one queue per kind.
func merge(ours, up []*cuzkpb.QueueStatus) []*cuzkpb.QueueStatus {
	for _, q := range up {
		i := slices.IndexFunc(ours, func(o *cuzkpb.QueueStatus) bool { return o.GetProofKind() == q.GetProofKind() })
		if i < 0 {
			ours = append(ours, q)
			continue
		}
		ours[i].Pending = clampU32(int64(ours[i].Pending) + int64(q.GetPending()))
		ours[i].InProgress = clampU32(int64(ours[i].InProgress) + int64(q.GetInProgress()))
	}
	return ours
}

func clampU32(v int64) uint32 {
	return uint32(min(max(v, 0), 1<<32-1))
}

// GetMetrics returns the gateway's counters and the fleet's state in
// Prometheus' text format.
func (s *Server) GetMetrics(ctx context.Context, _ *cuzkpb.GetMetricsRequest) (*cuzkpb.GetMetricsResponse, error) {
	if f, err := s.fleet(ctx); err != nil {
		s.log.Warn("fleet metrics not read", "error", err)
	} else {
		for what, v := range map[string]int64{"sectors_running": f.running(), "synthesis_backlog": f.backlog,
			"sectors_completed": f.completed, "sectors_failed": f.fail, "devices": int64(len(f.devices))} {
			s.metrics.fleet.WithLabelValues(what).Set(float64(v))
		}
		s.metrics.jobs.Reset() // a kind with none running is no longer listed
		for name, n := range f.byKind {
			s.metrics.jobs.WithLabelValues(name).Set(float64(n))
		}
	}
	mfs, err := s.metrics.reg.Gather()
	if err != nil {
		return nil, status.Errorf(codes.Internal, "gather metrics: %v", err)
	}
	var b bytes.Buffer
	enc := expfmt.NewEncoder(&b, expfmt.NewFormat(expfmt.TypeTextPlain))
	for _, mf := range mfs {
		if err := enc.Encode(mf); err != nil {
			return nil, status.Errorf(codes.Internal, "encode metrics: %v", err)
		}
	}
	return &cuzkpb.GetMetricsResponse{PrometheusText: b.String()}, nil
}
