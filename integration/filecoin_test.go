package integration

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/c2flow/c2flow/activities"
	"github.com/c2flow/c2flow/batch"
	"github.com/c2flow/c2flow/filecoin/c1"
	"github.com/c2flow/c2flow/filecoin/fctest"
	"github.com/c2flow/c2flow/filecoin/proofs"
	"github.com/c2flow/c2flow/filecoin/seal"
	"github.com/c2flow/c2flow/filecoin/snark"
	"github.com/c2flow/c2flow/job"
	"github.com/c2flow/c2flow/registry"
	"github.com/c2flow/c2flow/scheme/testscheme/porep"
	"github.com/c2flow/c2flow/scheme/testscheme/porep/poreptest"
)

const filecoin2KiB = "StackedDrg2KiBV1_1"

// filecoinDevParams returns a directory holding a DEVELOPMENT setup of the
// 2KiB Filecoin circuit in Filecoin's format, from the machine's setup
// cache (made there on first use: about a minute on two cores).
func filecoinDevParams(t *testing.T) string {
	t.Helper()
	cache := fctest.Setups()
	dir := fctest.DevParams()
	if _, err := snark.DevSetup(context.Background(), filecoin2KiB, dir, cache, nil); err != nil {
		t.Fatal(err)
	}
	return dir
}

var filecoinProver = [32]byte{0x0f, 0xc2}

// putFilecoinC1 seals a 2KiB Filecoin sector (c2flow's test sealer, the
// C1 exactly as filecoin-ffi's serde writes it) and stores it under its
// identity; corrupt, if set, changes the C1 before it is encoded.
func (s *stack) putFilecoinC1(id uint64, corrupt func(*c1.SealCommitPhase1Output)) (job.Ref, []byte) {
	s.t.Helper()
	sealed, err := seal.Seal(context.Background(), seal.TestParams(proofs.StackedDrg2KiBV1_1, filecoinProver, id))
	if err != nil {
		s.t.Fatal(err)
	}
	if corrupt != nil {
		corrupt(sealed.C1)
	}
	raw, err := c1.Marshal(sealed.C1)
	if err != nil {
		s.t.Fatal(err)
	}
	ref := job.NewRef(filecoinProver, id, raw)
	ref.Proof = filecoin2KiB
	if err := s.store.PutC1(context.Background(), ref, raw); err != nil {
		s.t.Fatal(err)
	}
	return ref, raw
}

// verifyFilecoinStored checks a stored Filecoin C2 as a user's copy would
// be checked: the bytes read back through the manifest are exactly one
// 192-byte proof per partition, and every proof verifies under the .vk
// file, by a scheme instance of its own (not the worker's).
func (s *stack) verifyFilecoinStored(dir string, ref job.Ref, raw []byte) {
	s.t.Helper()
	_, proof, err := s.store.GetC2(context.Background(), ref)
	if err != nil {
		s.t.Fatalf("%s: %v", ref, err)
	}
	info, _ := proofs.ByName(filecoin2KiB)
	if len(proof) != 192*info.Partitions {
		s.t.Fatalf("%s: stored C2 has %d bytes, want %d (192 per partition)", ref, len(proof), 192*info.Partitions)
	}
	fc := snark.New(snark.Params{Dir: dir, ShapeDir: filepath.Join(s.t.TempDir(), "shapes")}, nil)
	sec, err := fc.Decode(raw, ref)
	if err != nil {
		s.t.Fatal(err)
	}
	circ, err := fc.Circuit(context.Background(), filecoin2KiB)
	if err != nil {
		s.t.Fatal(err)
	}
	if err := circ.VerifyC2(sec, proof); err != nil {
		s.t.Fatalf("%s: stored C2 does not verify under %s: %v", ref, dir, err)
	}
	flipped := append([]byte(nil), proof...)
	flipped[100] ^= 1
	if circ.VerifyC2(sec, flipped) == nil {
		s.t.Fatalf("%s: a flipped byte verifies", ref)
	}
}

// One batch mixing c2flow's test scheme and Filecoin's 2KiB StackedDrg,
// with one corrupt Filecoin C1: the corrupt sector fails alone with its
// named BadC1, every other sector is proved, and each stored Filecoin C2
// is Filecoin's 192-byte proofs verifying under the .vk. The workers
// download the parameters from S3 (params/filecoin/), as a fleet's do.
func TestFilecoinAndTestSchemeInOneBatch(t *testing.T) {
	dir := filecoinDevParams(t)
	s := newStack(t, "2KiB")
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	s.publishFilecoinDevParams(ctx, dir)
	// Split roles, as a fleet runs: the orchestrator stores and verifies
	// the C2s with the .vk alone (it downloads no .params), the prover
	// proves.
	orchDir := t.TempDir()
	o := s.startWorkerKeys("o", activities.Config{Roles: []string{activities.RoleWorkflow}}, registry.Options{FilecoinParams: orchDir})
	w := s.startWorkerKeys("w", activities.Config{Roles: []string{activities.RoleProve}, PartitionWorkers: 2}, registry.Options{FilecoinParams: t.TempDir()})

	goodRef, goodRaw := s.putFilecoinC1(41, nil)
	badRef, _ := s.putFilecoinC1(42, func(c *c1.SealCommitPhase1Output) {
		c.CommR[5] ^= 1 // still a field element: the JSON decodes, the proofs do not match it
	})
	tests := []*porep.C1{poreptest.Sector(t, "2KiB", 43).C1(), poreptest.Sector(t, "2KiB", 44).C1()}
	refs := []job.Ref{goodRef, badRef, s.putC1(tests[0]), s.putC1(tests[1])}
	res := s.run(ctx, batch.Options{BatchID: "mixed", Timeouts: faultTimeouts}, refs)
	by := map[uint64]job.SectorResult{}
	for _, r := range res.Sectors {
		by[r.SectorID] = r
	}
	if r := by[42]; r.Status != job.StatusFailed || !strings.Contains(r.Error, "BadC1") || !strings.Contains(r.Error, "comm_r") {
		t.Errorf("corrupt Filecoin C1: %s %q, want BadC1 naming comm_r", r.Status, r.Error)
	}
	for _, id := range []uint64{41, 43, 44} {
		if r := by[id]; r.Status != job.StatusProved {
			t.Fatalf("sector %d: %s %s", id, r.Status, r.Error)
		}
	}
	s.verifyFilecoinStored(dir, goodRef, goodRaw)
	for _, c := range tests {
		if err := s.verifyStored(c); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []*workerProc{w, o} {
		if err := p.stop(); err != nil {
			t.Fatal(err)
		}
	}
	st, so := w.readStats(), o.readStats()
	t.Logf("mixed batch: prover %+v, orchestrator %+v", st.Host, so.Host)
	if bad := st.Host.BadC1 + so.Host.BadC1; bad != 1 || st.Host.Invalid != 0 {
		t.Errorf("hosts counted %d bad C1s, %d invalid proofs; want 1 and 0", bad, st.Host.Invalid)
	}
	if so.Host.Stored != 3 {
		t.Errorf("the orchestrator stored %d C2s, want 3", so.Host.Stored)
	}
	var vks int
	ents, _ := os.ReadDir(orchDir)
	for _, e := range ents {
		switch {
		case strings.HasSuffix(e.Name(), ".params"):
			t.Errorf("the orchestrator downloaded %s: it verifies with the .vk alone", e.Name())
		case strings.HasSuffix(e.Name(), ".vk"):
			vks++
		}
	}
	if vks != 1 {
		t.Errorf("the orchestrator's Filecoin parameter directory holds %d .vk files, want 1", vks)
	}
}

// kill -9 of a worker during a Filecoin partition's device phase: the
// partition is synthesized again on a second worker and the sector's
// Filecoin C2 is stored and verifies; nothing else is redone.
func TestKillWorkerInFilecoinDevicePhase(t *testing.T) {
	dir := filecoinDevParams(t)
	s := newStack(t, "2KiB")
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	pauseFile := filepath.Join(t.TempDir(), "paused")
	a := s.startWorkerKeys("a", activities.Config{PartitionWorkers: 1, Hooks: &activities.Hooks{PauseAt: "device", PauseFile: pauseFile}}, registry.Options{FilecoinParams: dir})
	ref, raw := s.putFilecoinC1(51, nil)
	if _, err := batch.Submit(ctx, s.client, []job.Ref{ref}, batch.Options{BatchID: "kill-filecoin", Timeouts: faultTimeouts}); err != nil {
		t.Fatal(err)
	}
	waitFile(t, pauseFile, 5*time.Minute)
	b := s.startWorkerKeys("b", activities.Config{PartitionWorkers: 1}, registry.Options{FilecoinParams: dir})
	a.kill()
	res, err := batch.Wait(ctx, s.client, "kill-filecoin", time.Second, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := res.Sectors[0]
	if r.Status != job.StatusProved {
		t.Fatalf("after kill -9 in a Filecoin device phase: %s %s", r.Status, r.Error)
	}
	s.verifyFilecoinStored(dir, ref, raw)
	if n := redone(r); n != 1 {
		t.Errorf("%d partitions synthesized again, want the 1 the dead host held", n)
	}
	if p := r.Partitions[0]; p.HostLosses != 1 || p.Failures != 0 || p.Host != "b" {
		t.Errorf("partition: host losses %d, failures %d, proved on %q; want 1, 0, b", p.HostLosses, p.Failures, p.Host)
	}
	if err := b.stop(); err != nil {
		t.Fatal(err)
	}
}

// The split fleet with Filecoin: a synthesis-only host spills each
// packed witness through S3, a device-only host loads, proves and
// finalizes it; a Filecoin 2KiB sector and a test-scheme sector in one
// batch both prove, every C2 verifies, and every spill and load logs its
// size (spill_bytes=) on its partition's line. The synthesis host never
// downloads a Filecoin .params: it synthesizes by the circuit's counts.
func TestFilecoinThroughSpill(t *testing.T) {
	dir := filecoinDevParams(t)
	s := newStack(t, "2KiB")
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	s.publishFilecoinDevParams(ctx, dir)
	// Read once the workers have exited (their output copied whole).
	var synthLog, deviceLog bytes.Buffer
	synthParams := t.TempDir()
	ws := s.startWorkerCmd(s.temporal.Addr(), "synth", activities.Config{Roles: []string{activities.RoleWorkflow, activities.RoleSynth}, PartitionWorkers: 2, Spill: "s3"},
		registry.Options{FilecoinParams: synthParams}, "", s.s3.Config("c2flow"), nil, &synthLog)
	wd := s.startWorkerCmd(s.temporal.Addr(), "device", activities.Config{Roles: []string{activities.RoleDevice}, Spill: "s3"},
		registry.Options{FilecoinParams: t.TempDir()}, "", s.s3.Config("c2flow"), nil, &deviceLog)
	fcRef, fcRaw := s.putFilecoinC1(51, nil)
	ts := poreptest.Sector(t, "2KiB", 52).C1()
	res := s.run(ctx, batch.Options{BatchID: "split-filecoin", Timeouts: faultTimeouts}, []job.Ref{fcRef, s.putC1(ts)})
	for _, r := range res.Sectors {
		if r.Status != job.StatusProved {
			t.Fatalf("sector %d: %s %s", r.SectorID, r.Status, r.Error)
		}
		for _, p := range r.Partitions {
			if p.Host != "synth" || p.DeviceHost != "device" {
				t.Errorf("sector %d partition %d: synthesized on %q, proved on %q", r.SectorID, p.Partition, p.Host, p.DeviceHost)
			}
		}
	}
	s.verifyFilecoinStored(dir, fcRef, fcRaw)
	if err := s.verifyStored(ts); err != nil {
		t.Fatal(err)
	}
	wd.stop()
	ws.stop()
	for name, l := range map[string]*bytes.Buffer{"SPILL_END": &synthLog, "SPILL_LOAD": &deviceLog} {
		n := 0
		for _, line := range strings.Split(l.String(), "\n") {
			if strings.Contains(line, "msg="+name) {
				if !strings.Contains(line, " spill_bytes=") || strings.Contains(line, " spill_bytes=0 ") {
					t.Errorf("%s without its size: %s", name, line)
				}
				n++
			}
		}
		if n < 2 {
			t.Errorf("%d %s lines, want one per partition (2)", n, name)
		}
	}
	t.Logf("synth host %+v; device host %+v", ws.readStats().Host, wd.readStats().Host)
	ents, _ := os.ReadDir(synthParams)
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".params") {
			t.Errorf("the synthesis host downloaded %s: it synthesizes without proving keys", e.Name())
		}
	}
}
