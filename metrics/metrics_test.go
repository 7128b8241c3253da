package metrics

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

func TestListenAddr(t *testing.T) {
	for in, want := range map[string]string{
		"9464":           "127.0.0.1:9464",
		":9464":          "127.0.0.1:9464",
		"0":              "127.0.0.1:0",
		"0.0.0.0:9464":   "0.0.0.0:9464",
		"10.0.0.5:9464":  "10.0.0.5:9464",
		"[::1]:9464":     "[::1]:9464",
		"localhost:9464": "localhost:9464",
	} {
		got, err := ListenAddr(in)
		if err != nil || got != want {
			t.Errorf("ListenAddr(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "host:", "a:b:c"} {
		if got, err := ListenAddr(bad); err == nil {
			t.Errorf("ListenAddr(%q) = %q, want an error", bad, got)
		}
	}
}

// A port alone serves on loopback only, and every known series is there
// from the first scrape, at zero.
func TestServeLoopbackAndZeroSeries(t *testing.T) {
	m := New()
	addr, stop, err := m.Serve(":0")
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	if !strings.HasPrefix(addr, "127.0.0.1:") {
		t.Fatalf("served on %s, want 127.0.0.1", addr)
	}
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	body := string(b)
	for _, want := range []string{
		`c2flow_partition_phase_seconds_count{phase="queue"} 0`,
		`c2flow_activity_retries_total{activity="Synthesize"} 0`,
		`c2flow_activity_failures_total{activity="ValidateC1",kind="BadC1"} 0`,
		`c2flow_activity_failures_total{activity="StoreC2",kind="other"} 0`,
		`c2flow_budget_partitions_max 0`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("no %s in the scrape", want)
		}
	}
}

// The SDK's metric names keep one temporal_ prefix.
func TestSDKNames(t *testing.T) {
	m := New()
	h := m.SDKHandler().WithTags(map[string]string{"activity_type": "Synthesize"})
	h.Timer("temporal_activity_schedule_to_start_latency").Record(0)
	h.Counter("custom").Inc(1)
	fams, err := m.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, f := range fams {
		names[f.GetName()] = true
	}
	for _, want := range []string{"temporal_activity_schedule_to_start_latency_seconds", "temporal_custom_total"} {
		if !names[want] {
			t.Errorf("no %s among %v", want, names)
		}
	}
}
