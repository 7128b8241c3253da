package bench

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/c2flow/c2flow/job"
	"github.com/c2flow/c2flow/storage"
)

func writeJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func manifest(sector uint64, device ...int64) storage.Manifest {
	m := storage.Manifest{Ref: job.Ref{ProverID: "f01000", SectorID: sector, InputDigest: "ab", Proof: "32KiB"}, Partitions: len(device), ProofBytes: 192 * len(device)}
	for i, d := range device {
		m.PartitionMS = append(m.PartitionMS, storage.PartitionTime{Partition: i, SynthMS: 100 + int64(i), QueueMS: 5, DeviceMS: d, FinalizeMS: 700})
	}
	return m
}

// A C2 manifest (what every proved sector leaves in storage) is an input:
// its partition_ms, device_ms read as gpu_ms.
func TestLoadManifest(t *testing.T) {
	p := filepath.Join(t.TempDir(), "1.json")
	writeJSON(t, p, manifest(1, 2300, 2400, 2500, 2600))
	in, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	if in.Format != "manifest" || in.Manifests != 1 || in.Run != nil {
		t.Fatalf("input %+v", in)
	}
	if got := in.Samples("gpu_ms"); !reflect.DeepEqual(got, []float64{2300, 2400, 2500, 2600}) {
		t.Fatalf("gpu_ms %v", got)
	}
	if got := in.Samples("synth_ms"); !reflect.DeepEqual(got, []float64{100, 101, 102, 103}) {
		t.Fatalf("synth_ms %v", got)
	}
	if got := in.Samples("finalize_ms"); len(got) != 4 || got[0] != 700 {
		t.Fatalf("finalize_ms %v", got)
	}
}

// A directory (a bucket's c2/) gives every manifest under it, passing over
// proofs and other JSON files.
func TestLoadManifestDir(t *testing.T) {
	dir := t.TempDir()
	writeJSON(t, filepath.Join(dir, "f01000", "1", "ab.json"), manifest(1, 2300, 2400))
	writeJSON(t, filepath.Join(dir, "f01000", "2", "cd.json"), manifest(2, 2500, 2600))
	writeJSON(t, filepath.Join(dir, "other.json"), map[string]any{"profile": "32KiB"})
	os.WriteFile(filepath.Join(dir, "f01000", "1", "ab.proof"), []byte{1, 2, 3}, 0o644)
	in, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if in.Format != "manifests(2)" || len(in.Samples("gpu_ms")) != 4 {
		t.Fatalf("input %s, gpu_ms %v", in.Format, in.Samples("gpu_ms"))
	}
	if _, err := Load(t.TempDir()); err == nil || !strings.Contains(err.Error(), "no C2 manifests") {
		t.Fatalf("empty directory: %v", err)
	}
}

// JSON that is neither a run.json nor a manifest is named as such, not
// reported as a decoding error; a run.json still loads as one.
func TestLoadNamesWhatItReads(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "x.json")
	for _, v := range []map[string]any{
		{"profile": "32KiB", "partitions": 4},
		{"version": 1, "registered_proof": "32KiB", "sector_id": 7}, // a C1 file
	} {
		writeJSON(t, p, v)
		_, err := Load(p)
		if err == nil || strings.Contains(err.Error(), "cannot unmarshal") || !strings.Contains(err.Error(), "C2 manifest") {
			t.Fatalf("%v: error %v", v, err)
		}
	}
	r := testRun("32KiB", 4, func(i int) int64 { return 2000 })
	rp := filepath.Join(dir, "run.json")
	if err := WriteRun(rp, r); err != nil {
		t.Fatal(err)
	}
	if in, err := Load(rp); err != nil || in.Run == nil || in.Format != "run.json" {
		t.Fatalf("run.json: %+v %v", in, err)
	}
	// A JSON log (one object per line) is a log, not a JSON document.
	lp := filepath.Join(dir, "worker.log")
	os.WriteFile(lp, []byte(`{"msg":"GPU_END","gpu_ms":2100}`+"\n"+`{"msg":"GPU_END","gpu_ms":2200}`+"\n"), 0o644)
	if in, err := Load(lp); err != nil || len(in.Samples("gpu_ms")) != 2 {
		t.Fatalf("JSON log: %+v %v", in, err)
	}
}
