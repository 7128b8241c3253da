package gateway

import (
	"bytes"
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"
	enumspb "go.temporal.io/api/enums/v1"
	taskqueuepb "go.temporal.io/api/taskqueue/v1"
	"go.temporal.io/api/workflowservice/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/c2flow/c2flow/batch"
	"github.com/c2flow/c2flow/gateway/cuzkpb"
	"github.com/c2flow/c2flow/job"
)

// metrics are the gateway's own counters, served by GetMetrics with the
// fleet's state as Temporal reports it.
type metrics struct {
	reg      *prometheus.Registry
	requests *prometheus.CounterVec
	results  *prometheus.CounterVec
	seconds  *prometheus.HistogramVec
	fleet    *prometheus.GaugeVec
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
	}
	uptime := prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "c2flow_gateway_uptime_seconds", Help: "Seconds since this gateway started."},
		func() float64 { return time.Since(started).Seconds() })
	m.reg.MustRegister(m.requests, m.results, m.seconds, m.fleet, uptime)
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
	devices          []*cuzkpb.GPUStatus
	running, backlog int64 // sector workflows running; synthesis tasks waiting
	completed, fail  int64 // sector workflows completed, failed
}

// countSectors counts the sector workflows in one execution status.
func (s *Server) countSectors(ctx context.Context, st string) (int64, error) {
	r, err := s.cfg.Temporal.CountWorkflow(ctx, &workflowservice.CountWorkflowExecutionsRequest{
		Query: fmt.Sprintf("WorkflowType = '%s' AND ExecutionStatus = '%s'", job.SectorWorkflowName, st)})
	if err != nil {
		return 0, fmt.Errorf("count %s sector workflows: %w", st, err)
	}
	return r.GetCount(), nil
}

func (s *Server) fleet(ctx context.Context) (fleetStatus, error) {
	var f fleetStatus
	var err error
	for _, c := range []struct {
		dst *int64
		st  string
	}{{&f.running, "Running"}, {&f.completed, "Completed"}, {&f.fail, "Failed"}} {
		if *c.dst, err = s.countSectors(ctx, c.st); err != nil {
			return f, err
		}
	}
	d, err := s.cfg.Temporal.WorkflowService().DescribeTaskQueue(ctx, &workflowservice.DescribeTaskQueueRequest{
		Namespace: s.namespace(), TaskQueue: &taskqueuepb.TaskQueue{Name: job.QueueSynth, Kind: enumspb.TASK_QUEUE_KIND_NORMAL},
		TaskQueueType: enumspb.TASK_QUEUE_TYPE_ACTIVITY, ReportStats: true})
	if err != nil {
		return f, fmt.Errorf("describe %s: %w", job.QueueSynth, err)
	}
	f.backlog = d.GetStats().GetApproximateBacklogCount()
	pollers, err := batch.Fleet(ctx, s.cfg.Temporal)
	if err != nil {
		return f, err
	}
	f.devices = devices(pollers)
	return f, nil
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
// (worker id / device), the PoRep queue (pending: partitions waiting for a
// synthesis slot; in progress: sectors being proved), the completed and
// failed sector proofs, and this gateway's uptime. With --forward, the
// upstream server's devices and queues follow c2flow's.
func (s *Server) GetStatus(ctx context.Context, _ *cuzkpb.GetStatusRequest) (*cuzkpb.GetStatusResponse, error) {
	f, err := s.fleet(ctx)
	if err != nil {
		return nil, status.Errorf(codes.Unavailable, "c2flow fleet status: %v", err)
	}
	resp := &cuzkpb.GetStatusResponse{
		Gpus:                 f.devices,
		Queues:               []*cuzkpb.QueueStatus{{ProofKind: kindName(cuzkpb.ProofKind_POREP_SEAL_COMMIT), Pending: clampU32(f.backlog), InProgress: clampU32(f.running)}},
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
			for _, q := range up.GetQueues() {
				if q.GetProofKind() != kindName(cuzkpb.ProofKind_POREP_SEAL_COMMIT) {
					resp.Queues = append(resp.Queues, q)
				}
			}
			resp.LoadedSrs = up.GetLoadedSrs()
		}
	}
	return resp, nil
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
		for what, v := range map[string]int64{"sectors_running": f.running, "synthesis_backlog": f.backlog,
			"sectors_completed": f.completed, "sectors_failed": f.fail, "devices": int64(len(f.devices))} {
			s.metrics.fleet.WithLabelValues(what).Set(float64(v))
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
