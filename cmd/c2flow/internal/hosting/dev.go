package hosting

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/c2flow/c2flow/activities"
	"github.com/c2flow/c2flow/cmd/c2flow/internal/cli"
	"github.com/c2flow/c2flow/cmd/c2flow/internal/pipeline"
	"github.com/c2flow/c2flow/cmd/internal/cliflags"
	"github.com/c2flow/c2flow/cmd/internal/procflags"
	"github.com/c2flow/c2flow/devstack"
	"github.com/c2flow/c2flow/gateway"
	"github.com/c2flow/c2flow/registry"
	"github.com/c2flow/c2flow/stack"
)

// Stack is the embedded default: Temporal (SQLite), S3-compatible
// storage (versitygw) and one worker, in this process (package stack).
type Stack struct {
	*stack.Stack
	Worker *activities.Worker
}

type StackFlags struct {
	Dir      string
	port     int
	s3Addr   string
	external bool
	S3       cliflags.S3
	tf       cliflags.Temporal
	HostCfg  func() (cliflags.Host, error)
	Log      procflags.Log
	tls      func() (*devstack.TLS, error) // the frontend's mTLS (tlsflags.go); nil: plaintext
	// filecoinParams overrides the worker's --filecoin-params (the
	// Filecoin demo's worker starts with an empty directory).
	FilecoinParams string
	ui             string // Temporal Web UI address; empty: none (only `c2flow dev` serves it)
	uiInsecure     bool   // a plain-HTTP UI beyond loopback allowed
}

// StackDefaults are the defaults of the stack's flags. `c2flow dev` serves
// on fixed ports that other commands reach by default; demo and bench
// batch run the stack for themselves on free ports (port 0), each in its
// own data directory.
type StackDefaults struct {
	Dir    string
	Port   int
	S3Addr string
}

func (d *StackFlags) Add(fs *flag.FlagSet, def StackDefaults) error {
	fs.StringVar(&d.Dir, "dir", def.Dir, "data directory: Temporal's SQLite file, the S3 data and this run's logs")
	fs.IntVar(&d.port, "temporal-port", def.Port, "embedded Temporal frontend port (0: any free port)")
	fs.StringVar(&d.s3Addr, "s3-listen", def.S3Addr, "embedded S3 server address (port 0: any free port)")
	fs.BoolVar(&d.external, "external-s3", false, "use the S3 of the --s3-* flags instead of the embedded server")
	d.S3.Add(fs)
	d.Log.Add(fs, "warn")
	var err error
	d.HostCfg, err = cliflags.AddHost(fs)
	return err
}

// RunLogs are the log files of one run in its data directory, rewritten
// by each run: NAME.log, c2flow's own log at info whatever the terminal's
// level (its SYNTH_END, GPU_END and FINALIZE_END lines are what `c2flow
// bench stats` reads), and NAME-temporal.log, the embedded Temporal server's.
// With --log-level debug the server logs to the terminal instead. (The
// Temporal SDK logs through log at warn, as c2flow's workflows and
// activities log through it.)
type RunLogs struct {
	Log *slog.Logger // the terminal at --log-level, the file at info
	// steps is the terminal (stdout) that a run's steps are written to:
	// what the log says while a step's line is open is said after it.
	Steps    *cli.StepWriter
	Path     string    // NAME.log
	server   io.Writer // the Temporal server's log; nil: the terminal
	serverAt string    // its path, empty for the terminal
	files    []*os.File
}

// openLogs makes the data directory absolute (the embedded S3 server
// changes the working directory), creates it and opens the run's logs.
func (d *StackFlags) OpenLogs(name string) (*RunLogs, error) {
	dir, err := filepath.Abs(d.Dir)
	if err != nil {
		return nil, err
	}
	d.Dir = dir
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("data directory: %w", err)
	}
	r := &RunLogs{Path: filepath.Join(dir, name+".log")}
	f, err := os.Create(r.Path)
	if err != nil {
		return nil, fmt.Errorf("run log: %w", err)
	}
	r.files = append(r.files, f)
	r.Steps = cli.NewStepWriter(os.Stdout)
	if r.Log, err = d.Log.LoggerToWrapped(f, r.Steps.Handler); err != nil {
		r.Close()
		return nil, err
	}
	if !d.Log.Debug() {
		r.serverAt = filepath.Join(dir, name+"-temporal.log")
		sf, err := os.Create(r.serverAt)
		if err != nil {
			r.Close()
			return nil, fmt.Errorf("temporal server log: %w", err)
		}
		r.files = append(r.files, sf)
		r.server = sf
	}
	return r, nil
}

func (r *RunLogs) Close() {
	for _, f := range r.files {
		f.Close()
	}
}

// start brings the stack up, telling notes what a user waits for (a
// development setup of missing keys).
func (d *StackFlags) Start(ctx context.Context, profiles []string, logs *RunLogs, notes io.Writer) (*Stack, error) {
	hc, err := d.HostCfg()
	if err != nil {
		return nil, err
	}
	hc.Profiles = profiles
	hc.Log = logs.Log
	if hc.DrainTimeout == 0 {
		// A development stack stops within half a minute (a worker host's
		// default is 2 minutes): what is not finished by then is proved
		// again at the next start.
		hc.DrainTimeout = devDrainTimeout
	}
	if d.FilecoinParams != "" {
		hc.Keys.FilecoinParams = d.FilecoinParams
	}
	// Every path absolute before the embedded S3 server changes the
	// working directory to DIR/s3 (shared/NOTES.md): relative ones would
	// be read, or written, there.
	if err := absPaths(&hc.Keys.ParamsDir, &hc.Keys.FilecoinParams, &hc.StatsFile); err != nil {
		return nil, err
	}
	if dir, ok := strings.CutPrefix(hc.Spill, "dir:"); ok {
		if err := absPaths(&dir); err != nil {
			return nil, err
		}
		hc.Spill = "dir:" + dir
	}
	o := stack.Options{Dir: d.Dir, S3Listen: d.s3Addr, S3Verbose: d.Log.Debug(), Log: logs.Log,
		Temporal: devstack.Options{Port: d.port, Log: logs.server, LogLevel: "warn", UI: d.ui, UIInsecure: d.uiInsecure}}
	if logs.server == nil {
		o.Temporal.LogLevel = "info" // --log-level debug: the server's log on the terminal
	}
	if d.external {
		o.S3 = d.S3.Config()
	} else {
		o.S3.Bucket = d.S3.Config().Bucket
	}
	if d.tls != nil {
		if o.Temporal.TLS, err = d.tls(); err != nil {
			return nil, err
		}
		if t := o.Temporal.TLS; t != nil {
			if err := absPaths(&t.CertFile, &t.KeyFile, &t.ClientCAFile); err != nil {
				return nil, err
			}
		}
	}
	st, err := stack.Start(ctx, o)
	if err != nil {
		return nil, err
	}
	s := &Stack{Stack: st}
	if err := pipeline.KeySchemes(hc.Keys.ParamsDir, s.Store, logs.Log).EnsureKeys(ctx, profiles, true, notes); err != nil {
		s.Stop()
		return nil, err
	}
	if s.Worker, err = s.AddWorker(ctx, hc.Over(s.Store), false); err != nil {
		s.Stop()
		return nil, err
	}
	return s, nil
}

// absPaths makes each non-empty path absolute.
func absPaths(paths ...*string) error {
	for _, p := range paths {
		if *p == "" {
			continue
		}
		a, err := filepath.Abs(*p)
		if err != nil {
			return fmt.Errorf("path %s: %w", *p, err)
		}
		*p = a
	}
	return nil
}

func RunDev(ctx context.Context, args []string) error {
	fs := cli.NewFlags("dev")
	var d StackFlags
	if err := d.Add(fs, StackDefaults{Dir: ".c2flow/dev", Port: 7233, S3Addr: "127.0.0.1:9000"}); err != nil {
		return err
	}
	d.tls = addServerTLS(fs) // dev only: bench batch has the client's --tls-* flags
	fs.StringVar(&d.ui, "ui", "127.0.0.1:8233", "Temporal Web UI address (empty: no UI); with --tls-* it serves HTTPS and requires a client certificate of --tls-client-ca, else loopback only")
	fs.BoolVar(&d.uiInsecure, "ui-insecure-listen", false, "allow a plain-HTTP Web UI beyond loopback (whoever reaches it controls every workflow)")
	var g gatewayFlags
	g.add(fs, "cuzk", "", "serve cuzk's gRPC protocol (Curio's [Cuzk] Address) on HOST:PORT or unix:///PATH from this stack (cuzk's default: "+gateway.DefaultListen+"); empty: no gateway")
	devSetup := fs.Bool("dev-setup", false, "publish Filecoin 2KiB DEVELOPMENT parameters (a single-party setup: never for real sectors) so the stack proves StackedDrg2KiBV1_1 sectors, StackedDrg2KiBV1 SnapDeals updates and 2KiB WindowPoSt and WinningPoSt, e.g. from Curio through --cuzk")
	moreSetups := fs.String("dev-setup-proofs", "", "with --dev-setup: more comma-separated proofs to make DEVELOPMENT parameters for, e.g. StackedDrgWinning32GiBV1 (a production circuit: 370,723 constraints, its setup about 40 s on 2 cores, cached by circuit digest); one whose setup would not fit this machine's memory is refused, naming its estimate")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *moreSetups != "" && !*devSetup {
		return fmt.Errorf("--dev-setup-proofs %s: needs --dev-setup", *moreSetups)
	}
	if err := g.absPaths(); err != nil { // before the embedded S3 server changes the working directory
		return err
	}
	shown := d.Dir
	logs, err := d.OpenLogs("dev")
	if err != nil {
		return err
	}
	defer logs.Close()
	hc, _ := d.HostCfg()
	paramsDir, err := filepath.Abs(hc.Keys.ParamsDir) // before the embedded S3 server changes the working directory
	if err != nil {
		return err
	}
	s, err := d.Start(ctx, hc.Profiles, logs, logs.Steps)
	if err != nil {
		return err
	}
	defer s.Stop()
	if *devSetup {
		proofs := registry.DevSetupProofs()
		for _, p := range strings.Split(*moreSetups, ",") {
			if p = strings.TrimSpace(p); p != "" && !slices.Contains(proofs, p) {
				proofs = append(proofs, p)
			}
		}
		if err := pipeline.KeySchemes(paramsDir, s.Store, logs.Log).EnsureKeys(ctx, proofs, true, logs.Steps); err != nil {
			return err
		}
	}
	var cuzk string
	if g.listen != "" {
		// One process: the gateway's urgent requests hold the worker's
		// gate, so its PoRep work yields to their whole path.
		l, done, err := g.start(ctx, s.Client, s.Temporal.Namespace(), s.Store, s.Worker.Gate(), logs.Log)
		if err != nil {
			return err
		}
		defer func() { <-done }()
		cuzk = g.describe(l)
	}
	fmt.Printf("c2flow dev stack up (Ctrl-C to stop)\n  temporal  %s (namespace %s, SQLite in %s)\n", s.Temporal.Addr(), s.Temporal.Namespace(), shown)
	if s.S3Addr != "" {
		fmt.Printf("  s3        http://%s bucket %s (access key "+stack.S3AccessKey+", secret "+stack.S3SecretKey+")\n", s.S3Addr, s.Store.Config().Bucket)
	}
	if s.Temporal.UIAddr() != "" {
		fmt.Printf("  web UI    %s\n", s.Temporal.UIURL())
	}
	fmt.Printf("  worker    %s\n", s.Worker.ID())
	if cuzk != "" {
		fmt.Printf("  cuzk      %s\n", cuzk)
	}
	fmt.Printf("  logs      %s (timing lines: c2flow bench stats %s)%s\n", RelTo(shown, logs.Path), RelTo(shown, logs.Path), ServerLogNote(shown, logs))
	fmt.Printf("submit with: c2flow submit --address %s%s --s3-endpoint http://%s --s3-access-key c2flow-dev --s3-secret-key c2flow-dev-secret --c1 DIR --wait\n", s.Temporal.Addr(), tlsHint(s), s.S3Addr)
	<-ctx.Done()
	fmt.Fprintf(os.Stderr, "c2flow dev: stopping: the worker finishes the partitions it holds (at most %v), then Temporal and S3 stop; Ctrl-C again to stop at once\n", devDrainTimeout)
	again := make(chan os.Signal, 1)
	signal.Notify(again, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-again
		fmt.Fprintln(os.Stderr, "c2flow dev: stopped at once (what was running is proved again at the next start)")
		os.Exit(130)
	}()
	return nil
}

// devDrainTimeout bounds how long c2flow dev's worker waits, when
// stopping, for the partitions it holds.
const devDrainTimeout = 30 * time.Second

// RelTo names a file of the data directory under the directory's name as
// the user gave it (.c2flow/demo/demo.log, not an absolute path).
func RelTo(shownDir, path string) string {
	return filepath.Join(shownDir, filepath.Base(path))
}

// ServerLogNote says where the embedded Temporal server's log went.
func ServerLogNote(shownDir string, logs *RunLogs) string {
	if logs.serverAt == "" {
		return ""
	}
	return "; Temporal's: " + RelTo(shownDir, logs.serverAt)
}
