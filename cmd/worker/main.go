// Command worker is a c2flow worker process: it polls Temporal for the
// pipeline's work on the roles it is given (workflow, prove), with its
// device slots and partition budget, until SIGINT/SIGTERM, then stops
// polling and lets its in-flight activities finish.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	gnarklog "github.com/consensys/gnark/logger"

	"go.temporal.io/sdk/client"

	"github.com/c2flow/c2flow/activities"
	"github.com/c2flow/c2flow/cmd/internal/cliflags"
	"github.com/c2flow/c2flow/cmd/internal/procflags"
	"github.com/c2flow/c2flow/metrics"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	gnarklog.Disable()
	if err := run(ctx, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "worker:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("worker", flag.ContinueOnError)
	var tf cliflags.Temporal
	var sf cliflags.S3
	var lf procflags.Log
	tf.Add(fs)
	sf.Add(fs)
	lf.Add(fs, "info")
	metricsAddr := fs.String("metrics", os.Getenv("C2FLOW_METRICS"), "serve Prometheus metrics on this address; a port alone (9464, :9464) is 127.0.0.1 only, name the host to serve others (0.0.0.0:9464) ($C2FLOW_METRICS)")
	connectWait := fs.Duration("connect-wait", 5*time.Minute, "retry the first connection to Temporal with backoff for this long before giving up")
	cfg, err := cliflags.AddHost(fs)
	if err != nil {
		return err
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	log, err := lf.Logger()
	if err != nil {
		return err
	}
	hc, err := cfg()
	if err != nil {
		return err
	}
	hc.Log = log
	procflags.SoftMemoryLimit(hc.MemoryBudget, log)
	var mh client.MetricsHandler
	if *metricsAddr != "" {
		hc.Metrics = metrics.New()
		addr, stop, err := hc.Metrics.Serve(*metricsAddr)
		if err != nil {
			return fmt.Errorf("--metrics: %w", err)
		}
		defer stop()
		log.Info("metrics", "url", "http://"+addr+"/metrics")
		mh = hc.Metrics.SDKHandler()
	}
	c, err := tf.DialRetry(ctx, log, *connectWait, mh)
	if err != nil {
		return err
	}
	defer c.Close()
	store, err := sf.Open(ctx)
	if err != nil {
		return err
	}
	wc := hc.Over(store)
	deps, err := activities.ProverDeps(ctx, store, wc)
	if err != nil {
		return err
	}
	w, err := activities.New(c, store, wc, deps)
	if err != nil {
		return err
	}
	return w.Run(ctx)
}
