package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/c2flow/c2flow/batch"
	"github.com/c2flow/c2flow/cmd/internal/cliflags"
	"github.com/c2flow/c2flow/devstack"
	"github.com/c2flow/c2flow/host"
	"github.com/c2flow/c2flow/params"
	"github.com/c2flow/c2flow/porep"
	"github.com/c2flow/c2flow/storage"
	"github.com/c2flow/c2flow/storage/s3server"
)

// devStack is the embedded default: Temporal (SQLite), S3-compatible
// storage (versitygw) and one worker, in this process.
type devStack struct {
	temporal *devstack.Server
	client   client.Client
	store    *storage.Store
	worker   *host.Worker
	s3Addr   string
	done     chan error         // the worker's Run
	s3done   chan error         // the embedded S3 server's Run
	cancel   context.CancelFunc // the worker's context
	s3cancel context.CancelFunc // the embedded S3 server's context; nil without one
}

type devFlags struct {
	dir      string
	port     int
	s3Addr   string
	external bool
	s3       cliflags.S3
	tf       cliflags.Temporal
	hostCfg  func() (host.Config, error)
	logFlags cliflags.Log
	ui       string // Temporal Web UI address; empty: none (only `c2flow dev` serves it)
}

// stackDefaults are the defaults of the stack's flags. `c2flow dev` serves
// on fixed ports that other commands reach by default; demo and bench
// batch run the stack for themselves on free ports (port 0), each in its
// own data directory.
type stackDefaults struct {
	dir    string
	port   int
	s3Addr string
}

func (d *devFlags) add(fs *flag.FlagSet, def stackDefaults) error {
	fs.StringVar(&d.dir, "dir", def.dir, "data directory: Temporal's SQLite file, the S3 data and this run's logs")
	fs.IntVar(&d.port, "temporal-port", def.port, "embedded Temporal frontend port (0: any free port)")
	fs.StringVar(&d.s3Addr, "s3-listen", def.s3Addr, "embedded S3 server address (port 0: any free port)")
	fs.BoolVar(&d.external, "external-s3", false, "use the S3 of the --s3-* flags instead of the embedded server")
	d.s3.Add(fs)
	d.logFlags.Add(fs, "warn")
	var err error
	d.hostCfg, err = cliflags.AddHost(fs)
	return err
}

// runLogs are the log files of one run in its data directory, rewritten
// by each run: NAME.log, c2flow's own log at info whatever the terminal's
// level (its SYNTH_END, GPU_END and FINALIZE_END lines are what `c2flow
// bench stats` reads), and NAME-temporal.log, the embedded Temporal server's.
// With --log-level debug the server logs to the terminal instead. (The
// Temporal SDK logs through log at warn, as c2flow's workflows and
// activities log through it.)
type runLogs struct {
	log      *slog.Logger // the terminal at --log-level, the file at info
	path     string       // NAME.log
	server   io.Writer    // the Temporal server's log; nil: the terminal
	serverAt string       // its path, empty for the terminal
	files    []*os.File
}

// openLogs makes the data directory absolute (the embedded S3 server
// changes the working directory), creates it and opens the run's logs.
func (d *devFlags) openLogs(name string) (*runLogs, error) {
	dir, err := filepath.Abs(d.dir)
	if err != nil {
		return nil, err
	}
	d.dir = dir
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("data directory: %w", err)
	}
	r := &runLogs{path: filepath.Join(dir, name+".log")}
	f, err := os.Create(r.path)
	if err != nil {
		return nil, fmt.Errorf("run log: %w", err)
	}
	r.files = append(r.files, f)
	if r.log, err = d.logFlags.LoggerTo(f); err != nil {
		r.close()
		return nil, err
	}
	if !d.logFlags.Debug() {
		r.serverAt = filepath.Join(dir, name+"-temporal.log")
		sf, err := os.Create(r.serverAt)
		if err != nil {
			r.close()
			return nil, fmt.Errorf("temporal server log: %w", err)
		}
		r.files = append(r.files, sf)
		r.server = sf
	}
	return r, nil
}

func (r *runLogs) close() {
	for _, f := range r.files {
		f.Close()
	}
}

// start brings the stack up, telling notes what a user waits for (a
// development setup of missing keys). It makes every path absolute first:
// the embedded S3 server changes the process's working directory.
func (d *devFlags) start(ctx context.Context, profiles []string, logs *runLogs, notes io.Writer) (*devStack, error) {
	dir, err := filepath.Abs(d.dir)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	hc, err := d.hostCfg()
	if err != nil {
		return nil, err
	}
	if hc.ParamsDir, err = filepath.Abs(hc.ParamsDir); err != nil {
		return nil, err
	}
	hc.Profiles = profiles
	hc.Log = logs.log
	// The S3 server has a context of its own, not ended by Ctrl-C: it
	// stops last, after the worker has handed back its work.
	wctx, cancel := context.WithCancel(ctx)
	s := &devStack{done: make(chan error, 1), s3done: make(chan error, 1), cancel: cancel}
	s3cfg := d.s3.Config()
	if !d.external && strings.HasSuffix(d.s3Addr, ":0") {
		// versitygw wants a concrete port: pick a free one.
		if d.s3Addr, err = s3server.FreeAddr(); err != nil {
			cancel()
			return nil, err
		}
	}
	if !d.external {
		s.s3Addr = d.s3Addr
		key, secret := "c2flow-dev", "c2flow-dev-secret"
		s3ctx, s3cancel := context.WithCancel(context.WithoutCancel(ctx))
		s.s3cancel = s3cancel
		cfg := s3server.Config{Addr: d.s3Addr, Dir: filepath.Join(dir, "s3"), AccessKey: key, SecretKey: secret, Verbose: d.logFlags.Debug()}
		go func() { s.s3done <- s3server.Run(s3ctx, cfg) }()
		rctx, rcancel := context.WithTimeout(ctx, 10*time.Second)
		err := s3server.WaitReady(rctx, d.s3Addr)
		rcancel()
		if err != nil {
			s.stop()
			return nil, err
		}
		s3cfg.Endpoint, s3cfg.AccessKey, s3cfg.SecretKey, s3cfg.PathStyle = "http://"+d.s3Addr, key, secret, true
	}
	if s.store, err = storage.Open(ctx, s3cfg); err == nil {
		err = s.store.EnsureBucket(ctx)
	}
	if err != nil {
		s.stop()
		return nil, err
	}
	to := devstack.Options{DBFile: filepath.Join(dir, "temporal.db"), Port: d.port, Log: logs.server, LogLevel: "warn", UI: d.ui}
	if logs.server == nil {
		to.LogLevel = "info" // --log-level debug: the server's log on the terminal
	}
	if s.temporal, err = devstack.Start(to); err != nil {
		s.stop()
		return nil, err
	}
	tf := cliflags.Temporal{Address: s.temporal.Addr(), Namespace: s.temporal.Namespace()}
	if s.client, err = tf.Dial(ctx, logs.log); err != nil {
		s.stop()
		return nil, err
	}
	var ps []porep.Profile
	for _, n := range profiles {
		p, err := porep.LookupProfile(n)
		if err != nil {
			s.stop()
			return nil, err
		}
		ps = append(ps, p)
	}
	if err := ensureKeys(ctx, s.store, hc.ParamsDir, ps, notes); err != nil {
		s.stop()
		return nil, err
	}
	if s.worker, err = host.New(wctx, s.client, s.store, hc); err != nil {
		s.stop()
		return nil, err
	}
	go func() { s.done <- s.worker.Run(wctx) }()
	return s, nil
}

// ensureKeys is batch.EnsureKeys that says, once, when a profile has no
// keys yet and a development setup makes them, and how long that took: the
// wait of a cold start.
func ensureKeys(ctx context.Context, store *storage.Store, paramsDir string, ps []porep.Profile, notes io.Writer) error {
	missing, err := missingKeys(ctx, storage.ParamCache{Local: params.DirStore{Root: paramsDir}, S3: store}, ps)
	if err != nil {
		return err
	}
	if len(missing) == 0 {
		return batch.EnsureKeys(ctx, store, paramsDir, ps)
	}
	fmt.Fprintf(notes, "   no keys for the %s circuit yet: making development keys once (single-party setup, never for real sectors), cached in %s ...",
		strings.Join(missing, ", "), paramsDir)
	t := time.Now()
	if err := batch.EnsureKeys(ctx, store, paramsDir, ps); err != nil {
		fmt.Fprintln(notes)
		return err
	}
	fmt.Fprintf(notes, " done in %v\n", time.Since(t).Round(time.Millisecond))
	return nil
}

// missingKeys names the profiles whose keys for their current circuit
// the store lacks (a complete set has its vk: it is written last).
func missingKeys(ctx context.Context, store params.Store, ps []porep.Profile) ([]string, error) {
	var missing []string
	for _, p := range ps {
		_, digest, err := params.Compile(p)
		if err != nil {
			return nil, err
		}
		rc, err := store.Open(ctx, params.Prefix(p.Name, digest)+"vk")
		switch {
		case errors.Is(err, params.ErrNotFound):
			missing = append(missing, p.Name)
		case err != nil:
			return nil, fmt.Errorf("look for the %s keys: %w", p.Name, err)
		default:
			rc.Close()
		}
	}
	return missing, nil
}

// stop stops the worker first (it finishes or hands back its work), then
// the client, Temporal and, last, S3.
func (s *devStack) stop() {
	s.cancel()
	if s.worker != nil {
		<-s.done
	}
	if s.client != nil {
		s.client.Close()
	}
	if s.temporal != nil {
		s.temporal.Stop()
	}
	if s.s3cancel != nil {
		s.s3cancel()
		<-s.s3done
	}
}

func runDev(ctx context.Context, args []string) error {
	fs := newFlags("dev")
	var d devFlags
	if err := d.add(fs, stackDefaults{dir: ".c2flow/dev", port: 7233, s3Addr: "127.0.0.1:9000"}); err != nil {
		return err
	}
	fs.StringVar(&d.ui, "ui", "127.0.0.1:8233", "Temporal Web UI address (empty: no UI)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	shown := d.dir
	logs, err := d.openLogs("dev")
	if err != nil {
		return err
	}
	defer logs.close()
	hc, _ := d.hostCfg()
	s, err := d.start(ctx, hc.Profiles, logs, os.Stdout)
	if err != nil {
		return err
	}
	defer s.stop()
	fmt.Printf("c2flow dev stack up (Ctrl-C to stop)\n  temporal  %s (namespace %s, SQLite in %s)\n", s.temporal.Addr(), s.temporal.Namespace(), shown)
	if s.s3Addr != "" {
		fmt.Printf("  s3        http://%s bucket %s (access key c2flow-dev, secret c2flow-dev-secret)\n", s.s3Addr, s.store.Config().Bucket)
	}
	if s.temporal.UIAddr() != "" {
		fmt.Printf("  web UI    http://%s\n", s.temporal.UIAddr())
	}
	fmt.Printf("  worker    %s\n", s.worker.ID())
	fmt.Printf("  logs      %s (timing lines: c2flow bench stats %s)%s\n", relTo(shown, logs.path), relTo(shown, logs.path), serverLogNote(shown, logs))
	fmt.Printf("submit with: c2flow submit --address %s --s3-endpoint http://%s --s3-access-key c2flow-dev --s3-secret-key c2flow-dev-secret --c1 DIR --wait\n", s.temporal.Addr(), s.s3Addr)
	<-ctx.Done()
	return nil
}

// relTo names a file of the data directory under the directory's name as
// the user gave it (.c2flow/demo/demo.log, not an absolute path).
func relTo(shownDir, path string) string {
	return filepath.Join(shownDir, filepath.Base(path))
}

// serverLogNote says where the embedded Temporal server's log went.
func serverLogNote(shownDir string, logs *runLogs) string {
	if logs.serverAt == "" {
		return ""
	}
	return "; Temporal's: " + relTo(shownDir, logs.serverAt)
}
