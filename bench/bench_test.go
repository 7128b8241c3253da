package bench

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/c2flow/c2flow/stats"
)

func testRun(profile string, partitions int, gpu func(i int) int64) *Run {
	r := &Run{Version: RunVersion, Config: RunConfig{Profile: profile, Partitions: 4, Count: partitions / 4, Concurrency: 3, Host: "h", Cores: 2, GPUEnd: GPUEndDefinition},
		SecondsPerProof: 13.2, WallMS: 80000}
	for i := 0; i < partitions; i++ {
		r.Partitions = append(r.Partitions, PartitionSample{SectorID: uint64(i / 4), Partition: i % 4, GPUMS: gpu(i), SynthMS: 120, FinalizeMS: 900, Syntheses: 1, Device: "cpu/0", Host: "w", DeviceStartMS: int64(i) * 3000, DeviceEndMS: int64(i)*3000 + gpu(i)})
	}
	for s := 0; s < partitions/4; s++ {
		r.Sectors = append(r.Sectors, SectorSample{SectorID: uint64(s), Status: "proved", ProveMS: 14000})
	}
	return r
}

func TestRunJSONRoundTrip(t *testing.T) {
	r := testRun("32KiB", 8, func(i int) int64 { return 2000 + int64(i) })
	r.DeviceBusy = map[string]float64{"w/cpu/0": 0.8}
	r.Workers = []WorkerSample{{ID: "w", PeakRSS: 1 << 29, PeakBudget: 2, Budget: 2}}
	p := filepath.Join(t.TempDir(), "run.json")
	if err := WriteRun(p, r); err != nil {
		t.Fatal(err)
	}
	back, err := ReadRun(p)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, r) {
		t.Fatalf("round trip differs:\n%+v\n%+v", back, r)
	}
	v, err := back.Field("gpu_ms")
	if err != nil || len(v) != 8 || v[3] != 2003 {
		t.Fatalf("gpu_ms %v %v", v, err)
	}
	if _, err := back.Field("bogus"); err == nil {
		t.Fatal("unknown field accepted")
	}
}

func TestCompareWarnsAndJudges(t *testing.T) {
	// 150 vs 200 partitions, like the seeds; new is 5% slower on the device.
	base := testRun("32KiB", 152, func(i int) int64 { return 2000 + int64(i%17)*10 })
	slow := testRun("32KiB", 200, func(i int) int64 { return 2100 + int64(i%17)*10 })
	rep := CompareInputs([]*Input{{Path: "a", Run: base, Format: "run.json"}}, []*Input{{Path: "b", Run: slow, Format: "run.json"}})
	if len(rep.Warnings) == 0 || !strings.Contains(strings.Join(rep.Warnings, "\n"), "partition counts") {
		t.Fatalf("no partition-count warning: %v", rep.Warnings)
	}
	var gpu stats.Comparison
	for _, c := range rep.Metrics {
		if c.Metric == "gpu_ms" {
			gpu = c
		}
	}
	if gpu.Verdict != stats.Regression {
		t.Fatalf("gpu_ms verdict %q", gpu.Verdict)
	}
	if !strings.HasPrefix(rep.ProofVerdict, "unknown") {
		t.Fatalf("s/proof judged from one run per side: %q", rep.ProofVerdict)
	}
	var b strings.Builder
	rep.Print(&b)
	if !strings.Contains(b.String(), "regression") {
		t.Fatalf("report:\n%s", b.String())
	}
	dir := t.TempDir()
	if err := WriteBenchstat(dir, []*Input{{Run: base}}, []*Input{{Run: slow}}); err != nil {
		t.Fatal(err)
	}
	bs, _ := os.ReadFile(filepath.Join(dir, "new.txt"))
	if !strings.Contains(string(bs), "BenchmarkC2flow/gpu_ms 1 2100000000 ns/op") {
		t.Fatalf("benchstat output:\n%.300s", bs)
	}
}

func TestPlotsRender(t *testing.T) {
	base := testRun("32KiB", 24, func(i int) int64 { return 2000 + int64(i%7)*40 })
	dir := t.TempDir()
	for _, name := range []string{"cmp.svg", "cmp.png"} {
		v, _ := base.Field("gpu_ms")
		w := make([]float64, len(v))
		for i := range v {
			w[i] = v[i] * 1.05
		}
		if err := PlotCompare(filepath.Join(dir, name), "gpu_ms", v, w, "base", "new"); err != nil {
			t.Fatal(err)
		}
	}
	if err := PlotTimeline(filepath.Join(dir, "tl.png"), base); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"cmp.svg", "cmp.png", "tl.png"} {
		st, err := os.Stat(filepath.Join(dir, name))
		if err != nil || st.Size() < 1000 {
			t.Fatalf("%s: %v", name, err)
		}
	}
	if err := PlotTimeline(filepath.Join(dir, "x.jpg"), base); err == nil {
		t.Fatal("unknown extension accepted")
	}
}
