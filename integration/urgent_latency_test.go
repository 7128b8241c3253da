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
	"github.com/c2flow/c2flow/filecoin/fctest"
	"github.com/c2flow/c2flow/filecoin/post"
	"github.com/c2flow/c2flow/filecoin/post/posttest"
	"github.com/c2flow/c2flow/filecoin/proofs"
	"github.com/c2flow/c2flow/filecoin/snark"
	"github.com/c2flow/c2flow/job"
	"github.com/c2flow/c2flow/registry"
	"github.com/c2flow/c2flow/scheme"
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
	samples := urgentSamples(t)
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
	u := urgentBench{t: t, s: s, w: w, samples: samples, what: "priority-1 2KiB test-scheme proof", load: "priority-3 32KiB test-scheme sectors"}
	u.measure(ctx, func(label string, priority int) (job.Ref, batch.Options) {
		next++
		return s.putC1(poreptest.Sector(t, "2KiB", next).C1()), batch.Options{BatchID: fmt.Sprintf("%s-%d", label, next), Priority: priority}
	}, func() []job.Ref {
		// More priority-3 32KiB sectors than the host proves in the
		// measurement.
		var load []job.Ref
		for i := uint64(0); i < 40; i++ {
			load = append(load, s.putC1(poreptest.Sector(t, "32KiB", 100+i).C1()))
		}
		return load
	})
}

// urgentBench measures urgent proofs' latency on one worker, idle and
// under a priority-3 load.
type urgentBench struct {
	t          *testing.T
	s          *stack
	w          *workerProc
	samples    int
	what, load string
}

// measure runs: a warm-up, samples idle proofs at priority 1, then the
// load (submitted at priority 3, at most 40 in flight), samples busy at
// priority 1 and samples busy at priority 2 for contrast; next gives each
// measured proof's input (stored) and its batch options.
func (u urgentBench) measure(ctx context.Context, next func(label string, priority int) (job.Ref, batch.Options), load func() []job.Ref) {
	t, s, w := u.t, u.s, u.w
	urgent := func(label string, priority int) time.Duration {
		t.Helper()
		ref, o := next(label, priority)
		t0 := time.Now()
		run, err := batch.Submit(ctx, s.client, []job.Ref{ref}, o)
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
	// Warm: the keys loaded, the queues polled.
	urgent("warm", 1)
	var idle []time.Duration
	for range u.samples {
		idle = append(idle, urgent("idle", 1))
	}
	if _, err := batch.Submit(ctx, s.client, load(), batch.Options{BatchID: "porep-load", MaxInFlight: 40, Priority: 3}); err != nil {
		t.Fatal(err)
	}
	saturated := func(st activities.Stats) bool {
		return st.Budget.InFlight >= st.Budget.Max && st.Host.DevicePhases >= 1
	}
	busyOf := func(label string, priority int) []time.Duration {
		var out []time.Duration
		for range u.samples {
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
	t.Logf("%s, submit to result, %d samples each, under %s (2 partition budget, 1 cpu device):", u.what, u.samples, u.load)
	t.Logf("  idle        %v (median of %v)", mi.Round(time.Millisecond), idle)
	t.Logf("  busy        %v (median of %v): %.2fx idle; target 3x idle + 3 s = %v: met %v", mb.Round(time.Millisecond), busy, float64(mb)/float64(mi), target.Round(time.Millisecond), mb <= target)
	t.Logf("  busy, prio 2 %v (median of %v): %.2fx idle (no urgent lane or reserve)", m2.Round(time.Millisecond), busy2, float64(m2)/float64(mi))
	st := w.readStats()
	t.Logf("host: %+v; urgent reserve %+v", st.Host, st.Urgent)
}

// The same measurement with a real 2KiB WinningPoSt as the urgent proof,
// admitted as the gateway admits Curio's WINNING_POST (its canonical
// input stored, priority 1, job.UrgentTimeouts), under priority-3 2KiB
// Filecoin PoRep sectors (StackedDrg2KiBV1_1, 2.7 million constraints a
// partition against the winning circuit's 91 thousand), on one worker
// with a 2-partition budget and one CPU device, under development setups.
// Opt in: C2FLOW_BENCH_URGENT=1 (or =N samples).
func TestWinningPoStLatencyUnderPoRep(t *testing.T) {
	samples := urgentSamples(t)
	dir := filecoinDevParams(t)
	if _, err := snark.DevSetup(context.Background(), "StackedDrgWinning2KiBV1", dir, fctest.Setups(), nil); err != nil {
		t.Fatal(err)
	}
	s := newStack(t, "2KiB")
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Minute)
	defer cancel()
	s.publishFilecoinDevParams(ctx, dir)
	w := s.startWorkerKeys("w", activities.Config{PartitionWorkers: 2}, registry.Options{FilecoinParams: t.TempDir()})
	info, err := proofs.LookupPoSt(proofs.StackedDrgWinning2KiBV1)
	if err != nil {
		t.Fatal(err)
	}
	set := registry.Schemes(registry.Options{})
	var n byte
	u := urgentBench{t: t, s: s, w: w, samples: samples, what: "2KiB WinningPoSt", load: "priority-3 2KiB Filecoin PoRep sectors"}
	u.measure(ctx, func(label string, priority int) (job.Ref, batch.Options) {
		n++
		var r [32]byte
		r[0], r[1] = n, 0x57 // each sample another epoch's randomness: a new job
		r = post.MaskRandomness(r)
		vs, err := posttest.Bincodes(info, r, 7)
		if err != nil {
			t.Fatal(err)
		}
		a, err := set.Admit(ctx, scheme.Request{Kind: scheme.KindWinningPoSt, RegisteredProof: uint64(info.Proof), MinerID: 1000, Vanilla: vs, Randomness: r[:]})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.store.PutC1(ctx, a.Ref, a.Input); err != nil {
			t.Fatal(err)
		}
		// The kind's declared policy, as the gateway applies it.
		return a.Ref, batch.Options{BatchID: fmt.Sprintf("%s-%d", label, n), Priority: priority, Timeouts: a.Policy.Timeouts()}
	}, func() []job.Ref {
		var load []job.Ref
		for i := uint64(0); i < 30; i++ {
			ref, _ := s.putFilecoinC1(300+i, nil)
			load = append(load, ref)
		}
		return load
	})
}

// urgentSamples is the opt-in sample count (C2FLOW_BENCH_URGENT); the test
// is skipped without it.
func urgentSamples(t *testing.T) int {
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
	return samples
}
