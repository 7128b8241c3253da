package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
	tlog "go.temporal.io/sdk/log"

	"github.com/c2flow/c2flow/activities"
	"github.com/c2flow/c2flow/devstack"
	"github.com/c2flow/c2flow/metrics"
	"github.com/c2flow/c2flow/registry"
	"github.com/c2flow/c2flow/scheme/testscheme"
	"github.com/c2flow/c2flow/scheme/testscheme/params"
	"github.com/c2flow/c2flow/scheme/testscheme/params/paramstest"
	"github.com/c2flow/c2flow/storage"
	"github.com/c2flow/c2flow/storage/s3test"
)

const envWorker = "C2FLOW_TEST_WORKER"

// workerConfig is what a worker process started by a test runs with.
type workerConfig struct {
	Temporal string            `json:"temporal"`
	S3       storage.Config    `json:"s3"`
	Host     activities.Config `json:"host"`
	Keys     registry.Options  `json:"keys"`    // where its schemes find their keys
	Metrics  string            `json:"metrics"` // address of the Prometheus endpoint, if any
	// InfoLog logs the host at info (its partitions' timing lines) for a
	// test that reads its output; otherwise warn.
	InfoLog bool `json:"info_log,omitempty"`
}

func TestMain(m *testing.M) {
	if v := os.Getenv(envWorker); v != "" {
		os.Exit(runWorker(v))
	}
	if v := os.Getenv(envTemporal); v != "" {
		os.Exit(runTemporal(v))
	}
	s3test.Main(m)
}

// runWorker is the body of a worker process: the real host package, as
// cmd/worker runs it.
func runWorker(cfgJSON string) int {
	var cfg workerConfig
	if err := json.Unmarshal([]byte(cfgJSON), &cfg); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	quiet := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	cfg.Host.Log = quiet
	if cfg.InfoLog {
		cfg.Host.Log = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	}
	opts := client.Options{HostPort: cfg.Temporal, Logger: tlog.NewStructuredLogger(quiet)}
	if cfg.Metrics != "" {
		cfg.Host.Metrics = metrics.New()
		_, stopMetrics, err := cfg.Host.Metrics.Serve(cfg.Metrics)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer stopMetrics()
		opts.MetricsHandler = cfg.Host.Metrics.SDKHandler()
	}
	c, err := client.DialContext(ctx, opts)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer c.Close()
	st, err := storage.Open(ctx, cfg.S3)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	cfg.Keys.Remote, cfg.Keys.Log = st, quiet
	cfg.Host.Schemes = registry.Schemes(cfg.Keys)
	deps, err := activities.ProverDeps(ctx, st, cfg.Host)
	if err != nil {
		fmt.Fprintln(os.Stderr, "worker:", err)
		return 3
	}
	w, err := activities.New(c, st, cfg.Host, deps)
	if err != nil {
		fmt.Fprintln(os.Stderr, "worker:", err)
		return 3
	}
	if err := w.Run(ctx); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// stack is a real Temporal server (in this process), a real S3 server (a
// child process) and worker processes.
type stack struct {
	t        *testing.T
	temporal *devstack.Server
	s3       *s3test.Server
	store    *storage.Store
	client   client.Client
	keys     *params.Keys
}

func newStack(t *testing.T, profile string) *stack {
	t.Helper()
	return newStackAt(t, profile, stackAt{})
}

// stackAt places a stack's servers: Temporal on TemporalIP and S3 on S3IP
// (empty: 127.0.0.1), for workers that reach them over a network; Temporal
// on the PostgreSQL database of Postgres with four history shards (the
// production shape) instead of SQLite.
type stackAt struct {
	TemporalIP, S3IP string
	Postgres         string
}

// newStackAt is newStack with its servers placed by at.
func newStackAt(t *testing.T, profile string, at stackAt) *stack {
	t.Helper()
	s := &stack{t: t}
	s.s3 = s3test.Start(t)
	if at.S3IP != "" {
		// Same port, on the address the workers reach.
		_, port, _ := net.SplitHostPort(s.s3.Addr)
		s.s3.Stop()
		s.s3.Addr = net.JoinHostPort(at.S3IP, port)
		s.s3.Restart()
	}
	s.store = s.s3.Store("c2flow")
	opts := devstack.Options{DBFile: filepath.Join(t.TempDir(), "temporal.db"), IP: at.TemporalIP}
	if at.Postgres != "" {
		opts = devstack.Options{Postgres: at.Postgres, HistoryShards: 4, IP: at.TemporalIP, Log: serverLog(t), LogLevel: "warn"}
	}
	var err error
	s.temporal, err = devstack.Start(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.temporal.Stop)
	s.client, err = client.Dial(client.Options{HostPort: s.temporal.Addr(),
		Logger: tlog.NewStructuredLogger(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.client.Close)
	s.keys = paramstest.Keys(t, profile)
	keys := testscheme.New(params.Cache{Local: params.DirStore{Root: paramstest.Dir()}, Remote: s.store})
	if err := keys.EnsureKeys(context.Background(), s.keys.Profile.Name, true, io.Discard); err != nil {
		t.Fatal(err)
	}
	return s
}

// serverLog is a file for a Temporal server's log, shown if the test
// fails: on PostgreSQL, while the database is down, the server logs every
// failed write with its stack, too much for a passing test's output.
func serverLog(t *testing.T) io.Writer {
	t.Helper()
	path := filepath.Join(t.TempDir(), "temporal.log")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		f.Close()
		if t.Failed() {
			b, _ := os.ReadFile(path)
			t.Logf("temporal server log:\n%s", b)
		}
	})
	return f
}

// workerProc is a worker process.
type workerProc struct {
	t     *testing.T
	id    string
	cmd   *exec.Cmd
	stats string
	done  chan error
}

func (s *stack) startWorker(id string, hc activities.Config) *workerProc {
	return s.startWorkerMetrics(id, hc, "")
}

// startWorkerKeys starts a worker whose schemes find their keys as keys
// says (its test-scheme key cache is always its own).
func (s *stack) startWorkerKeys(id string, hc activities.Config, keys registry.Options) *workerProc {
	s.t.Helper()
	return s.startWorkerCmd(s.temporal.Addr(), id, hc, keys, "", s.s3.Config("c2flow"), nil, os.Stderr)
}

// startWorkerAt starts a worker against another Temporal server.
func (s *stack) startWorkerAt(temporal, id string, hc activities.Config) *workerProc {
	return s.startWorkerFull(temporal, id, hc, "")
}

func quietSDKLogger() tlog.Logger {
	return tlog.NewStructuredLogger(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError})))
}

// startWorkerMetrics starts a worker serving Prometheus metrics on addr.
func (s *stack) startWorkerMetrics(id string, hc activities.Config, metricsAddr string) *workerProc {
	return s.startWorkerFull(s.temporal.Addr(), id, hc, metricsAddr)
}

func (s *stack) startWorkerFull(temporal, id string, hc activities.Config, metricsAddr string) *workerProc {
	s.t.Helper()
	return s.startWorkerCmd(temporal, id, hc, registry.Options{}, metricsAddr, s.s3.Config("c2flow"), nil, os.Stderr)
}

// startWorkerCmd starts a worker process with S3 configuration s3c: the
// test binary, run under prefix (e.g. ip netns exec NS) if set, its output
// to out.
func (s *stack) startWorkerCmd(temporal, id string, hc activities.Config, keys registry.Options, metricsAddr string, s3c storage.Config, prefix []string, out io.Writer) *workerProc {
	s.t.Helper()
	hc.ID = id
	keys.ParamsDir = s.t.TempDir() // its own cache: keys come down from S3
	hc.StatsFile = filepath.Join(s.t.TempDir(), id+".json")
	if len(hc.Profiles) == 0 {
		hc.Profiles = []string{s.keys.Profile.Name}
	}
	b, _ := json.Marshal(workerConfig{Temporal: temporal, S3: s3c, Host: hc, Keys: keys, Metrics: metricsAddr, InfoLog: out != io.Writer(os.Stderr)})
	argv := append(append([]string{}, prefix...), os.Args[0], "-test.run=^$")
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), envWorker+"="+string(b))
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		s.t.Fatal(err)
	}
	w := &workerProc{t: s.t, id: id, cmd: cmd, stats: hc.StatsFile, done: make(chan error, 1)}
	go func() { w.done <- cmd.Wait() }()
	s.t.Cleanup(w.kill)
	return w
}

// stopWithin is how long a stopped worker is given to exit: its drain
// (activities.Config.DrainTimeout, 2 minutes by default) and then some.
const stopWithin = 150 * time.Second

// stop sends SIGTERM and waits: the worker stops polling, finishes its
// activities and writes its final stats.
func (w *workerProc) stop() error {
	if w.cmd.ProcessState != nil {
		return nil
	}
	w.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-w.done:
		return err
	case <-time.After(stopWithin):
		w.kill()
		return fmt.Errorf("worker %s did not stop in %v", w.id, stopWithin)
	}
}

// kill is kill -9.
func (w *workerProc) kill() {
	if w.cmd.ProcessState == nil {
		w.cmd.Process.Kill()
		<-w.done
	}
}

func (w *workerProc) readStats() activities.Stats {
	w.t.Helper()
	var st activities.Stats
	b, err := os.ReadFile(w.stats)
	if err != nil {
		w.t.Fatalf("worker %s stats: %v", w.id, err)
	}
	if err := json.Unmarshal(b, &st); err != nil {
		w.t.Fatal(err)
	}
	return st
}

// waitStats waits until the worker has written stats that satisfy ok.
func (w *workerProc) waitStats(timeout time.Duration, ok func(activities.Stats) bool) activities.Stats {
	w.t.Helper()
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if b, err := os.ReadFile(w.stats); err == nil {
			var st activities.Stats
			if json.Unmarshal(b, &st) == nil && ok(st) {
				return st
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	b, _ := os.ReadFile(w.stats)
	w.t.Fatalf("worker %s: condition not reached in %v; last stats: %s", w.id, timeout, b)
	return activities.Stats{}
}
