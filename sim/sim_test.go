package sim

import (
	"context"
	"strings"
	"testing"
	"time"
)

func TestFromLog(t *testing.T) {
	m := DefaultModel()
	if len(m.DeviceMS) < 30 || len(m.SynthMS) < 30 || len(m.FinalizeMS) < 30 {
		t.Fatalf("embedded model: %d/%d/%d samples", len(m.SynthMS), len(m.DeviceMS), len(m.FinalizeMS))
	}
	if d := m.MeanDevice(); d < time.Second || d > 5*time.Second {
		t.Fatalf("embedded mean device time %v", d)
	}
	// A log without a phase is refused, naming it.
	_, err := FromLog(strings.NewReader("level=INFO msg=GPU_END partition=1/0 gpu_ms=10\nlevel=INFO msg=SYNTH_END partition=1/0 synth_ms=3\n"))
	if err == nil || !strings.Contains(err.Error(), "finalize_ms") {
		t.Fatalf("log without FINALIZE_END: %v", err)
	}
	m.Scale = 0
	if m.Validate() == nil {
		t.Fatal("scale 0 accepted")
	}
}

// runSmallFleet runs 2 hosts x 2 devices, 6 sectors of 3 partitions, budget
// 3, on the server of cfg's Postgres and HistoryShards, and checks that every
// sector completes and no host exceeds its budget.
func runSmallFleet(t *testing.T, cfg Config) *Report {
	t.Helper()
	m := DefaultModel()
	m.Partitions, m.Scale = 3, 0.05 // ~110 ms device phases
	cfg.Workers, cfg.DevicesPerWorker, cfg.Sectors, cfg.Budget, cfg.Model, cfg.Dir = 2, 2, 6, 3, m, t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	r, err := Run(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if r.Failed != 0 || r.Partitions != 18 {
		t.Fatalf("failed %d, partitions %d of 18", r.Failed, r.Partitions)
	}
	// The hosts' real witness table and budget did the bookkeeping: every
	// partition finalized there, nothing left holding budget.
	if r.Finalized < 18 || r.LeftInFlight != 0 {
		t.Fatalf("hosts finalized %d of 18, %d left in flight", r.Finalized, r.LeftInFlight)
	}
	if r.MaxInFlightSeen < 1 || r.MaxInFlightSeen > cfg.Budget {
		t.Fatalf("max in flight %d, budget %d", r.MaxInFlightSeen, cfg.Budget)
	}
	return r
}

// A small fleet on the real embedded Temporal: every sector completes,
// no host exceeds its budget, and the report's numbers are consistent.
func TestRunSmallFleet(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a Temporal server")
	}
	r := runSmallFleet(t, Config{})
	if r.Devices != 4 || r.IdealRate <= 0 || r.Rate <= 0 || r.DeviceBusy <= 0 || r.DeviceBusy > 1 {
		t.Fatalf("devices %d, ideal %v, rate %v, busy %v", r.Devices, r.IdealRate, r.Rate, r.DeviceBusy)
	}
	// Time between modelled work is Temporal's, and never negative.
	if r.Overhead.Median <= 0 || r.Handoff["DevicePhase->Finalize"].Median < 0 {
		t.Fatalf("overhead %+v, handoff %+v", r.Overhead, r.Handoff)
	}
	var b strings.Builder
	Table(&b, []*Report{r})
	if !strings.Contains(b.String(), "| 2 | 4 | 18 |") {
		t.Fatalf("table:\n%s", b.String())
	}
}
