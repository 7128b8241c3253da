package bench

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/c2flow/c2flow/stats"
	"github.com/c2flow/c2flow/storage"
)

// Input is one replicate: a run.json, C2 manifests or a worker/cuzk log.
type Input struct {
	Path      string
	Run       *Run                 // nil for a log or manifests
	Log       map[string][]float64 // field -> samples, for a log or manifests
	Manifests int                  // C2 manifests read (0 for a run.json or a log)
	Format    string               // "run.json", "manifest", "manifests(N)" or "log(<formats seen>)"
}

// Metrics compared, lower is better.
var Metrics = []string{"gpu_ms", "synth_ms", "finalize_ms", "queue_ms", "prove_ms"}

// Load reads a run.json (bench batch --out), a C2 manifest
// (storage.Manifest: the partition_ms of one sector, device_ms read as
// gpu_ms), a directory holding manifests (c2/ of a bucket, walked), or a
// log: c2flow's (text or JSON lines) or cuzk's.
func Load(path string) (*Input, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if fi.IsDir() {
		return loadManifestDir(path)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if json.Valid(b) { // one JSON document; a JSON log has one per line
		var probe struct {
			Config      json.RawMessage `json:"config"`
			PartitionMS json.RawMessage `json:"partition_ms"`
			SectorID    *uint64         `json:"sector_id"`
			ProofBytes  *int            `json:"proof_bytes"`
		}
		if json.Unmarshal(b, &probe) == nil {
			switch {
			case probe.Config != nil:
				r, err := decodeRun(path, b)
				if err != nil {
					return nil, err
				}
				return &Input{Path: path, Run: r, Format: "run.json"}, nil
			case probe.PartitionMS != nil || probe.SectorID != nil && probe.ProofBytes != nil:
				in := &Input{Path: path, Log: map[string][]float64{}, Format: "manifest"}
				if err := in.addManifest(path, b); err != nil {
					return nil, err
				}
				return in, nil
			}
		}
	}
	in, err := loadLog(path, b)
	if err != nil {
		return nil, err
	}
	if len(in.Log) == 0 {
		return nil, fmt.Errorf("%s: neither a run.json (bench batch --out), a C2 manifest (c2/....json: partition_ms) nor a log with GPU_END/SYNTH_END/FINALIZE_END lines (c2flow logs them at info: the demo and dev write them to DIR/demo.log, DIR/dev.log)", path)
	}
	return in, nil
}

// addManifest adds a C2 manifest's partition times.
func (in *Input) addManifest(path string, b []byte) error {
	var m storage.Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return fmt.Errorf("%s: C2 manifest: %w", path, err)
	}
	if len(m.PartitionMS) == 0 {
		return fmt.Errorf("%s: C2 manifest of sector %d has no partition_ms", path, m.SectorID)
	}
	for _, p := range m.PartitionMS {
		in.Log["synth_ms"] = append(in.Log["synth_ms"], float64(p.SynthMS))
		in.Log["queue_ms"] = append(in.Log["queue_ms"], float64(p.QueueMS))
		in.Log["gpu_ms"] = append(in.Log["gpu_ms"], float64(p.DeviceMS))
		in.Log["finalize_ms"] = append(in.Log["finalize_ms"], float64(p.FinalizeMS))
	}
	in.Manifests++
	return nil
}

// loadManifestDir reads every C2 manifest under dir (other JSON files,
// such as C1s and proofs, are passed over).
func loadManifestDir(dir string) (*Input, error) {
	in := &Input{Path: dir, Log: map[string][]float64{}}
	err := filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() || !strings.HasSuffix(p, ".json") {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		var probe struct {
			PartitionMS []storage.PartitionTime `json:"partition_ms"`
		}
		if json.Unmarshal(b, &probe) != nil || len(probe.PartitionMS) == 0 {
			return nil
		}
		return in.addManifest(p, b)
	})
	if err != nil {
		return nil, err
	}
	if in.Manifests == 0 {
		return nil, fmt.Errorf("%s: no C2 manifests with partition_ms under this directory", dir)
	}
	in.Format = fmt.Sprintf("manifests(%d)", in.Manifests)
	return in, nil
}

// loadLog reads the timing lines of a log.
func loadLog(path string, b []byte) (*Input, error) {
	in := &Input{Path: path, Log: map[string][]float64{}}
	var formats []string
	for _, f := range []string{"gpu_ms", "synth_ms", "finalize_ms"} {
		ls, err := stats.ParseLog(bytes.NewReader(b), f)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if len(ls.Values) > 0 {
			in.Log[f] = ls.Values
		}
		for k := range ls.Formats {
			if !contains(formats, k) {
				formats = append(formats, k)
			}
		}
	}
	in.Format = "log(" + strings.Join(formats, ",") + ")"
	return in, nil
}

func contains(v []string, s string) bool {
	for _, x := range v {
		if x == s {
			return true
		}
	}
	return false
}

// Samples returns the input's samples of a metric (nil if it has none).
func (in *Input) Samples(metric string) []float64 {
	if in.Run != nil {
		v, _ := in.Run.Field(metric)
		return v
	}
	return in.Log[metric]
}

// Report is a comparison of two sides.
type Report struct {
	Warnings     []string
	Metrics      []stats.Comparison
	ProofBase    []float64 // s/proof of each base run
	ProofNew     []float64
	ProofDiff    stats.DiffCI
	ProofVerdict string
}

// CompareInputs compares the sides metric by metric, using every replicate.
func CompareInputs(base, new []*Input) *Report {
	rep := &Report{Warnings: comparability(base, new)}
	for _, m := range Metrics {
		var b, n [][]float64
		for _, in := range base {
			if v := in.Samples(m); len(v) > 0 {
				b = append(b, v)
			}
		}
		for _, in := range new {
			if v := in.Samples(m); len(v) > 0 {
				n = append(n, v)
			}
		}
		if len(b) == 0 || len(n) == 0 {
			continue
		}
		rep.Metrics = append(rep.Metrics, stats.Compare(m, b, n))
	}
	for _, in := range base {
		if in.Run != nil {
			rep.ProofBase = append(rep.ProofBase, in.Run.SecondsPerProof)
		}
	}
	for _, in := range new {
		if in.Run != nil {
			rep.ProofNew = append(rep.ProofNew, in.Run.SecondsPerProof)
		}
	}
	switch {
	case len(rep.ProofBase) == 0 || len(rep.ProofNew) == 0:
	case len(rep.ProofBase) < 2 || len(rep.ProofNew) < 2:
		rep.ProofDiff = stats.DiffCI{Diff: stats.Mean(rep.ProofNew) - stats.Mean(rep.ProofBase)}
		rep.ProofDiff.Rel = rep.ProofDiff.Diff / stats.Mean(rep.ProofBase)
		rep.ProofVerdict = "unknown: s/proof is one number per run; replicate each side (--replicates 3) to judge it"
	default:
		// Runs are the unit: between-run variance is the noise.
		c := stats.Compare("s/proof", single(rep.ProofBase), single(rep.ProofNew))
		rep.ProofDiff, rep.ProofVerdict = c.Mean, c.Verdict
		if c.Verdict == stats.Noise {
			rep.ProofVerdict = stats.Noise + fmt.Sprintf(" (%d vs %d runs)", len(rep.ProofBase), len(rep.ProofNew))
		}
	}
	return rep
}

// single wraps each run's one value as its own replicate.
func single(v []float64) [][]float64 {
	out := make([][]float64, len(v))
	for i := range v {
		out[i] = []float64{v[i]}
	}
	return out
}

// comparability lists why the two sides may not measure the same thing.
func comparability(base, new []*Input) []string {
	var w []string
	all := append(append([]*Input{}, base...), new...)
	first := all[0]
	for _, in := range all[1:] {
		switch {
		case in.Run != nil && first.Run != nil:
			a, b := first.Run.Config, in.Run.Config
			if a.Profile != b.Profile {
				w = append(w, fmt.Sprintf("different profiles: %s (%s) vs %s (%s)", a.Profile, first.Path, b.Profile, in.Path))
			}
			if len(first.Run.Partitions) != len(in.Run.Partitions) {
				w = append(w, fmt.Sprintf("different partition counts: %d (%s) vs %d (%s): batch size changes queueing and warm-up", len(first.Run.Partitions), first.Path, len(in.Run.Partitions), in.Path))
			}
			if a.Host != b.Host || a.Cores != b.Cores {
				w = append(w, fmt.Sprintf("different machines: %s/%d cores vs %s/%d cores", a.Host, a.Cores, b.Host, b.Cores))
			}
			if a.GPUEnd != b.GPUEnd {
				w = append(w, "different GPU_END definitions: "+a.GPUEnd+" vs "+b.GPUEnd)
			}
			if a.Concurrency != b.Concurrency || a.PartitionWorkers != b.PartitionWorkers || strings.Join(a.Devices, ",") != strings.Join(b.Devices, ",") {
				w = append(w, fmt.Sprintf("different configuration: concurrency %d/%d, partition_workers %d/%d, devices %v/%v", a.Concurrency, b.Concurrency, a.PartitionWorkers, b.PartitionWorkers, a.Devices, b.Devices))
			}
		case in.Format != first.Format:
			w = append(w, fmt.Sprintf("different sources: %s is %s, %s is %s: their GPU_END may not mean the same (c2flow: %s)", first.Path, first.Format, in.Path, in.Format, GPUEndDefinition))
		default:
			if a, b := len(first.Samples("gpu_ms")), len(in.Samples("gpu_ms")); a != b {
				w = append(w, fmt.Sprintf("different partition counts: %d (%s) vs %d (%s)", a, first.Path, b, in.Path))
			}
		}
	}
	return dedupe(w)
}

func dedupe(v []string) []string {
	var out []string
	for _, s := range v {
		if !contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// Print writes the report.
func (rep *Report) Print(w io.Writer) {
	for _, s := range rep.Warnings {
		fmt.Fprintln(w, "WARNING:", s)
	}
	fmt.Fprintf(w, "%-12s %5s %5s %10s %10s %22s %22s %9s %7s  %s\n", "metric", "n", "n'", "base med", "new med", "median diff [95% CI]", "mean diff [95% CI]", "p (MWU)", "cliff", "verdict")
	for _, c := range rep.Metrics {
		fmt.Fprintf(w, "%-12s %5d %5d %10.1f %10.1f %22s %22s %9.3g %7.2f  %s\n", c.Metric, c.Base.Count, c.New.Count, c.Base.Median, c.New.Median,
			ci(c.Median), ci(c.Mean), c.P, c.Cliff, c.Verdict)
	}
	if rep.ProofVerdict != "" {
		fmt.Fprintf(w, "s/proof: base %v new %v: diff %+.3f s (%+.1f%%)", fmtList(rep.ProofBase), fmtList(rep.ProofNew), rep.ProofDiff.Diff, 100*rep.ProofDiff.Rel)
		if rep.ProofDiff.Lo != 0 || rep.ProofDiff.Hi != 0 {
			fmt.Fprintf(w, " [%+.3f, %+.3f]", rep.ProofDiff.Lo, rep.ProofDiff.Hi)
		}
		fmt.Fprintf(w, ": %s\n", rep.ProofVerdict)
	}
}

func ci(d stats.DiffCI) string {
	return fmt.Sprintf("%+.1f%% [%+.1f, %+.1f]", 100*d.Rel, d.Lo, d.Hi)
}

func fmtList(v []float64) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = fmt.Sprintf("%.2f", x)
	}
	return "[" + strings.Join(s, " ") + "]"
}

// WriteBenchstat writes each side's samples in Go benchmark format
// (one line per sample, ns/op), for `benchstat base.txt new.txt`.
func WriteBenchstat(dir string, base, new []*Input) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for name, side := range map[string][]*Input{"base.txt": base, "new.txt": new} {
		var b strings.Builder
		b.WriteString("goos: linux\npkg: c2flow\n")
		for _, in := range side {
			for _, m := range Metrics {
				for _, v := range in.Samples(m) {
					fmt.Fprintf(&b, "BenchmarkC2flow/%s 1 %d ns/op\n", m, int64(math.Round(v*1e6)))
				}
			}
			if in.Run != nil {
				fmt.Fprintf(&b, "BenchmarkC2flow/s_per_proof 1 %d ns/op\n", int64(math.Round(in.Run.SecondsPerProof*1e9)))
			}
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(b.String()), 0o644); err != nil {
			return err
		}
	}
	return nil
}
