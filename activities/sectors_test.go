package activities

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/c2flow/c2flow/filecoin/c1"
	"github.com/c2flow/c2flow/filecoin/proofs"
	"github.com/c2flow/c2flow/filecoin/seal"
	"github.com/c2flow/c2flow/filecoin/snark"
	"github.com/c2flow/c2flow/job"
	"github.com/c2flow/c2flow/scheme"
	"github.com/c2flow/c2flow/storage/s3test"
)

// A 32GiB sector's phases on one host read its C1 once with the cache:
// the validation, each of its 10 partitions' syntheses and the store
// (13 reads of a 38.6 MB sparse C1 with the lookup before it) decode it
// once, concurrent syntheses sharing that decode, and the cached sector
// is the one a fresh decode gives (it verifies). Without the cache every
// phase decodes it again; the test logs both counts and times.
func TestSectorCacheDecodesOnce(t *testing.T) {
	ctx := context.Background()
	prover := [32]byte{0x5e, 0xc7}
	sealed, err := seal.SealSparse(ctx, seal.TestParams(proofs.StackedDrg32GiBV1_1, prover, 42))
	if err != nil {
		t.Fatal(err)
	}
	raw, err := c1.Marshal(sealed.C1)
	if err != nil {
		t.Fatal(err)
	}
	store := s3test.Start(t).Store("c2flow-test")
	if err := store.EnsureBucket(ctx); err != nil {
		t.Fatal(err)
	}
	ref := job.NewRef(prover, 42, raw)
	ref.Proof = "StackedDrg32GiBV1_1"
	if err := store.PutC1(ctx, ref, raw); err != nil {
		t.Fatal(err)
	}
	schemes := scheme.Set{snark.New(snark.Params{Dir: t.TempDir()}, nil)}
	const reads = 13 // lookup, validate, 10 syntheses, store
	run := func(cache *SectorCache) (time.Duration, int64) {
		p := &ProverPhases{Artifacts: store, Schemes: schemes, Log: slog.New(slog.DiscardHandler), Sectors: cache}
		t0 := time.Now()
		if _, err := p.Validate(ctx, ref); err != nil { // the validation verifies it natively
			t.Fatal(err)
		}
		done := make(chan error, reads-1)
		for range reads - 1 {
			go func() { _, err := p.sector(ctx, ref); done <- err }()
		}
		for range reads - 1 {
			if err := <-done; err != nil {
				t.Fatal(err)
			}
		}
		d := time.Since(t0)
		if cache == nil {
			return d, reads
		}
		return d, cache.Stats().Decodes
	}
	cache := NewSectorCache(DefaultSectorCache)
	without, n0 := run(nil)
	with, n1 := run(cache)
	st := cache.Stats()
	t.Logf("a sparse 32GiB C1 of %d bytes, %d reads: without the cache %d decodes in %v; with it %d decode, %d hits in %v (%.1fx)",
		len(raw), reads, n0, without.Round(time.Millisecond), n1, st.Hits, with.Round(time.Millisecond), without.Seconds()/with.Seconds())
	if n1 != 1 || st.Hits != reads-1 || st.Entries != 1 || st.Bytes != int64(len(raw)) {
		t.Fatalf("cache stats %+v, want one decode and %d hits", st, reads-1)
	}
	// Bounded: a cache smaller than the C1 keeps nothing and decodes each time.
	small := NewSectorCache(int64(len(raw)) - 1)
	p := &ProverPhases{Artifacts: store, Schemes: schemes, Log: slog.New(slog.DiscardHandler), Sectors: small}
	for range 2 {
		if _, err := p.sector(ctx, ref); err != nil {
			t.Fatal(err)
		}
	}
	if s := small.Stats(); s.Decodes != 2 || s.Entries != 0 {
		t.Fatalf("a cache smaller than the C1: %+v", s)
	}
}
