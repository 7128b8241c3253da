package integration

import (
	"context"
	"testing"
	"time"

	"github.com/c2flow/c2flow/batch"
	"github.com/c2flow/c2flow/host"
	"github.com/c2flow/c2flow/job"
	"github.com/c2flow/c2flow/porep"
	"github.com/c2flow/c2flow/porep/poreptest"
)

// A worker added to a running batch takes work without a restart; a worker
// removed gracefully (SIGTERM) drains: the partitions it synthesized finish
// on it, nothing is redone, nothing is lost.
func TestScaleOutAndGracefulRemoval(t *testing.T) {
	s := newStack(t, "32KiB")
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	w1 := s.startWorker("w1", host.Config{PartitionWorkers: 2, DrainTimeout: 50 * time.Second})
	c1s := []*porep.C1{poreptest.Sector(t, "32KiB", 1001).C1(), poreptest.Sector(t, "32KiB", 1002).C1()}
	refs := []job.SectorRef{s.putC1(c1s[0]), s.putC1(c1s[1])}
	if _, err := batch.Submit(ctx, s.client, refs, batch.Options{BatchID: "fleet", Timeouts: faultTimeouts}); err != nil {
		t.Fatal(err)
	}
	w1.waitStats(2*time.Minute, func(st host.Stats) bool { return st.Host.Syntheses >= 2 })
	w2 := s.startWorker("w2", host.Config{PartitionWorkers: 2})
	w2.waitStats(2*time.Minute, func(st host.Stats) bool { return st.Host.Syntheses >= 1 })
	if err := w1.stop(); err != nil { // graceful: SIGTERM, drain, exit
		t.Fatal(err)
	}
	st1 := w1.readStats()
	res, err := batch.Wait(ctx, s.client, "fleet", time.Second, nil)
	if err != nil {
		t.Fatal(err)
	}
	s.expectProved(res, c1s)
	n := 0
	for _, r := range res.Sectors {
		n += redone(r)
	}
	w2.stop()
	st2 := w2.readStats()
	t.Logf("w1 (removed): %d syntheses, %d finalized; w2 (added): %d syntheses; redone %d",
		st1.Host.Syntheses, st1.Host.Finalized, st2.Host.Syntheses, n)
	if n != 0 {
		t.Errorf("%d partitions redone after a graceful removal", n)
	}
	if st1.Host.Finalized != st1.Host.Syntheses || st1.Budget.InFlight != 0 {
		t.Errorf("w1 left work behind: %d syntheses, %d finalized, %d in flight", st1.Host.Syntheses, st1.Host.Finalized, st1.Budget.InFlight)
	}
	if st2.Host.Syntheses == 0 || st1.Host.Syntheses+st2.Host.Syntheses != 8 {
		t.Errorf("syntheses w1 %d + w2 %d, want 8 with both working", st1.Host.Syntheses, st2.Host.Syntheses)
	}
}
