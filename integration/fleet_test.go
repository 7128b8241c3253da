package integration

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/c2flow/c2flow/activities"
	"github.com/c2flow/c2flow/batch"
	"github.com/c2flow/c2flow/job"
	"github.com/c2flow/c2flow/scheme/testscheme/porep"
	"github.com/c2flow/c2flow/scheme/testscheme/porep/poreptest"
)

// A worker added to a running batch takes work without a restart; a worker
// removed gracefully (SIGTERM) drains: the partitions it synthesized finish
// on it, nothing is redone, nothing is lost. The drain is the worker's
// default, 2 minutes: a loaded machine (loaded run 6) took 58 s to finish
// two 32KiB partitions a 50-second drain had to give up on.
func TestScaleOutAndGracefulRemoval(t *testing.T) {
	s := newStack(t, "32KiB")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	w1 := s.startWorker("w1", activities.Config{PartitionWorkers: 2})
	c1s := []*porep.C1{poreptest.Sector(t, "32KiB", 1001).C1(), poreptest.Sector(t, "32KiB", 1002).C1()}
	refs := []job.Ref{s.putC1(c1s[0]), s.putC1(c1s[1])}
	if _, err := batch.Submit(ctx, s.client, refs, batch.Options{BatchID: "fleet", Timeouts: faultTimeouts}); err != nil {
		t.Fatal(err)
	}
	w1.waitStats(2*time.Minute, func(st activities.Stats) bool { return st.Host.Syntheses >= 2 })
	w2 := s.startWorker("w2", activities.Config{PartitionWorkers: 2})
	w2.waitStats(2*time.Minute, func(st activities.Stats) bool { return st.Host.Syntheses >= 1 })
	if err := w1.stop(); err != nil { // graceful: SIGTERM, drain, exit
		t.Fatal(err)
	}
	st1 := w1.readStats()
	res, err := batch.Wait(ctx, s.client, "fleet", time.Second, nil)
	if err != nil {
		t.Fatal(err)
	}
	s.expectProved(res, c1s)
	n := 0
	for _, r := range res.Sectors {
		n += redone(r)
	}
	w2.stop()
	st2 := w2.readStats()
	t.Logf("w1 (removed): %d syntheses, %d finalized; w2 (added): %d syntheses; redone %d",
		st1.Host.Syntheses, st1.Host.Finalized, st2.Host.Syntheses, n)
	if n != 0 {
		t.Errorf("%d partitions redone after a graceful removal", n)
	}
	if st1.Host.Finalized != st1.Host.Syntheses || st1.Budget.InFlight != 0 {
		t.Errorf("w1 left work behind: %d syntheses, %d finalized, %d in flight", st1.Host.Syntheses, st1.Host.Finalized, st1.Budget.InFlight)
	}
	if st2.Host.Syntheses == 0 || st1.Host.Syntheses+st2.Host.Syntheses != 8 {
		t.Errorf("syntheses w1 %d + w2 %d, want 8 with both working", st1.Host.Syntheses, st2.Host.Syntheses)
	}
}

// Split roles: a synthesis-only host spills its witnesses (here through
// S3), a device-only host loads, proves and finalizes them. The synthesis
// host's budget counts each spilled witness until the device host has it,
// and no spill is left behind.
func TestSplitRolesThroughSpill(t *testing.T) {
	s := newStack(t, "32KiB")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	ws := s.startWorker("synth1", activities.Config{Roles: []string{activities.RoleWorkflow, activities.RoleSynth}, PartitionWorkers: 2, Spill: "s3"})
	wd := s.startWorker("gpu1", activities.Config{Roles: []string{activities.RoleDevice}, Spill: "s3"})
	c1s := []*porep.C1{poreptest.Sector(t, "32KiB", 1101).C1()}
	res := s.run(ctx, batch.Options{BatchID: "split", Timeouts: faultTimeouts}, []job.Ref{s.putC1(c1s[0])})
	s.expectProved(res, c1s)
	for _, p := range res.Sectors[0].Partitions {
		if p.Host != "synth1" || p.DeviceHost != "gpu1" {
			t.Errorf("partition %d: synthesized on %q, proved on %q", p.Partition, p.Host, p.DeviceHost)
		}
	}
	// Temporal shows who polls what, with roles, devices and budget.
	ps, err := batch.Fleet(ctx, s.client)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]string{}
	for _, p := range ps {
		seen[p.Queue] += p.Identity + "\n"
	}
	if !strings.Contains(seen[job.QueueSynth], "synth1 host=") || !strings.Contains(seen[job.QueueSynth], "roles=workflow,synth") ||
		!strings.Contains(seen[job.QueueDevice], "gpu1 host=") || !strings.Contains(seen[job.QueueDevice], "roles=device devices=cpu/0 budget=") ||
		strings.Contains(seen[job.QueueSynth], "gpu1") {
		t.Errorf("fleet as Temporal sees it: %v", seen)
	}
	// Each host publishes what it holds for c2flow fleet: the device
	// host a device phase's expansion per lane (two on one device) and
	// its circuit's keys and system, once it has loaded them.
	var rep activities.Stats
	deadline := time.Now().Add(3 * activities.PublishEvery)
	for {
		b, err := s.store.Get(ctx, activities.HostReportKey("gpu1"))
		if err == nil {
			err = json.Unmarshal(b, &rep)
		}
		if err == nil && rep.Budget.ExpansionBytes > 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(time.Second)
	}
	if b := rep.Budget; rep.ID != "gpu1" || b.Lanes != 2 || b.ExpansionBytes <= 0 || b.KeyBytes <= 0 || b.SystemBytes <= 0 {
		t.Errorf("the device host's published report: %+v", rep)
	}
	ss := ws.waitStats(time.Minute, func(st activities.Stats) bool { return st.Budget.InFlight == 0 })
	wd.stop()
	ws.stop()
	sd := wd.readStats()
	t.Logf("synth host: %+v, budget %+v; device host: %+v", ss.Host, ss.Budget, sd.Host)
	// One spill per synthesis: 4, plus any the result says were redone (a
	// loaded machine may lose a device phase to a heartbeat timeout).
	syntheses := 0
	for _, p := range res.Sectors[0].Partitions {
		syntheses += p.Syntheses
	}
	if ss.Host.Spilled != syntheses || ss.Host.DevicePhases != 0 || ss.Budget.Peak > 2 {
		t.Errorf("synth host: spilled %d (%d syntheses), device phases %d, peak %d of budget 2", ss.Host.Spilled, syntheses, ss.Host.DevicePhases, ss.Budget.Peak)
	}
	if sd.Host.Loaded != syntheses || sd.Host.DevicePhases < 4 || sd.Host.Finalized != 4 || sd.Host.Syntheses != 0 {
		t.Errorf("device host: loaded %d, device phases %d, finalized %d, syntheses %d", sd.Host.Loaded, sd.Host.DevicePhases, sd.Host.Finalized, sd.Host.Syntheses)
	}
	left, err := s.store.List(ctx, "spill/")
	if err != nil || len(left) != 0 {
		t.Errorf("spills left behind: %v (%v)", left, err)
	}
}

// A spill damaged on its way (a flipped byte, a torn end) is refused by
// its checksum, and another partition's spill, whole and checksummed, by
// its name: the device host proves none of them, the partition is
// synthesized again, and the sector's C2 verifies.
func TestDamagedSpillsRefused(t *testing.T) {
	s := newStack(t, "32KiB")
	spillDir := t.TempDir()
	wd := s.startWorker("gpu1", activities.Config{Roles: []string{activities.RoleDevice}, Spill: "dir:" + spillDir})
	lost := 0
	for i, damage := range []string{"flip", "truncate", "swap"} {
		t.Run(damage, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			id := "synth-" + damage
			ws := s.startWorker(id, activities.Config{Roles: []string{activities.RoleWorkflow, activities.RoleSynth}, PartitionWorkers: 2,
				Spill: "dir:" + spillDir, Hooks: &activities.Hooks{DamageSpill: damage}})
			defer ws.stop()
			c1s := []*porep.C1{poreptest.Sector(t, "32KiB", uint64(1201+i)).C1()}
			res := s.run(ctx, batch.Options{BatchID: "damaged-" + damage, Timeouts: faultTimeouts}, []job.Ref{s.putC1(c1s[0])})
			s.expectProved(res, c1s)
			n := redone(res.Sectors[0])
			st := wd.waitStats(time.Minute, func(st activities.Stats) bool { return st.Host.WitnessLost > lost })
			t.Logf("%s: device host refused %d spills in all, %d partitions synthesized again", damage, st.Host.WitnessLost, n)
			if st.Host.WitnessLost <= lost || n < 1 {
				t.Errorf("%s: the device host refused %d spills (%d before), %d partitions synthesized again", damage, st.Host.WitnessLost, lost, n)
			}
			lost = st.Host.WitnessLost
		})
	}
}
