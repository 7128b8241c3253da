package activities

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/c2flow/c2flow/filecoin/fctest"
	"github.com/c2flow/c2flow/filecoin/snark"
	"github.com/c2flow/c2flow/job"
	"github.com/c2flow/c2flow/registry"
	"github.com/c2flow/c2flow/scheme"
	"github.com/c2flow/c2flow/storage/s3test"
)

// A proving host loads a Filecoin profile's proving key on first use, not
// at start (where it reads the .vk alone), and counts it in its byte
// budget then, once; a configured profile without parameters is refused
// at start.
func TestKeysLoadOnFirstUse(t *testing.T) {
	ctx := context.Background()
	const proof = "StackedDrg2KiBV1_1"
	if _, err := snark.DevSetup(ctx, proof, fctest.DevParams(), fctest.Setups(), nil); err != nil {
		t.Fatal(err)
	}
	store := s3test.Start(t).Store("c2flow-test")
	if err := store.EnsureBucket(ctx); err != nil {
		t.Fatal(err)
	}
	keys := registry.Options{ParamsDir: t.TempDir(), FilecoinParams: fctest.DevParams(), Remote: store}
	cfg := Config{Profiles: []string{proof}, MemoryBudget: 16 << 30, Schemes: registry.Schemes(keys),
		SectorCache: -1, Log: slog.New(slog.DiscardHandler)}
	deps, err := ProverDeps(ctx, store, cfg)
	if err != nil {
		t.Fatal(err)
	}
	// The urgent reserve (1 GiB by default) is carved out of the 16 GiB.
	if st := deps.Budget.Stats(); st.KeyBytes != 0 || st.MaxBytes != 15<<30 || deps.Urgent == nil || deps.Urgent.Stats().MaxBytes != 1<<30 {
		t.Fatalf("after start: %+v, want no proving key held in a 15 GiB byte budget beside a 1 GiB urgent reserve", st)
	}
	ref := job.Ref{ProverID: "aa", SectorID: 1, Proof: proof}
	n, err := deps.Phases.PartitionBytes(ctx, ref)
	if err != nil || n <= 0 {
		t.Fatalf("PartitionBytes: %d, %v", n, err)
	}
	held := deps.Budget.Stats().KeyBytes
	if held <= 0 {
		t.Fatalf("the proving key, loaded for a partition, is not counted: %+v", deps.Budget.Stats())
	}
	ref.SectorID = 2
	if _, err := deps.Phases.PartitionBytes(ctx, ref); err != nil {
		t.Fatal(err)
	}
	if st := deps.Budget.Stats(); st.KeyBytes != held {
		t.Fatalf("the same key counted twice: %d then %d", held, st.KeyBytes)
	}
	t.Logf("%s: partition %d bytes, proving key %d bytes, counted on first use", proof, n, held)

	keys.FilecoinParams = t.TempDir() // no parameters here nor in the store
	cfg.Schemes = registry.Schemes(keys)
	if _, err := ProverDeps(ctx, store, cfg); err == nil || !strings.Contains(err.Error(), "profile "+proof) {
		t.Fatalf("a host whose profile has no parameters started: %v", err)
	}
}

// A NoKeys failure names its cause once: the application error prints its
// cause after its message, so a message copied from the cause said it twice.
func TestNoKeysNamesItsCauseOnce(t *testing.T) {
	cause := fmt.Errorf("sector 405 of prover e807: %w", scheme.ErrNoKeys)
	err := noKeys(cause)
	if !isAppError(err, job.ErrNoKeys) {
		t.Fatalf("got %v, want a NoKeys application error", err)
	}
	if n := strings.Count(err.Error(), "sector 405"); n != 1 {
		t.Errorf("%q names the sector %d times, want once", err, n)
	}
}
