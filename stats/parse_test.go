package stats

import (
	"strings"
	"testing"
)

func TestParseLogFormats(t *testing.T) {
	log := strings.Join([]string{
		`time=2026-12-02T14:51:02.000Z level=INFO msg=GPU_END partition=201/3 device=cpu/0 bytes=1680224 ntt_ms=233 msm_ms=2340 gpu_ms=2574`,
		`{"time":"2026-12-02T14:51:02Z","level":"INFO","msg":"GPU_END","partition":"1/0","device":"cpu/0","gpu_ms":1000}`,
		`TIMELINE,12345,GPU_END,job-7,worker=2,partition=3,gpu_ms=4100`,
		`GPU_END partition=9/9 gpu_ms=3000`,
		`time=... level=INFO msg=GPU_START partition=201/3 device=cpu/0 queue_ms=0`,
		`TIMELINE,12000,GPU_START,job-7,worker=2,partition=3`,
		`{"msg":"SYNTH_END","synth_ms":120}`,
		`garbage line`,
		`level=INFO msg=NOT_GPU_END gpu_ms=99`,
	}, "\n")
	got, err := ParseLog(strings.NewReader(log), "gpu_ms")
	if err != nil {
		t.Fatal(err)
	}
	want := []float64{2574, 1000, 4100, 3000}
	if len(got.Values) != len(want) {
		t.Fatalf("values %v, want %v", got.Values, want)
	}
	for i := range want {
		if got.Values[i] != want[i] {
			t.Fatalf("values %v, want %v", got.Values, want)
		}
	}
	if got.Skipped != 5 {
		t.Fatalf("skipped %d lines, want 5", got.Skipped)
	}
	for _, f := range []string{"slog-text", "slog-json", "cuzk-timeline", "plain"} {
		if got.Formats[f] != 1 {
			t.Fatalf("formats %v", got.Formats)
		}
	}
	s, _ := ParseLog(strings.NewReader(log), "synth_ms")
	if len(s.Values) != 1 || s.Values[0] != 120 {
		t.Fatalf("synth_ms %v", s.Values)
	}
}
