package bench

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"time"
)

// RunVersion is the version of the run.json format.
const RunVersion = 1

// GPUEndDefinition says what c2flow's gpu_ms measures, so a comparison
// with another engine's numbers can say whether they mean the same.
const GPUEndDefinition = "c2flow: device slot held: NTTs for H + G1 MSMs (A, B, K, H); excludes the B-in-G2 MSM and assembly (CPU finalize)"

// Run is one bench batch: its configuration and every raw sample, so two
// runs can be compared later.
type Run struct {
	Version    int               `json:"version"`
	Config     RunConfig         `json:"config"`
	Sectors    []SectorSample    `json:"sectors"`
	Partitions []PartitionSample `json:"partitions"`
	WallMS     int64             `json:"wall_ms"`
	// SecondsPerProof is the steady-state figure: (last completion - first
	// completion) / (completions - 1), which leaves out the pipeline's
	// fill before the first sector completes. WallSecondsPerProof is
	// wall / count, fill included.
	SecondsPerProof     float64            `json:"s_per_proof"`
	WallSecondsPerProof float64            `json:"wall_s_per_proof"`
	SteadyMethod        string             `json:"steady_method"`
	DeviceBusy          map[string]float64 `json:"device_busy_fraction,omitempty"`
	Workers             []WorkerSample     `json:"workers,omitempty"`
	Resyntheses         int                `json:"resyntheses"`
	Failed              int                `json:"failed"`
}

// RunConfig is what a run was measured with.
type RunConfig struct {
	Profile          string    `json:"profile"`
	Partitions       int       `json:"partitions_per_sector"`
	Count            int       `json:"count"`
	Concurrency      int       `json:"concurrency"`
	PartitionWorkers int       `json:"partition_workers"`
	Devices          []string  `json:"devices"`
	Backend          string    `json:"backend"`
	EarlyG2          bool      `json:"early_g2"`
	Commit           string    `json:"commit"`
	GoVersion        string    `json:"go_version"`
	Cores            int       `json:"cores"`
	Host             string    `json:"host"`
	Stack            string    `json:"stack"` // embedded or the Temporal address
	GPUEnd           string    `json:"gpu_end_definition"`
	Started          time.Time `json:"started"`
}

// SectorSample is one sector's outcome.
type SectorSample struct {
	SectorID    uint64 `json:"sector_id"`
	Status      string `json:"status"`
	ProveMS     int64  `json:"prove_ms"`     // workflow start to C2 stored
	QueueMS     int64  `json:"queue_ms"`     // submit to the sector's workflow start
	CompletedMS int64  `json:"completed_ms"` // since submit
	Error       string `json:"error,omitempty"`
}

// PartitionSample is one partition's phase times.
type PartitionSample struct {
	SectorID      uint64 `json:"sector_id"`
	Partition     int    `json:"partition"`
	Host          string `json:"host"`
	Device        string `json:"device"`
	SynthMS       int64  `json:"synth_ms"`
	QueueMS       int64  `json:"queue_ms"`
	GPUMS         int64  `json:"gpu_ms"`
	FinalizeMS    int64  `json:"finalize_ms"`
	Syntheses     int    `json:"syntheses"`
	DeviceStartMS int64  `json:"device_start_ms"` // since submit
	DeviceEndMS   int64  `json:"device_end_ms"`
}

// WorkerSample is what a worker process used.
type WorkerSample struct {
	ID         string `json:"id"`
	PeakRSS    int64  `json:"peak_rss_bytes"` // sampled every 100 ms, and the kernel's VmHWM
	PeakBudget int    `json:"peak_in_flight"`
	Budget     int    `json:"budget"`
}

// Field returns a partition-level metric's samples (gpu_ms, synth_ms,
// finalize_ms, queue_ms) or the sector-level prove_ms.
func (r *Run) Field(name string) ([]float64, error) {
	var v []float64
	if name == "prove_ms" {
		for _, s := range r.Sectors {
			if s.Status == "proved" {
				v = append(v, float64(s.ProveMS))
			}
		}
		return v, nil
	}
	for _, p := range r.Partitions {
		switch name {
		case "gpu_ms":
			v = append(v, float64(p.GPUMS))
		case "synth_ms":
			v = append(v, float64(p.SynthMS))
		case "finalize_ms":
			v = append(v, float64(p.FinalizeMS))
		case "queue_ms":
			v = append(v, float64(p.QueueMS))
		default:
			return nil, fmt.Errorf("unknown field %q (gpu_ms, synth_ms, finalize_ms, queue_ms, prove_ms)", name)
		}
	}
	return v, nil
}

// WriteRun writes a run as indented JSON.
func WriteRun(path string, r *Run) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// ReadRun reads a run.json.
func ReadRun(path string) (*Run, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return decodeRun(path, b)
}

// decodeRun decodes the run.json read from path.
func decodeRun(path string, b []byte) (*Run, error) {
	var r Run
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if r.Version != RunVersion {
		return nil, fmt.Errorf("%s: run.json version %d, want %d", path, r.Version, RunVersion)
	}
	return &r, nil
}

// Environment fills the machine and build facts of a configuration.
func (c *RunConfig) Environment() {
	c.GoVersion = runtime.Version()
	c.Cores = runtime.NumCPU()
	c.Host, _ = os.Hostname()
	c.GPUEnd = GPUEndDefinition
	if out, err := exec.Command("git", "rev-parse", "--short", "HEAD").Output(); err == nil {
		c.Commit = strings.TrimSpace(string(out))
	}
}
