package integration

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/c2flow/c2flow/activities"
	"github.com/c2flow/c2flow/batch"
	"github.com/c2flow/c2flow/job"
	"github.com/c2flow/c2flow/scheme/testscheme"
	"github.com/c2flow/c2flow/scheme/testscheme/porep"
	"github.com/c2flow/c2flow/scheme/testscheme/porep/poreptest"
	"github.com/c2flow/c2flow/scheme/testscheme/schemetest"
	"github.com/c2flow/c2flow/storage"
	"github.com/c2flow/c2flow/storage/s3server"
)

// scrapeMetrics fetches a Prometheus endpoint and checks that each series
// appears.
func scrapeMetrics(t *testing.T, url string, want []string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	body := string(b)
	for _, w := range want {
		if !strings.Contains(body, w) {
			t.Errorf("metrics lack %s", w)
		}
	}
}

func (s *stack) putC1(c1 *porep.C1) job.Ref {
	s.t.Helper()
	ref, err := schemetest.PutC1(context.Background(), s.store, c1)
	if err != nil {
		s.t.Fatal(err)
	}
	return ref
}

// c2Key is the C2 key of a test sector's C1.
func c2Key(t testing.TB, c1 *porep.C1) string {
	var b bytes.Buffer
	if err := c1.Encode(&b); err != nil {
		t.Fatal(err)
	}
	return storage.C2Key(job.NewRef(c1.ProverID, c1.SectorID, b.Bytes()))
}

func (s *stack) run(ctx context.Context, o batch.Options, refs []job.Ref) job.BatchResult {
	s.t.Helper()
	if _, err := batch.Submit(ctx, s.client, refs, o); err != nil {
		s.t.Fatal(err)
	}
	res, err := batch.Wait(ctx, s.client, o.BatchID, time.Second, nil)
	if err != nil {
		s.t.Fatal(err)
	}
	return res
}

func (s *stack) verifyStored(c1 *porep.C1) error {
	b, err := s.store.Get(context.Background(), c2Key(s.t, c1))
	if err != nil {
		return err
	}
	c2, err := testscheme.UnmarshalC2(b)
	if err != nil {
		return err
	}
	return testscheme.VerifyC2(s.keys.VK, c1.Statement(), c2)
}

// Two sectors of four partitions and one corrupt C1, two worker processes
// with a budget of two partitions each.
func TestBatchEndToEnd(t *testing.T) {
	s := newStack(t, "32KiB")
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	metricsAddr, err := s3server.FreeAddr()
	if err != nil {
		t.Fatal(err)
	}
	w1 := s.startWorkerMetrics("w1", activities.Config{PartitionWorkers: 2}, metricsAddr)
	w2 := s.startWorker("w2", activities.Config{PartitionWorkers: 2})

	good := []*porep.C1{poreptest.Sector(t, "32KiB", 101).C1(), poreptest.Sector(t, "32KiB", 102).C1()}
	bad := poreptest.Sector(t, "32KiB", 103).C1()
	bad.Partitions[2].Challenges[1].ColumnPath[3].SetUint64(7) // a flipped sibling in partition 2
	refs := []job.Ref{s.putC1(good[0]), s.putC1(bad), s.putC1(good[1])}

	res := s.run(ctx, batch.Options{BatchID: "e2e", MaxInFlight: 3}, refs)
	byID := map[uint64]job.SectorResult{}
	for _, r := range res.Sectors {
		byID[r.SectorID] = r
	}
	for _, c1 := range good {
		r := byID[c1.SectorID]
		if r.Status != job.StatusProved {
			t.Fatalf("sector %d: %s: %s", c1.SectorID, r.Status, r.Error)
		}
		if err := s.verifyStored(c1); err != nil {
			t.Fatalf("sector %d: stored C2: %v", c1.SectorID, err)
		}
	}
	if r := byID[103]; r.Status != job.StatusFailed || !bytes.Contains([]byte(r.Error), []byte("comm_c")) {
		t.Fatalf("corrupt sector: %s %q", r.Status, r.Error)
	}
	if _, err := s.store.Get(ctx, c2Key(t, bad)); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("something is stored for the corrupt sector: %v", err)
	}

	// The worker's Prometheus endpoint: c2flow's own metrics and the SDK's.
	scrapeMetrics(t, "http://"+metricsAddr+"/metrics", []string{
		`c2flow_partition_phase_seconds_count{phase="device"}`,
		`c2flow_partition_phase_seconds_count{phase="synth"}`,
		`c2flow_partition_phase_seconds_count{phase="queue"}`,
		`c2flow_partition_phase_seconds_count{phase="finalize"}`,
		`c2flow_budget_partitions_max 2`,
		`c2flow_budget_partitions_peak`,
		`c2flow_device_busy_seconds_total{device="cpu/0"}`,
		`temporal_activity_execution_latency_seconds_count`,
		`temporal_worker_task_slots_available`,
	})

	// The same batch again: the completed run answers, nothing is redone.
	again := s.run(ctx, batch.Options{BatchID: "e2e"}, refs)
	if len(again.Sectors) != 3 {
		t.Fatalf("resubmission: %+v", again)
	}
	// The sectors in a new batch: their workflows already completed.
	dup := s.run(ctx, batch.Options{BatchID: "e2e-dup"}, refs[:1])
	if dup.Sectors[0].Status != job.StatusDuplicate || dup.Sectors[0].C2Key != c2Key(t, good[0]) {
		t.Fatalf("duplicate sector: %+v", dup.Sectors[0])
	}

	for _, w := range []*workerProc{w1, w2} {
		if err := w.stop(); err != nil {
			t.Fatal(err)
		}
	}
	var total int
	for _, w := range []*workerProc{w1, w2} {
		st := w.readStats()
		t.Logf("worker %s: %d syntheses, %d device phases, peak in flight %d of %d, peak RSS %d MiB",
			w.id, st.Host.Syntheses, st.Host.DevicePhases, st.Budget.Peak, st.Budget.Max, st.PeakRSS>>20)
		if st.Budget.Peak > st.Budget.Max {
			t.Errorf("worker %s: %d partitions in flight, budget %d", w.id, st.Budget.Peak, st.Budget.Max)
		}
		if st.Host.Syntheses == 0 {
			t.Errorf("worker %s got no work", w.id)
		}
		if st.Budget.InFlight != 0 || st.Budget.HeldBytes != 0 {
			t.Errorf("worker %s: budget not returned: %+v", w.id, st.Budget)
		}
		total += st.Host.Syntheses
	}
	// Work is redone only where the workflow decided so (a witness lost to
	// a timeout under load): the workers' count matches the workflows'.
	want := 0
	for _, c1 := range good {
		for _, p := range byID[c1.SectorID].Partitions {
			want += p.Syntheses
		}
	}
	if want < 8 || total != want {
		t.Errorf("workers ran %d syntheses, the workflows asked for %d (8 partitions)", total, want)
	}
	if want > 8 {
		t.Logf("%d partitions were synthesized again", want-8)
	}
}

// A budget of one partition is never exceeded, even with work for many.
func TestBudgetOfOne(t *testing.T) {
	s := newStack(t, "32KiB")
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	w := s.startWorker("solo", activities.Config{PartitionWorkers: 1})
	c1 := poreptest.Sector(t, "32KiB", 201).C1()
	res := s.run(ctx, batch.Options{BatchID: "one"}, []job.Ref{s.putC1(c1)})
	if res.Sectors[0].Status != job.StatusProved {
		t.Fatalf("%+v", res.Sectors[0])
	}
	if err := w.stop(); err != nil {
		t.Fatal(err)
	}
	st := w.readStats()
	if st.Budget.Peak != 1 || st.Budget.Max != 1 {
		t.Fatalf("budget stats %+v", st.Budget)
	}
}
