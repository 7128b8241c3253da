// Package stack assembles c2flow's embedded stack in one process: the
// Temporal server (package devstack), S3-compatible storage (versitygw,
// or an external S3) and worker hosts (package activities). `c2flow dev`,
// `demo`, `bench batch` and the simulation all run it from here, so they
// start and stop the same way: workers first (they finish or hand back
// their work), then clients, Temporal and, last, S3.
package stack

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"go.temporal.io/sdk/client"
	tlog "go.temporal.io/sdk/log"

	"github.com/c2flow/c2flow/activities"
	"github.com/c2flow/c2flow/devstack"
	"github.com/c2flow/c2flow/internal/sdklog"
	"github.com/c2flow/c2flow/storage"
	"github.com/c2flow/c2flow/storage/s3server"
)

// Embedded S3 credentials: the server listens on loopback only and is the
// development stack's, so fixed credentials are shown to the user.
const (
	S3AccessKey = "c2flow-dev"
	S3SecretKey = "c2flow-dev-secret"
)

// Options of a stack.
type Options struct {
	// Dir holds Temporal's SQLite file and the embedded S3 data; it is
	// made absolute (the embedded S3 server changes the working directory).
	Dir string
	// FreshDB deletes Temporal's database first (the simulation's runs).
	FreshDB bool
	// Temporal configures the embedded server; DBFile defaults to
	// Dir/temporal.db.
	Temporal devstack.Options
	// TemporalAddr, if set, is a running Temporal frontend (namespace
	// "default") used instead of an embedded server.
	TemporalAddr string
	// S3 is the storage: S3.Endpoint empty runs the embedded server on
	// S3Listen (port 0: a free port) with S3's bucket, which it creates;
	// an external S3's bucket must exist. NoS3 runs none.
	S3       storage.Config
	S3Listen string
	NoS3     bool
	// S3Verbose shows the embedded S3 server's own log.
	S3Verbose bool
	// Log is c2flow's log (the SDK's too, at warn).
	Log *slog.Logger
}

// Stack is a running embedded stack.
type Stack struct {
	Temporal *devstack.Server
	Client   client.Client
	Store    *storage.Store // nil with NoS3
	S3Addr   string         // the embedded S3 server's address; empty otherwise
	log      *slog.Logger
	addr, ns string      // the frontend clients dial
	tls      *tls.Config // nil unless the embedded frontend serves mTLS

	s3cancel context.CancelFunc
	s3done   chan error
	mu       sync.Mutex
	workers  []*running
}

type running struct {
	w      *activities.Worker
	client client.Client // its own client; nil: the stack's
	cancel context.CancelFunc
	done   chan error
}

// Start brings up S3 (unless external or NoS3), then Temporal, and dials
// a client.
func Start(ctx context.Context, o Options) (*Stack, error) {
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	dir, err := filepath.Abs(o.Dir)
	if err != nil {
		return nil, fmt.Errorf("stack data directory %s: %w", o.Dir, err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("stack data directory: %w", err)
	}
	s := &Stack{log: o.Log}
	if !o.NoS3 {
		if err := s.startS3(ctx, dir, o); err != nil {
			s.Stop()
			return nil, err
		}
	}
	to := o.Temporal
	if to.DBFile == "" {
		to.DBFile = filepath.Join(dir, "temporal.db")
	}
	if o.FreshDB {
		for _, suffix := range []string{"", "-wal", "-shm"} {
			os.Remove(to.DBFile + suffix)
		}
	}
	if o.TemporalAddr != "" {
		s.addr, s.ns = o.TemporalAddr, "default"
	} else {
		if s.Temporal, err = devstack.Start(to); err != nil {
			s.Stop()
			return nil, err
		}
		s.addr, s.ns, s.tls = s.Temporal.Addr(), s.Temporal.Namespace(), s.Temporal.ClientTLS()
	}
	if s.Client, err = s.Dial(ctx); err != nil {
		s.Stop()
		return nil, err
	}
	return s, nil
}

func (s *Stack) startS3(ctx context.Context, dir string, o Options) error {
	cfg := o.S3
	embedded := cfg.Endpoint == ""
	if embedded {
		addr := o.S3Listen
		if addr == "" || strings.HasSuffix(addr, ":0") {
			// versitygw wants a concrete port: pick a free one.
			var err error
			if addr, err = s3server.FreeAddr(); err != nil {
				return err
			}
		}
		// A port another server holds would go unnoticed: versitygw's
		// bind fails in its goroutine, and WaitReady finds the other
		// server answering.
		if err := portFree(addr); err != nil {
			return fmt.Errorf("embedded S3 server on %s: %w", addr, err)
		}
		s.S3Addr = addr
		// Its own context, not ended by the caller's (Ctrl-C): S3 stops
		// last, after the workers have handed back their work.
		s3ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
		s.s3cancel, s.s3done = cancel, make(chan error, 1)
		scfg := s3server.Config{Addr: addr, Dir: filepath.Join(dir, "s3"), AccessKey: S3AccessKey, SecretKey: S3SecretKey, Verbose: o.S3Verbose}
		go func() { s.s3done <- s3server.Run(s3ctx, scfg) }()
		rctx, rcancel := context.WithTimeout(ctx, 10*time.Second)
		err := s3server.WaitReady(rctx, addr)
		rcancel()
		if err != nil {
			return err
		}
		select {
		case err := <-s.s3done: // it ended: what answered is not this stack's server
			s.s3done <- err
			return fmt.Errorf("embedded S3 server on %s did not start: %v", addr, err)
		default:
		}
		cfg.Endpoint, cfg.AccessKey, cfg.SecretKey, cfg.PathStyle = "http://"+addr, S3AccessKey, S3SecretKey, true
	}
	st, err := storage.Open(ctx, cfg)
	if err != nil {
		return err
	}
	// Only the embedded server's bucket is the stack's to make: on an
	// external S3 a mistyped bucket would become a new, empty one.
	if embedded {
		err = st.EnsureBucket(ctx)
	} else if err = st.CheckBucket(ctx); err != nil {
		err = fmt.Errorf("external S3 (the stack creates only its embedded server's bucket): %w", err)
	}
	if err != nil {
		return err
	}
	s.Store = st
	return nil
}

// portFree says why addr cannot be listened on, if it cannot.
func portFree(addr string) error {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	return l.Close()
}

// Dial returns a new client of the stack's Temporal server (the SDK logs
// through the stack's log at warn); with Temporal.TLS, it is the server's
// own in-process client identity (devstack.Server.ClientTLS).
func (s *Stack) Dial(ctx context.Context) (client.Client, error) {
	c, err := client.DialContext(ctx, client.Options{HostPort: s.addr, Namespace: s.ns,
		Logger:            tlog.NewStructuredLogger(slog.New(sdklog.Handler(s.log.Handler()))),
		ConnectionOptions: client.ConnectionOptions{TLS: s.tls}}) // nil unless the frontend serves mTLS
	if err != nil {
		return nil, fmt.Errorf("temporal at %s: %w", s.addr, err)
	}
	return c, nil
}

// AddWorker builds a worker host of cfg and runs it until Stop (or ctx
// ends). With ownClient it polls through a client of its own, as a
// separate host would (the simulation's hosts); else through the
// stack's.
func (s *Stack) AddWorker(ctx context.Context, cfg activities.Config, ownClient bool) (*activities.Worker, error) {
	deps, err := activities.ProverDeps(ctx, s.Store, cfg)
	if err != nil {
		return nil, err
	}
	return s.AddWorkerWith(ctx, cfg, deps, ownClient)
}

// AddWorkerWith is AddWorker over deps the caller assembled (the
// simulation's modelled phases and devices).
func (s *Stack) AddWorkerWith(ctx context.Context, cfg activities.Config, deps activities.Deps, ownClient bool) (*activities.Worker, error) {
	c := s.Client
	r := &running{done: make(chan error, 1)}
	if ownClient {
		var err error
		if c, err = s.Dial(ctx); err != nil {
			return nil, err
		}
		r.client = c
	}
	wctx, cancel := context.WithCancel(ctx)
	w, err := activities.New(c, s.Store, cfg, deps)
	if err != nil {
		cancel()
		if r.client != nil {
			r.client.Close()
		}
		return nil, err
	}
	r.w, r.cancel = w, cancel
	go func() { r.done <- w.Run(wctx) }()
	s.mu.Lock()
	s.workers = append(s.workers, r)
	s.mu.Unlock()
	return w, nil
}

// StopWorkers stops every worker (each drains or hands back its work) and
// returns the first error of their runs.
func (s *Stack) StopWorkers() error {
	s.mu.Lock()
	ws := s.workers
	s.workers = nil
	s.mu.Unlock()
	for _, r := range ws {
		r.cancel()
	}
	var errs []error
	for _, r := range ws {
		if err := <-r.done; err != nil {
			errs = append(errs, fmt.Errorf("worker %s: %w", r.w.ID(), err))
		}
		if r.client != nil {
			r.client.Close()
		}
	}
	return errors.Join(errs...)
}

// Stop stops the workers, the client, Temporal and, last, S3.
func (s *Stack) Stop() {
	if err := s.StopWorkers(); err != nil {
		s.log.Warn("stopping the stack's workers", "error", err)
	}
	if s.Client != nil {
		s.Client.Close()
	}
	if s.Temporal != nil {
		s.Temporal.Stop()
	}
	if s.s3cancel != nil {
		s.s3cancel()
		<-s.s3done
	}
}
