package main

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
	tlog "go.temporal.io/sdk/log"
	sdkworker "go.temporal.io/sdk/worker"

	"github.com/c2flow/c2flow/batch"
	"github.com/c2flow/c2flow/cmd/c2flow/internal/clitest"
	"github.com/c2flow/c2flow/devstack"
	"github.com/c2flow/c2flow/job"
	"github.com/c2flow/c2flow/storage"
	"github.com/c2flow/c2flow/storage/s3test"
	"github.com/c2flow/c2flow/workflows"
)

func TestMain(m *testing.M) {
	if args := os.Getenv(envRunC2flow); args != "" { // a c2flow process of startC2flow
		os.Exit(runAsC2flow(strings.Split(args, "\x1f")))
	}
	s3test.Main(m)
}

// submit against storage without keys refuses, naming the command that
// makes them, instead of silently running a development setup; its S3
// and Temporal flags are the dev stack's and nothing is submitted.
func TestSubmitWithoutKeysRefuses(t *testing.T) {
	srv := s3test.Start(t)
	srv.Store("c2flow-submit") // creates the bucket
	dir := t.TempDir()
	if err := dispatch(context.Background(), []string{"seal", "--profile", "2KiB", "--sectors", "1", "--out", dir}); err != nil {
		t.Fatal(err)
	}
	empty := t.TempDir()
	err := dispatch(context.Background(), []string{"submit", "--c1", filepath.Join(dir, "1.c1.json"),
		"--s3-endpoint", srv.Endpoint(), "--s3-bucket", "c2flow-submit", "--s3-access-key", srv.Access, "--s3-secret-key", srv.Secret,
		"--params", empty, "--address", "127.0.0.1:1"})
	if err == nil || !strings.Contains(err.Error(), "c2flow circuit setup --profile 2KiB") || !strings.Contains(err.Error(), "--dev-setup") {
		t.Fatalf("submit without keys: %v", err)
	}
	if ents, _ := os.ReadDir(empty); len(ents) != 0 {
		t.Fatalf("submit wrote %d entries into the param cache", len(ents))
	}
	// A mistyped bucket is not created: the error names it.
	err = dispatch(context.Background(), []string{"submit", "--c1", filepath.Join(dir, "1.c1.json"),
		"--s3-endpoint", srv.Endpoint(), "--s3-bucket", "c2flow-typo", "--s3-access-key", srv.Access, "--s3-secret-key", srv.Secret,
		"--params", empty, "--address", "127.0.0.1:1"})
	if err == nil || !strings.Contains(err.Error(), `"c2flow-typo"`) {
		t.Fatalf("submit to a missing bucket: %v", err)
	}
	st, err := storage.Open(context.Background(), srv.Config("c2flow-typo"))
	if err != nil {
		t.Fatal(err)
	}
	if err := st.CheckBucket(context.Background()); err == nil {
		t.Fatal("submit created the mistyped bucket")
	}
}

// Flags that would be ignored or silently replaced are refused, each
// error naming its flag: nothing is submitted under settings nobody asked
// for.
func TestSubmitRefusesIgnoredFlags(t *testing.T) {
	ctx := context.Background()
	srv := s3test.Start(t)
	srv.Store("c2flow-flags") // creates the bucket
	dir := t.TempDir()
	if err := dispatch(ctx, []string{"seal", "--profile", "2KiB", "--sectors", "1", "--out", dir}); err != nil {
		t.Fatal(err)
	}
	c1 := filepath.Join(dir, "1.c1.json")
	s3 := []string{"--s3-endpoint", srv.Endpoint(), "--s3-bucket", "c2flow-flags", "--s3-access-key", srv.Access, "--s3-secret-key", srv.Secret,
		"--params", t.TempDir(), "--address", "127.0.0.1:1"}
	prover := strings.Repeat("ab", 32)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--sector-id", "1"}, "--sector-id needs --prover-id"},
		{[]string{"--prover-id", prover}, "--prover-id and --sector-id are for Filecoin C1s"},
		{[]string{"--prover-id", prover, "--sector-id", "1"}, "--prover-id and --sector-id are for Filecoin C1s"},
		{[]string{"--priority", "6"}, "--priority 6"},
		{[]string{"--priority", "-1"}, "--priority -1"},
		{[]string{"--priority", "1"}, "WinningPoSt's urgent lane"},
		{[]string{"--max-in-flight", "0"}, "--max-in-flight 0"},
		{[]string{"--max-in-flight", "-3"}, "--max-in-flight -3"},
	} {
		args := append(append([]string{"submit", "--c1", c1}, s3...), c.args...)
		err := dispatch(ctx, args)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("submit %v: %v, want an error saying %q", c.args, err, c.want)
		}
	}
}

// --partition-workers below 1 is refused by every command with the host
// flags (cliflags.AddHost): dev and worker alike.
func TestPartitionWorkersRefused(t *testing.T) {
	for _, n := range []string{"0", "-1"} {
		// Bounded: a dev that accepted the flag would serve until ctx ends.
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		err := dispatch(ctx, []string{"dev", "--dir", t.TempDir(), "--partition-workers", n, "--ui", "", "--temporal-port", "0", "--s3-listen", "127.0.0.1:0"})
		cancel()
		if err == nil || !strings.Contains(err.Error(), "--partition-workers "+n) {
			t.Errorf("dev --partition-workers %s: %v", n, err)
		}
	}
}

// A batch whose workflow was terminated from outside (the Web UI, the
// Temporal CLI) is reported as terminated with its reason, and status
// fails: the progress query would still answer "running" from history.
func TestStatusOfTerminatedBatch(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an embedded Temporal server")
	}
	srv, err := devstack.Start(devstack.Options{DBFile: filepath.Join(t.TempDir(), "temporal.db")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Stop)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, err := client.DialContext(ctx, client.Options{HostPort: srv.Addr(), Namespace: srv.Namespace(), Logger: tlog.NewStructuredLogger(slog.New(slog.DiscardHandler))})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// Workflows only: the sector never gets past validation, as a batch
	// stuck or stopped early.
	w := sdkworker.New(c, job.QueueWorkflow, sdkworker.Options{})
	workflows.Register(w)
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	ref := job.NewRef([32]byte{1}, 1, []byte("c1"))
	if _, err := batch.Submit(ctx, c, []job.Ref{ref}, batch.Options{BatchID: "stopped"}); err != nil {
		t.Fatal(err)
	}
	status := func() (string, error) {
		var err error
		out := clitest.CaptureStdout(t, func() { err = dispatch(ctx, []string{"status", "--address", srv.Addr(), "stopped"}) })
		return out, err
	}
	if out, err := status(); err != nil || !strings.Contains(out, "batch stopped: 1 sectors") {
		t.Fatalf("status of the running batch: %v\n%s", err, out)
	}
	if err := c.TerminateWorkflow(ctx, job.BatchWorkflowID("stopped"), "", "stopped from the Web UI"); err != nil {
		t.Fatal(err)
	}
	out, err := status()
	if err == nil || !strings.Contains(err.Error(), "terminated: stopped from the Web UI") || !strings.Contains(out, "terminated") || strings.Contains(out, "running") {
		t.Fatalf("status of the terminated batch: %v\n%s", err, out)
	}
}
