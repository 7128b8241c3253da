package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// The simulation runs as a user runs it: two fleet sizes, a table, JSON.
func TestSimCommand(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Temporal servers")
	}
	dir := t.TempDir()
	out := filepath.Join(dir, "sim.json")
	err := dispatch(context.Background(), []string{"sim", "--workers", "1,2", "--devices-per-worker", "1",
		"--sectors", "2", "--partitions", "2", "--scale", "0.05", "--dir", dir, "--out", out})
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var rs []struct {
		Workers    int     `json:"workers"`
		Partitions int     `json:"partitions"`
		Failed     int     `json:"failed_sectors"`
		Rate       float64 `json:"partitions_per_s"`
	}
	if err := json.Unmarshal(b, &rs); err != nil {
		t.Fatal(err)
	}
	if len(rs) != 2 || rs[0].Workers != 1 || rs[1].Workers != 2 {
		t.Fatalf("reports %+v", rs)
	}
	for _, r := range rs {
		if r.Partitions != 4 || r.Failed != 0 || r.Rate <= 0 {
			t.Errorf("W=%d: %+v", r.Workers, r)
		}
	}
}
