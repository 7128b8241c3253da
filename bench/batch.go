package bench

import (
	"context"
	"fmt"
	"io"
	"sort"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/c2flow/c2flow/batch"
	"github.com/c2flow/c2flow/job"
	"github.com/c2flow/c2flow/stats"
)

// BatchOptions configure a bench batch.
type BatchOptions struct {
	BatchID     string
	Concurrency int // sectors in flight
	Config      RunConfig
	// Workers, if set, reports the worker processes' memory and budget
	// (only an embedded stack can; external workers report through their
	// own stats files).
	Workers func() []WorkerSample
	// Progress receives a line per completed sector as it happens.
	Progress func(line string)
}

// BatchBench submits the sectors through the real pipeline, follows them
// and returns the run with every raw sample.
func BatchBench(ctx context.Context, c client.Client, refs []job.Ref, o BatchOptions) (*Run, error) {
	run := &Run{Version: RunVersion, Config: o.Config}
	run.Config.Count, run.Config.Concurrency = len(refs), o.Concurrency
	run.Config.Started = time.Now()
	t0 := run.Config.Started
	if _, err := batch.Submit(ctx, c, refs, batch.Options{BatchID: o.BatchID, MaxInFlight: o.Concurrency}); err != nil {
		return nil, err
	}
	seen := map[uint64]bool{}
	done := 0
	progress := func(p job.BatchProgress) {
		for _, s := range p.Sectors {
			if seen[s.SectorID] || (s.Status != job.StatusProved && s.Status != job.StatusFailed) {
				continue
			}
			seen[s.SectorID] = true
			done++
			if o.Progress != nil {
				o.Progress(fmt.Sprintf("[%d/%d] sector %d %s at +%.1fs", done, len(refs), s.SectorID, s.Status, time.Since(t0).Seconds()))
			}
		}
	}
	res, err := batch.Wait(ctx, c, o.BatchID, 200*time.Millisecond, progress)
	run.WallMS = time.Since(t0).Milliseconds()
	if err == nil {
		err = batch.FillPartitions(ctx, c, &res)
	}
	if err != nil {
		return nil, err
	}
	ms := func(t time.Time) int64 {
		if t.IsZero() {
			return 0
		}
		return t.Sub(t0).Milliseconds()
	}
	var completions []float64
	for _, s := range res.Sectors {
		ss := SectorSample{SectorID: s.SectorID, Status: s.Status, Error: s.Error,
			ProveMS: s.Finished.Sub(s.Started).Milliseconds(), QueueMS: ms(s.Started), CompletedMS: ms(s.Finished)}
		run.Sectors = append(run.Sectors, ss)
		if s.Status != job.StatusProved {
			run.Failed++
			continue
		}
		completions = append(completions, float64(ss.CompletedMS))
		if run.Config.Partitions == 0 {
			run.Config.Partitions = len(s.Partitions)
		}
		for _, p := range s.Partitions {
			run.Partitions = append(run.Partitions, PartitionSample{SectorID: s.SectorID, Partition: p.Partition, Host: p.Host, Device: p.Device,
				SynthMS: p.SynthMS, QueueMS: p.QueueMS, GPUMS: p.DeviceMS, FinalizeMS: p.FinalizeMS, Syntheses: p.Syntheses,
				DeviceStartMS: ms(p.DeviceStart), DeviceEndMS: ms(p.DeviceEnd)})
			run.Resyntheses += max(0, p.Syntheses-1)
		}
	}
	sort.Float64s(completions)
	n := len(completions)
	if n > 0 {
		run.WallSecondsPerProof = float64(run.WallMS) / 1000 / float64(n)
	}
	if n > 1 {
		run.SecondsPerProof = (completions[n-1] - completions[0]) / 1000 / float64(n-1)
		run.SteadyMethod = "(last completion - first completion) / (completions - 1): the pipeline fill before the first completion is excluded"
	} else {
		run.SecondsPerProof = run.WallSecondsPerProof
		run.SteadyMethod = "one completion: wall / count"
	}
	run.DeviceBusy = map[string]float64{}
	for _, p := range run.Partitions {
		key := p.Host + "/" + p.Device
		run.DeviceBusy[key] += float64(p.GPUMS) / float64(run.WallMS)
	}
	if o.Workers != nil {
		run.Workers = o.Workers()
	}
	return run, nil
}

// PrintSummary writes a run's summary.
func PrintSummary(w io.Writer, r *Run) {
	fmt.Fprintf(w, "\n%d sectors (%s, %d partitions each) at concurrency %d: wall %.1fs\n", r.Config.Count, r.Config.Profile, r.Config.Partitions, r.Config.Concurrency, float64(r.WallMS)/1000)
	fmt.Fprintf(w, "s/proof (steady state) %.2f   s/proof (wall/count) %.2f\n  steady state: %s\n", r.SecondsPerProof, r.WallSecondsPerProof, r.SteadyMethod)
	for _, f := range []string{"synth_ms", "queue_ms", "gpu_ms", "finalize_ms", "prove_ms"} {
		v, _ := r.Field(f)
		fmt.Fprintf(w, "%-12s %s\n", f, stats.Summarize(v))
	}
	keys := make([]string, 0, len(r.DeviceBusy))
	for k := range r.DeviceBusy {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(w, "device %s busy %.1f%% of wall\n", k, 100*r.DeviceBusy[k])
	}
	for _, wk := range r.Workers {
		fmt.Fprintf(w, "worker %s: peak RSS %.0f MiB, partitions in flight max %d of budget %d\n", wk.ID, float64(wk.PeakRSS)/(1<<20), wk.PeakBudget, wk.Budget)
	}
	fmt.Fprintf(w, "re-syntheses %d, failed sectors %d\n", r.Resyntheses, r.Failed)
}
