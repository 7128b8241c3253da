package integration

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/c2flow/c2flow/activities"
	"github.com/c2flow/c2flow/batch"
	"github.com/c2flow/c2flow/job"
	"github.com/c2flow/c2flow/scheme/testscheme"
	"github.com/c2flow/c2flow/scheme/testscheme/params"
	"github.com/c2flow/c2flow/scheme/testscheme/params/paramstest"
	"github.com/c2flow/c2flow/scheme/testscheme/porep/poreptest"
)

// envUrgentBench opts in to TestUrgentLatencyUnderLoad: a measurement of
// minutes, not a check.
const envUrgentBench = "C2FLOW_BENCH_URGENT"

// How long one priority-1 proof (a one-partition 2KiB test-scheme sector,
// the shape of a WinningPoSt) takes on an idle host, against the same
// while every device and the whole synthesis budget are busy with
// priority-3 32KiB sectors (4 partitions each) and more are queued. It
// logs the latencies and the target (busy <= 3x idle + 3 s); it
// asserts only that every proof was made and that the host was busy while
// each busy sample ran. Opt in: C2FLOW_BENCH_URGENT=1 (or =N samples).
func TestUrgentLatencyUnderLoad(t *testing.T) {
	samples := 3
	switch v := os.Getenv(envUrgentBench); v {
	case "":
		t.Skipf("a measurement: set %s=1 (or a sample count) to run it", envUrgentBench)
	case "1":
	default:
		if _, err := fmt.Sscan(v, &samples); err != nil || samples < 1 {
			t.Fatalf("%s=%q: a sample count", envUrgentBench, v)
		}
	}
	s := newStack(t, "32KiB")
	paramstest.Keys(t, "2KiB")
	keys := testscheme.New(params.Cache{Local: params.DirStore{Root: paramstest.Dir()}, Remote: s.store})
	if err := keys.EnsureKeys(context.Background(), "2KiB", true, io.Discard); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	w := s.startWorker("w", activities.Config{PartitionWorkers: 2, Profiles: []string{"2KiB", "32KiB"}})
	next := uint64(5000)
	urgent := func(label string, priority int) time.Duration {
		t.Helper()
		next++
		ref := s.putC1(poreptest.Sector(t, "2KiB", next).C1())
		t0 := time.Now()
		run, err := batch.Submit(ctx, s.client, []job.SectorRef{ref}, batch.Options{BatchID: fmt.Sprintf("%s-%d", label, next), Priority: priority})
		if err != nil {
			t.Fatal(err)
		}
		var res job.BatchResult
		if err := run.Get(ctx, &res); err != nil {
			t.Fatal(err)
		}
		d := time.Since(t0)
		if len(res.Sectors) != 1 || res.Sectors[0].Status != job.StatusProved {
			t.Fatalf("%s: %+v", label, res.Sectors)
		}
		r := res.Sectors[0]
		p := r.Partitions[0]
		t.Logf("%s: %v: sector workflow %v after submit, partition synth %d ms, device queue %d ms, device %d ms, finalize %d ms, finalized %v before the sector's end",
			label, d.Round(time.Millisecond), r.Started.Sub(t0).Round(time.Millisecond), p.SynthMS, p.QueueMS, p.DeviceMS, p.FinalizeMS, r.Finished.Sub(p.FinalizedAt).Round(time.Millisecond))
		return d
	}
	median := func(v []time.Duration) time.Duration {
		v = slices.Clone(v)
		slices.Sort(v)
		return v[len(v)/2]
	}
	// Warm: the 2KiB and 32KiB keys loaded, the queues polled.
	urgent("warm", 1)
	var idle []time.Duration
	for range samples {
		idle = append(idle, urgent("idle", 1))
	}

	// The load: more priority-3 32KiB sectors than the host proves in the
	// measurement.
	var load []job.SectorRef
	for i := uint64(0); i < 40; i++ {
		load = append(load, s.putC1(poreptest.Sector(t, "32KiB", 100+i).C1()))
	}
	if _, err := batch.Submit(ctx, s.client, load, batch.Options{BatchID: "porep-load", MaxInFlight: 40, Priority: 3}); err != nil {
		t.Fatal(err)
	}
	saturated := func(st activities.Stats) bool {
		return st.Budget.InFlight >= st.Budget.Max && st.Host.DevicePhases >= 1
	}
	busyOf := func(label string, priority int) []time.Duration {
		var out []time.Duration
		for range samples {
			w.waitStats(5*time.Minute, saturated)
			d := urgent(label, priority)
			// Still full of the load's witnesses, each waiting for the
			// device or on it: busy from start to end.
			if st := w.readStats(); !saturated(st) {
				t.Fatalf("%s: the load did not keep the host busy to the sample's end: %+v", label, st.Budget)
			}
			out = append(out, d)
		}
		return out
	}
	busy := busyOf("busy", 1)
	// The same at priority 2 (ahead in every queue, no urgent lane or
	// reserve): what the lanes buy.
	busy2 := busyOf("busy-p2", 2)
	mi, mb, m2 := median(idle), median(busy), median(busy2)
	target := 3*mi + 3*time.Second
	t.Logf("priority-1 2KiB proof, submit to result, %d samples each, under priority-3 32KiB load (2 partition budget, 1 cpu device):", samples)
	t.Logf("  idle        %v (median of %v)", mi.Round(time.Millisecond), idle)
	t.Logf("  busy        %v (median of %v): %.2fx idle; target 3x idle + 3 s = %v: met %v", mb.Round(time.Millisecond), busy, float64(mb)/float64(mi), target.Round(time.Millisecond), mb <= target)
	t.Logf("  busy, prio 2 %v (median of %v): %.2fx idle (no urgent lane or reserve)", m2.Round(time.Millisecond), busy2, float64(m2)/float64(mi))
	st := w.readStats()
	t.Logf("host: %+v; urgent reserve %+v", st.Host, st.Urgent)
}
