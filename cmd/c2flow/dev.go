package main

import (
	"context"
	"flag"
	"fmt"
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
	done     chan error // the worker's Run
	s3done   chan error // the embedded S3 server's Run
	cancel   context.CancelFunc
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
}

func (d *devFlags) add(fs *flag.FlagSet) error {
	fs.StringVar(&d.dir, "dir", ".c2flow/dev", "data directory: Temporal's SQLite file, the S3 data, the param cache")
	fs.IntVar(&d.port, "temporal-port", 7233, "embedded Temporal frontend port (0: any free port)")
	fs.StringVar(&d.s3Addr, "s3-listen", "127.0.0.1:9000", "embedded S3 server address")
	fs.BoolVar(&d.external, "external-s3", false, "use the S3 of the --s3-* flags instead of the embedded server")
	d.s3.Add(fs)
	d.logFlags.Add(fs, "warn")
	var err error
	d.hostCfg, err = cliflags.AddHost(fs)
	return err
}

// start brings the stack up. It makes every path absolute first: the
// embedded S3 server changes the process's working directory.
func (d *devFlags) start(ctx context.Context, profiles []string, log *slog.Logger) (*devStack, error) {
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
	hc.Log = log
	ctx, cancel := context.WithCancel(ctx)
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
		go func() {
			s.s3done <- s3server.Run(ctx, s3server.Config{Addr: d.s3Addr, Dir: filepath.Join(dir, "s3"), AccessKey: key, SecretKey: secret})
		}()
		wctx, wcancel := context.WithTimeout(ctx, 10*time.Second)
		err := s3server.WaitReady(wctx, d.s3Addr)
		wcancel()
		if err != nil {
			cancel()
			return nil, err
		}
		s3cfg.Endpoint, s3cfg.AccessKey, s3cfg.SecretKey, s3cfg.PathStyle = "http://"+d.s3Addr, key, secret, true
	}
	if s.store, err = storage.Open(ctx, s3cfg); err == nil {
		err = s.store.EnsureBucket(ctx)
	}
	if err != nil {
		cancel()
		return nil, err
	}
	if s.temporal, err = devstack.Start(devstack.Options{DBFile: filepath.Join(dir, "temporal.db"), Port: d.port}); err != nil {
		cancel()
		return nil, err
	}
	tf := cliflags.Temporal{Address: s.temporal.Addr(), Namespace: s.temporal.Namespace()}
	if s.client, err = tf.Dial(ctx, log); err != nil {
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
	if err := batch.EnsureKeys(ctx, s.store, hc.ParamsDir, ps); err != nil {
		s.stop()
		return nil, err
	}
	if s.worker, err = host.New(ctx, s.client, s.store, hc); err != nil {
		s.stop()
		return nil, err
	}
	go func() { s.done <- s.worker.Run(ctx) }()
	return s, nil
}

// stop stops the worker first (it finishes or hands back its work), then
// the client, Temporal and S3.
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
	if s.s3Addr != "" {
		<-s.s3done
	}
}

func runDev(ctx context.Context, args []string) error {
	fs := newFlags("dev")
	var d devFlags
	if err := d.add(fs); err != nil {
		return err
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	log, err := d.logFlags.Logger()
	if err != nil {
		return err
	}
	hc, _ := d.hostCfg()
	s, err := d.start(ctx, hc.Profiles, log)
	if err != nil {
		return err
	}
	defer s.stop()
	fmt.Printf("c2flow dev stack up (Ctrl-C to stop)\n  temporal  %s (namespace %s, SQLite in %s)\n", s.temporal.Addr(), s.temporal.Namespace(), d.dir)
	if s.s3Addr != "" {
		fmt.Printf("  s3        http://%s bucket %s (access key c2flow-dev, secret c2flow-dev-secret)\n", s.s3Addr, s.store.Config().Bucket)
	}
	fmt.Printf("  worker    %s\n", s.worker.ID())
	fmt.Printf("submit with: c2flow submit --address %s --s3-endpoint http://%s --s3-access-key c2flow-dev --s3-secret-key c2flow-dev-secret --c1 DIR --wait\n", s.temporal.Addr(), s.s3Addr)
	<-ctx.Done()
	return nil
}

// ephemeral makes the embedded stack listen on free ports, for commands
// that run it only for themselves (demo, bench batch).
func (d *devFlags) ephemeral(fs *flag.FlagSet) {
	fs.Set("temporal-port", "0")
	fs.Set("s3-listen", "127.0.0.1:0")
}
