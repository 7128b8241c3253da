package integration

import (
	"context"
	"testing"
	"time"

	"github.com/c2flow/c2flow/activities"
	"github.com/c2flow/c2flow/batch"
	"github.com/c2flow/c2flow/job"
	"github.com/c2flow/c2flow/scheme/testscheme/porep/poreptest"
)

// A deadline-driven batch submitted behind a backlog is served first: one
// worker proving one partition at a time, a priority-5 batch of 4 sectors
// queued, then a priority-1 sector; it finishes before the backlog does.
func TestPriorityBatchOvertakesBacklog(t *testing.T) {
	s := newStack(t, "2KiB")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	w := s.startWorker("w", activities.Config{PartitionWorkers: 1, Profiles: []string{"2KiB"}})
	var low []job.Ref
	for i := uint64(0); i < 4; i++ {
		low = append(low, s.putC1(poreptest.Sector(t, "2KiB", 900+i).C1()))
	}
	urgent := s.putC1(poreptest.Sector(t, "2KiB", 999).C1())
	if _, err := batch.Submit(ctx, s.client, low, batch.Options{BatchID: "backlog", MaxInFlight: 4, Priority: 5}); err != nil {
		t.Fatal(err)
	}
	w.waitStats(time.Minute, func(st activities.Stats) bool { return st.Host.Syntheses >= 1 })
	if _, err := batch.Submit(ctx, s.client, []job.Ref{urgent}, batch.Options{BatchID: "deadline", Priority: 1}); err != nil {
		t.Fatal(err)
	}
	hi, err := batch.Wait(ctx, s.client, "deadline", time.Second, nil)
	if err != nil {
		t.Fatal(err)
	}
	lo, err := batch.Wait(ctx, s.client, "backlog", time.Second, nil)
	if err != nil {
		t.Fatal(err)
	}
	done := hi.Sectors[0].Finished
	after := 0
	for _, r := range lo.Sectors {
		if r.Status != job.StatusProved || hi.Sectors[0].Status != job.StatusProved {
			t.Fatalf("sector %d: %s %s", r.SectorID, r.Status, r.Error)
		}
		if r.Finished.After(done) {
			after++
		}
	}
	t.Logf("the priority-1 sector finished before %d of the 4 queued priority-5 sectors", after)
	// First come, first served (the same test with equal priorities) puts
	// it behind all of them: 0.
	if after < 1 {
		t.Fatalf("the priority-1 sector finished after all 4 backlog sectors: priority ignored")
	}
}
