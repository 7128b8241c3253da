package retention_test

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/c2flow/c2flow/job"
	"github.com/c2flow/c2flow/retention"
	"github.com/c2flow/c2flow/storage"
	"github.com/c2flow/c2flow/storage/s3test"
)

func TestMain(m *testing.M) { s3test.Main(m) }

// jobs is what Temporal would say of each sector workflow.
type jobs map[string]struct {
	running bool
	closed  time.Time
}

func (j jobs) Ended(_ context.Context, id string) (bool, time.Time, bool, error) {
	s, ok := j[id]
	return s.running, s.closed, ok, nil
}

// Inputs are reclaimed once no job needs them: kept while a job of their
// identity runs, a day after the last one ended, and while a proof of
// their identity is stored; orphaned spills go after their age (issue 55,
// finding 9: nothing was ever deleted, and a full disk stops all proving).
func TestSweepReclaimsWhatNoJobNeeds(t *testing.T) {
	ctx := context.Background()
	srv := s3test.Start(t)
	store, err := storage.Open(ctx, srv.Config("retention"))
	if err != nil {
		t.Fatal(err)
	}
	if err := store.EnsureBucket(ctx); err != nil {
		t.Fatal(err)
	}
	ref := func(n uint64) job.Ref { return job.Ref{ProverID: "f01000", SectorID: n, InputDigest: "dd"} }
	now := time.Now().Add(48 * time.Hour) // every object written two days before
	state := jobs{
		job.SectorWorkflowID(ref(2)): {running: true},
		job.SectorWorkflowID(ref(3)): {closed: now.Add(-time.Hour)},
		job.SectorWorkflowID(ref(4)): {closed: now.Add(-25 * time.Hour)},
	}
	for n := uint64(1); n <= 5; n++ {
		if err := store.Put(ctx, storage.C1Key(ref(n)), []byte("input")); err != nil {
			t.Fatal(err)
		}
	}
	if err := store.Put(ctx, storage.C2Key(ref(1)), []byte("proof")); err != nil {
		t.Fatal(err)
	}
	if err := store.Put(ctx, "spill/f01000/9/0/abc", []byte("witness")); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	old, young := filepath.Join(dir, "p", "old"), filepath.Join(dir, "p", "young")
	for _, f := range []string{old, young} {
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, []byte("witness"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chtimes(old, now.Add(-7*time.Hour), now.Add(-7*time.Hour)); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(young, now.Add(-30*time.Minute), now.Add(-30*time.Minute)); err != nil {
		t.Fatal(err)
	}

	// Written lately: nothing goes, whatever its job.
	r, err := retention.Sweep(ctx, store, state, retention.Policy{}, time.Now(), slog.Default())
	if err != nil {
		t.Fatal(err)
	}
	if r.Inputs != 0 || r.Spills != 0 {
		t.Fatalf("a sweep right after the writes deleted %+v", r)
	}

	r, err = retention.Sweep(ctx, store, state, retention.Policy{SpillDir: dir}, now, slog.Default())
	if err != nil {
		t.Fatal(err)
	}
	keys, err := store.List(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	for n, want := range map[uint64]bool{1: true, 2: true, 3: true, 4: false, 5: false} {
		if got := slices.Contains(keys, storage.C1Key(ref(n))); got != want {
			t.Errorf("input of sector %d kept = %v, want %v", n, got, want)
		}
	}
	if slices.Contains(keys, "spill/f01000/9/0/abc") {
		t.Error("a spill two days old was kept")
	}
	if _, err := os.Stat(old); err == nil {
		t.Error("a spill file 7 hours old was kept")
	}
	if _, err := os.Stat(young); err != nil {
		t.Errorf("a spill file 30 minutes old was deleted: %v", err)
	}
	if r.Inputs != 2 || r.InputsKept != 3 || r.Spills != 2 {
		t.Errorf("report %+v, want 2 inputs deleted, 3 kept, 2 spills", r)
	}
}
