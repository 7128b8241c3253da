// Package metrics exposes a worker's Prometheus metrics: partition phase
// durations, the memory budget, device-slot busy time, retries and
// failures by kind, and the Temporal SDK's own worker metrics.
//
// The SDK's metrics reach Prometheus through SDKHandler, a small
// client.MetricsHandler over client_golang: the SDK's own adapters
// (contrib/tally, contrib/opentelemetry) are separate modules the module
// proxy here does not serve.
package metrics

import (
	"fmt"
	"net"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	sdkmetrics "go.temporal.io/sdk/client"

	"github.com/c2flow/c2flow/job"
)

// phases are the values of the phase label of c2flow_partition_phase_seconds.
var phases = []string{"synth", "queue", "device", "finalize"}

// observed are the activities whose attempts and failures are counted.
var observed = []string{job.ActValidateC1, job.ActSynthesize, job.ActDevicePhase, job.ActFinalize, job.ActStoreC2, job.ActLookupC2}

// failureKinds are the values of the kind label of
// c2flow_activity_failures_total: the application error types, then
// canceled and other.
var failureKinds = []string{job.ErrBadC1, job.ErrWitnessLost, job.ErrInvalidProof, job.ErrNoKeys, job.ErrHostLost, job.ErrDeadlinePassed, "canceled", "other"}

// Metrics are one worker process's metrics.
type Metrics struct {
	Registry *prometheus.Registry
	Phase    *prometheus.HistogramVec // seconds, label phase: synth, queue, device, finalize
	Retries  *prometheus.CounterVec   // activity attempts after the first, label activity
	Failures *prometheus.CounterVec   // labels activity, kind

	mu         sync.Mutex
	budgetFunc func() Budget
	busyFunc   func() map[string]time.Duration
}

// Budget is what the budget gauges read of a host's memory budget.
type Budget struct {
	Max, Running, Held, Peak int
	// HeldBytes are the synthesized witnesses in memory, packed.
	HeldBytes int64
	// KeyBytes, SystemBytes and ExpansionBytes are held for the circuits
	// loaded: their proving keys' points, their recorded constraint
	// systems, and what the device lanes may hold at once (one device
	// phase's expansion each: a, b, c's NTT vectors and scalars).
	KeyBytes, SystemBytes, ExpansionBytes int64
}

// Bind sets where the budget and device gauges are read at scrape time
// (the worker binds them once its budget and slots exist).
func (m *Metrics) Bind(budget func() Budget, busy func() map[string]time.Duration) {
	m.mu.Lock()
	m.budgetFunc, m.busyFunc = budget, busy
	m.mu.Unlock()
}

func (m *Metrics) budget() Budget {
	m.mu.Lock()
	f := m.budgetFunc
	m.mu.Unlock()
	if f == nil {
		return Budget{}
	}
	return f()
}

func (m *Metrics) busy() map[string]time.Duration {
	m.mu.Lock()
	f := m.busyFunc
	m.mu.Unlock()
	if f == nil {
		return nil
	}
	return f()
}

// New returns the metrics; Bind connects the budget and device gauges.
func New() *Metrics {
	r := prometheus.NewRegistry()
	m := &Metrics{
		Registry: r,
		Phase: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "c2flow_partition_phase_seconds", Help: "Duration of a partition's phase: synth, queue (device phase scheduled to started), device, finalize.",
			Buckets: prometheus.ExponentialBuckets(0.05, 2, 14),
		}, []string{"phase"}),
		Retries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "c2flow_activity_retries_total", Help: "Activity attempts after the first.",
		}, []string{"activity"}),
		Failures: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "c2flow_activity_failures_total", Help: "Failed activities by kind (BadC1, WitnessLost, InvalidProof, NoKeys, canceled, other).",
		}, []string{"activity", "kind"}),
	}
	r.MustRegister(m.Phase, m.Retries, m.Failures)
	// Every known series exists from the first scrape, at zero: a rate
	// over a series that appears with its first event misses that event,
	// and a dashboard panel of a counter nothing has incremented yet
	// shows 0, not "no data".
	for _, p := range phases {
		m.Phase.WithLabelValues(p)
	}
	for _, a := range observed {
		m.Retries.WithLabelValues(a)
		for _, k := range failureKinds {
			m.Failures.WithLabelValues(a, k)
		}
	}
	budget, busy := m.budget, m.busy
	gauge := func(name, help string, f func() float64) {
		r.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, f))
	}
	gauge("c2flow_budget_partitions_max", "Partition budget of this host.", func() float64 { return float64(budget().Max) })
	gauge("c2flow_budget_partitions_running", "Syntheses running.", func() float64 { return float64(budget().Running) })
	gauge("c2flow_budget_partitions_held", "Synthesized witnesses in memory.", func() float64 { return float64(budget().Held) })
	gauge("c2flow_budget_held_bytes", "Bytes of synthesized witnesses in memory, packed.", func() float64 { return float64(budget().HeldBytes) })
	gauge("c2flow_budget_partitions_peak", "Most partitions in flight at once since start.", func() float64 { return float64(budget().Peak) })
	gauge("c2flow_budget_key_bytes", "Bytes of the proving keys loaded.", func() float64 { return float64(budget().KeyBytes) })
	gauge("c2flow_budget_system_bytes", "Bytes of the loaded circuits' recorded constraint systems (a, b, c are evaluated from them at the device).",
		func() float64 { return float64(budget().SystemBytes) })
	gauge("c2flow_budget_expansion_bytes", "Bytes the device lanes may hold at once: one device phase's expansion (NTT vectors, scalars) per lane.",
		func() float64 { return float64(budget().ExpansionBytes) })
	r.MustRegister(&busyCollector{busy: busy, desc: prometheus.NewDesc("c2flow_device_busy_seconds_total", "Time each device slot has been held.", []string{"device"}, nil)})
	r.MustRegister(prometheus.NewGoCollector(), prometheus.NewProcessCollector(prometheus.ProcessCollectorOpts{}))
	return m
}

type busyCollector struct {
	busy func() map[string]time.Duration
	desc *prometheus.Desc
}

func (c *busyCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }
func (c *busyCollector) Collect(ch chan<- prometheus.Metric) {
	for d, v := range c.busy() {
		ch <- prometheus.MustNewConstMetric(c.desc, prometheus.CounterValue, v.Seconds(), d)
	}
}

// ListenAddr is the address Serve listens on for addr: a port alone
// ("9464" or ":9464") is 127.0.0.1 only, so metrics leave the host only
// when a host is named ("0.0.0.0:9464", "10.0.0.5:9464").
func ListenAddr(addr string) (string, error) {
	if addr == "" {
		return "", fmt.Errorf("metrics address is empty")
	}
	if !strings.Contains(addr, ":") {
		addr = ":" + addr
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("metrics address %q: %w", addr, err)
	}
	if port == "" {
		return "", fmt.Errorf("metrics address %q has no port", addr)
	}
	if host == "" {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, port), nil
}

// Serve serves /metrics on addr (see ListenAddr) until the listener fails;
// it returns the bound address (useful with port 0) and a stop function.
func (m *Metrics) Serve(addr string) (string, func(), error) {
	addr, err := ListenAddr(addr)
	if err != nil {
		return "", nil, err
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return "", nil, fmt.Errorf("metrics listen on %s: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(m.Registry, promhttp.HandlerOpts{}))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go srv.Serve(l)
	return l.Addr().String(), func() { srv.Close() }, nil
}

// SDKHandler adapts the registry to the Temporal SDK's metrics handler.
func (m *Metrics) SDKHandler() sdkmetrics.MetricsHandler {
	return &sdkHandler{reg: &sdkRegistry{r: m.Registry, vecs: map[string]*sdkVec{}}}
}

type sdkRegistry struct {
	r    *prometheus.Registry
	mu   sync.Mutex
	vecs map[string]*sdkVec
}

// sdkVec is one SDK metric: its label names are fixed by the first use;
// later uses fill missing labels with "" and drop unknown ones.
type sdkVec struct {
	labels  []string
	counter *prometheus.CounterVec
	gauge   *prometheus.GaugeVec
	hist    *prometheus.HistogramVec
}

type sdkHandler struct {
	reg  *sdkRegistry
	tags map[string]string
}

func (h *sdkHandler) WithTags(t map[string]string) sdkmetrics.MetricsHandler {
	n := make(map[string]string, len(h.tags)+len(t))
	for k, v := range h.tags {
		n[k] = v
	}
	for k, v := range t {
		n[k] = v
	}
	return &sdkHandler{reg: h.reg, tags: n}
}

func sanitize(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' {
			return r
		}
		return '_'
	}, s)
}

func (h *sdkHandler) vec(name, kind string) (*sdkVec, []string) {
	h.reg.mu.Lock()
	defer h.reg.mu.Unlock()
	// The SDK's names carry their own temporal_ prefix; others get one.
	full := sanitize(name)
	if !strings.HasPrefix(full, "temporal_") {
		full = "temporal_" + full
	}
	v, ok := h.reg.vecs[full]
	if !ok {
		v = &sdkVec{}
		for k := range h.tags {
			v.labels = append(v.labels, sanitize(k))
		}
		sort.Strings(v.labels)
		switch kind {
		case "counter":
			v.counter = prometheus.NewCounterVec(prometheus.CounterOpts{Name: full + "_total", Help: "Temporal SDK counter " + name}, v.labels)
			h.reg.r.MustRegister(v.counter)
		case "gauge":
			v.gauge = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: full, Help: "Temporal SDK gauge " + name}, v.labels)
			h.reg.r.MustRegister(v.gauge)
		default:
			v.hist = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: full + "_seconds", Help: "Temporal SDK timer " + name,
				Buckets: prometheus.ExponentialBuckets(0.001, 4, 10)}, v.labels)
			h.reg.r.MustRegister(v.hist)
		}
		h.reg.vecs[full] = v
	}
	vals := make([]string, len(v.labels))
	for k, val := range h.tags {
		for i, l := range v.labels {
			if l == sanitize(k) {
				vals[i] = val
			}
		}
	}
	return v, vals
}

type counter struct{ c prometheus.Counter }

func (c counter) Inc(d int64) {
	if d > 0 {
		c.c.Add(float64(d))
	}
}

type gauge struct{ g prometheus.Gauge }

func (g gauge) Update(v float64) { g.g.Set(v) }

type timer struct{ o prometheus.Observer }

func (t timer) Record(d time.Duration) { t.o.Observe(d.Seconds()) }

type nopCounter struct{}

func (nopCounter) Inc(int64) {}

func (h *sdkHandler) Counter(name string) sdkmetrics.MetricsCounter {
	v, vals := h.vec(name, "counter")
	if v.counter == nil {
		return nopCounter{} // the name was first used as another kind
	}
	return counter{v.counter.WithLabelValues(vals...)}
}

type nopGauge struct{}

func (nopGauge) Update(float64) {}

func (h *sdkHandler) Gauge(name string) sdkmetrics.MetricsGauge {
	v, vals := h.vec(name, "gauge")
	if v.gauge == nil {
		return nopGauge{}
	}
	return gauge{v.gauge.WithLabelValues(vals...)}
}

type nopTimer struct{}

func (nopTimer) Record(time.Duration) {}

func (h *sdkHandler) Timer(name string) sdkmetrics.MetricsTimer {
	v, vals := h.vec(name, "timer")
	if v.hist == nil {
		return nopTimer{}
	}
	return timer{v.hist.WithLabelValues(vals...)}
}
