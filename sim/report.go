package sim

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/c2flow/c2flow/activities"
	"github.com/c2flow/c2flow/metrics"
	"github.com/c2flow/c2flow/stats"
)

// Latency is a distribution of durations in milliseconds.
type Latency struct {
	Median float64 `json:"median_ms"`
	P90    float64 `json:"p90_ms"`
	P99    float64 `json:"p99_ms"`
	Mean   float64 `json:"mean_ms"`
}

func latency(v []float64) Latency {
	if len(v) == 0 {
		return Latency{}
	}
	s := stats.Summarize(v)
	return Latency{Median: s.Median, P90: s.P90, P99: s.P99, Mean: s.Mean}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// Report is what one simulation run measured.
type Report struct {
	Workers          int     `json:"workers"`
	DevicesPerWorker int     `json:"devices_per_worker"`
	Devices          int     `json:"devices"`
	Sectors          int     `json:"sectors"`
	Partitions       int     `json:"partitions"`
	Budget           int     `json:"budget_per_worker"`
	MaxInFlight      int     `json:"max_sectors_in_flight"`
	Model            string  `json:"model"`
	Scale            float64 `json:"scale"`
	ArrivalOrder     bool    `json:"arrival_order"`
	QueuePartitions  int     `json:"queue_partitions"`
	Failed           int     `json:"failed_sectors"`
	Resyntheses      int     `json:"resyntheses"`
	WallS            float64 `json:"wall_s"`
	MeanDeviceMS     float64 `json:"mean_device_ms"`
	// IdealRate is devices / mean device time: every device always busy.
	IdealRate float64 `json:"ideal_partitions_per_s"`
	// Rate is partitions finalized per second between the 10th and 90th
	// percentile of completions (fill and drain excluded).
	Rate       float64 `json:"partitions_per_s"`
	Efficiency float64 `json:"efficiency"`
	DeviceBusy float64 `json:"device_busy"` // of devices x wall
	// Dispatch is schedule-to-start per activity (Temporal matching; for
	// Synthesize it includes waiting for budget, which is backpressure).
	Dispatch map[string]Latency `json:"dispatch"`
	// Handoff is the gap from one activity's end to the next one's
	// scheduling: a workflow task round trip.
	Handoff map[string]Latency `json:"handoff"`
	// Overhead per partition: the handoffs plus the device and finalize
	// dispatch, the time Temporal adds between modelled work.
	Overhead Latency `json:"overhead_per_partition"`
	SlotWait Latency `json:"device_slot_wait"`
	// MaxInFlightSeen is the most partitions in flight on any host, never
	// above Budget.
	MaxInFlightSeen int     `json:"max_in_flight_seen"`
	PeakModelBytes  int64   `json:"peak_modelled_bytes_per_host"`
	SectorLatency   Latency `json:"sector_latency"`
	// MaxOpenSectors is the most sectors partly proved at once: a
	// partition finalized, the C2 not yet stored.
	MaxOpenSectors int `json:"max_open_sectors"`
	// HalfDone is the fraction of sectors stored when half of all
	// partitions were finalized: about 0.5 when sectors complete one after
	// another, near 0 when every sector ends 90% done together.
	HalfDone float64 `json:"sectors_done_at_half"`
	PeakRSS  int64   `json:"peak_rss_bytes"`
	// Finalized and LeftInFlight are the worker hosts' own counters (the
	// real witness table and budget the simulation runs under): partitions
	// finalized, and partitions still holding budget after the batch.
	Finalized    int `json:"finalized_by_hosts"`
	LeftInFlight int `json:"left_in_flight"`
}

func newReport(cfg Config, rec *Recorder, hs []activities.Stats, busy time.Duration, submitted, finished time.Time, failed int) *Report {
	r := &Report{Workers: cfg.Workers, DevicesPerWorker: cfg.DevicesPerWorker, Devices: cfg.Workers * cfg.DevicesPerWorker,
		Sectors: cfg.Sectors, Budget: cfg.Budget, MaxInFlight: cfg.MaxInFlight, Model: cfg.Model.Source, Scale: cfg.Model.Scale,
		ArrivalOrder: cfg.ArrivalOrder, QueuePartitions: max(1, cfg.QueuePartitions), Failed: failed, WallS: finished.Sub(submitted).Seconds(),
		Dispatch: map[string]Latency{}, Handoff: map[string]Latency{}, PeakRSS: metrics.PeakRSS()}
	r.MeanDeviceMS = ms(cfg.Model.MeanDevice())
	r.IdealRate = float64(r.Devices) / (r.MeanDeviceMS / 1000)
	r.DeviceBusy = busy.Seconds() / (float64(r.Devices) * r.WallS)
	for _, h := range hs {
		r.MaxInFlightSeen = max(r.MaxInFlightSeen, h.Budget.Peak)
		r.Finalized += h.Host.Finalized
		r.LeftInFlight += h.Budget.InFlight
	}
	r.PeakModelBytes = int64(r.MaxInFlightSeen) * cfg.Model.WitnessBytes

	rec.mu.Lock()
	defer rec.mu.Unlock()
	var dispatch [nPhases][]float64
	var toDevice, toFinalize, overhead, slot []float64
	var ends []time.Time
	first := map[uint64]time.Time{}    // first synthesis scheduled
	firstFin := map[uint64]time.Time{} // first partition finalized
	for k, p := range rec.parts {
		if p.attempts > 1 {
			r.Resyntheses += p.attempts - 1
		}
		s, d, f := p.phases[phaseSynth], p.phases[phaseDevice], p.phases[phaseFinalize]
		if f.ended.IsZero() {
			continue
		}
		r.Partitions++
		ends = append(ends, f.ended)
		for ph := range dispatch {
			sp := p.phases[ph]
			dispatch[ph] = append(dispatch[ph], ms(sp.started.Sub(sp.scheduled)))
		}
		toDevice = append(toDevice, ms(d.scheduled.Sub(s.ended)))
		toFinalize = append(toFinalize, ms(f.scheduled.Sub(d.ended)))
		overhead = append(overhead, ms(d.scheduled.Sub(s.ended)+d.started.Sub(d.scheduled)+f.scheduled.Sub(d.ended)+f.started.Sub(f.scheduled)))
		slot = append(slot, ms(p.slotWait))
		if t, ok := first[k.sector]; !ok || s.scheduled.Before(t) {
			first[k.sector] = s.scheduled
		}
		if t, ok := firstFin[k.sector]; !ok || f.ended.Before(t) {
			firstFin[k.sector] = f.ended
		}
	}
	for ph, v := range dispatch {
		r.Dispatch[phaseNames[ph]] = latency(v)
	}
	r.Handoff["Synthesize->DevicePhase"] = latency(toDevice)
	r.Handoff["DevicePhase->Finalize"] = latency(toFinalize)
	r.Overhead, r.SlotWait = latency(overhead), latency(slot)

	sort.Slice(ends, func(i, j int) bool { return ends[i].Before(ends[j]) })
	if n := len(ends); n >= 10 {
		lo, hi := n/10, n*9/10
		if span := ends[hi].Sub(ends[lo]).Seconds(); span > 0 {
			r.Rate = float64(hi-lo) / span
		}
	} else if r.WallS > 0 {
		r.Rate = float64(n) / r.WallS
	}
	r.Efficiency = r.Rate / r.IdealRate

	var lat []float64
	type event struct {
		t     time.Time
		delta int
	}
	var evs []event
	var half time.Time
	if len(ends) > 0 {
		half = ends[(len(ends)-1)/2]
	}
	stored := 0
	for id, s := range rec.sectors {
		st, ok := first[id]
		if !ok || s.stored.IsZero() {
			continue
		}
		lat = append(lat, ms(s.stored.Sub(st)))
		evs = append(evs, event{firstFin[id], 1}, event{s.stored, -1})
		if !s.stored.After(half) {
			stored++
		}
	}
	if len(lat) > 0 {
		r.HalfDone = float64(stored) / float64(len(lat))
	}
	r.SectorLatency = latency(lat)
	sort.Slice(evs, func(i, j int) bool {
		if evs[i].t.Equal(evs[j].t) {
			return evs[i].delta < evs[j].delta
		}
		return evs[i].t.Before(evs[j].t)
	})
	open := 0
	for _, e := range evs {
		open += e.delta
		r.MaxOpenSectors = max(r.MaxOpenSectors, open)
	}
	return r
}

// Print writes a run's report for a reader.
func (r *Report) Print(w io.Writer) {
	fmt.Fprintf(w, "%d workers x %d devices (%d), %d sectors x %d partitions = %d partitions, budget %d/worker, %d sectors in flight\n",
		r.Workers, r.DevicesPerWorker, r.Devices, r.Sectors, r.Partitions/max(1, r.Sectors), r.Partitions, r.Budget, r.MaxInFlight)
	order := "oldest sector first"
	if r.ArrivalOrder {
		order = "first come"
	}
	fmt.Fprintf(w, "model: %s, scale %g: mean device time %.0f ms; devices served %s; %d matching partition(s) per queue\n",
		r.Model, r.Scale, r.MeanDeviceMS, order, r.QueuePartitions)
	fmt.Fprintf(w, "wall %.1f s; throughput %.2f partitions/s of ideal %.2f (devices / device time): %.1f%%; device busy %.1f%%\n",
		r.WallS, r.Rate, r.IdealRate, 100*r.Efficiency, 100*r.DeviceBusy)
	fmt.Fprintf(w, "schedule-to-start (ms, median / p90 / p99):\n")
	for _, n := range phaseNames {
		l := r.Dispatch[n]
		note := ""
		if n == "Synthesize" {
			note = "  (includes waiting for budget: backpressure)"
		}
		fmt.Fprintf(w, "  %-24s %8.0f %8.0f %8.0f%s\n", n, l.Median, l.P90, l.P99, note)
	}
	for _, n := range []string{"Synthesize->DevicePhase", "DevicePhase->Finalize"} {
		l := r.Handoff[n]
		fmt.Fprintf(w, "  handoff %-16s %8.0f %8.0f %8.0f  (activity end to next scheduled: a workflow task)\n", n, l.Median, l.P90, l.P99)
	}
	fmt.Fprintf(w, "Temporal overhead per partition: median %.0f ms, p90 %.0f, mean %.0f (%.1f%% of the mean device time)\n",
		r.Overhead.Median, r.Overhead.P90, r.Overhead.Mean, 100*r.Overhead.Mean/r.MeanDeviceMS)
	fmt.Fprintf(w, "device slot wait: median %.0f ms, p90 %.0f\n", r.SlotWait.Median, r.SlotWait.P90)
	fmt.Fprintf(w, "max partitions in flight on a host: %d of budget %d (modelled memory %.0f GiB)\n",
		r.MaxInFlightSeen, r.Budget, float64(r.PeakModelBytes)/(1<<30))
	fmt.Fprintf(w, "sectors: latency median %.1f s, p90 %.1f s; at most %d partly proved at once; %.0f%% stored when half the partitions were; failed %d; re-syntheses %d\n",
		r.SectorLatency.Median/1000, r.SectorLatency.P90/1000, r.MaxOpenSectors, 100*r.HalfDone, r.Failed, r.Resyntheses)
	fmt.Fprintf(w, "peak RSS of this process (Temporal + every simulated host): %d MiB\n", r.PeakRSS>>20)
}

// Table writes one row per report, for a scaling study.
func Table(w io.Writer, rs []*Report) {
	fmt.Fprintln(w, "| W | devices | partitions | ideal p/s | actual p/s | efficiency | device busy | dispatch device / finalize p90 ms | overhead/partition median (p90) ms | max in flight / budget | sectors partly proved (max) | sectors done at half |")
	fmt.Fprintln(w, "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
	for _, r := range rs {
		fmt.Fprintf(w, "| %d | %d | %d | %.2f | %.2f | %.1f%% | %.1f%% | %.0f / %.0f | %.0f (%.0f) | %d / %d | %d | %.0f%% |\n",
			r.Workers, r.Devices, r.Partitions, r.IdealRate, r.Rate, 100*r.Efficiency, 100*r.DeviceBusy,
			r.Dispatch["DevicePhase"].P90, r.Dispatch["Finalize"].P90, r.Overhead.Median, r.Overhead.P90,
			r.MaxInFlightSeen, r.Budget, r.MaxOpenSectors, 100*r.HalfDone)
	}
}

// ParseInts parses "1,4,16".
func ParseInts(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		var v int
		if _, err := fmt.Sscan(strings.TrimSpace(f), &v); err != nil || v < 1 {
			return nil, fmt.Errorf("%q is not a positive integer", f)
		}
		out = append(out, v)
	}
	return out, nil
}
