package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/c2flow/c2flow/job"
	"github.com/c2flow/c2flow/storage"
	"github.com/c2flow/c2flow/storage/s3test"
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

// The progress bar counts sectors until every sector's partition total is
// known, then partitions: it never shows 0/0 nor goes backwards.
func TestProgressBarNeverGoesBackwards(t *testing.T) {
	f, err := os.CreateTemp(t.TempDir(), "bar")
	if err != nil {
		t.Fatal(err)
	}
	b := &progressBar{f: f}
	sec := func(id uint64, st string, parts, done int) job.Progress {
		return job.Progress{ProverID: "aa", SectorID: id, Status: st, Partitions: parts, PartitionsDone: done}
	}
	steps := []job.BatchProgress{
		{Total: 2, Sectors: []job.Progress{sec(1, job.StatusPending, 0, 0), sec(2, job.StatusPending, 0, 0)}},
		{Total: 2, Sectors: []job.Progress{sec(1, job.StatusRunning, 4, 3), sec(2, job.StatusRunning, 0, 0)}},
		{Total: 2, Sectors: []job.Progress{sec(1, job.StatusProved, 4, 4), sec(2, job.StatusRunning, 4, 0)}},
		{Total: 2, Sectors: []job.Progress{sec(1, job.StatusProved, 4, 4), sec(2, job.StatusProved, 4, 4)}},
	}
	last := -1.0
	for _, p := range steps {
		b.update(p)
		var num, den int
		var unit string
		if _, err := fmt.Sscanf(strings.SplitN(b.last, "] ", 2)[1], "%d/%d %s", &num, &den, &unit); err != nil {
			t.Fatalf("%q: %v", b.last, err)
		}
		if den == 0 {
			t.Fatalf("%q: a zero total", b.last)
		}
		frac := float64(num) / float64(den)
		if frac < last {
			t.Fatalf("%q: went backwards from %.2f", b.last, last)
		}
		last = frac
	}
	if !strings.Contains(b.last, "8/8 partitions") {
		t.Fatalf("final line %q", b.last)
	}
}
