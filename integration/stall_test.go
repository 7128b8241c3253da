package integration

import (
	"context"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/c2flow/c2flow/activities"
	"github.com/c2flow/c2flow/batch"
	"github.com/c2flow/c2flow/job"
	"github.com/c2flow/c2flow/scheme/testscheme/porep/poreptest"
)

// A prove worker, a process of its own beside the workflow worker, is
// stopped (SIGSTOP) for 30 s while a device phase holds its device, as a
// long GC pause, a page-fault storm or VM steal stops a host, then
// resumed. With the default timeouts the partition finishes on it: no
// witness lost, nothing synthesized again, no device quarantined.
func TestStalledWorkerKeepsItsWork(t *testing.T) {
	s := newStack(t, "32KiB")
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	s.startWorker("wf", activities.Config{Roles: []string{activities.RoleWorkflow}})
	stopped := filepath.Join(t.TempDir(), "stopped")
	p := s.startWorker("p", activities.Config{Roles: []string{activities.RoleProve}, PartitionWorkers: 1,
		Hooks: &activities.Hooks{StopInDevice: true, PauseFile: stopped}})
	defer p.cmd.Process.Signal(syscall.SIGCONT) // before its kill, if the test fails while it is stopped
	c1 := poreptest.Sector(t, "32KiB", 400).C1()
	if _, err := batch.Submit(ctx, s.client, []job.Ref{s.putC1(c1)}, batch.Options{BatchID: "stall"}); err != nil {
		t.Fatal(err)
	}
	waitFile(t, stopped, 2*time.Minute)
	const stall = 30 * time.Second
	time.Sleep(stall)
	if err := p.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	res, err := batch.Wait(ctx, s.client, "stall", time.Second, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := res.Sectors[0]
	if r.Status != job.StatusProved {
		t.Fatalf("after a %v stall: %s %s", stall, r.Status, r.Error)
	}
	if err := s.verifyStored(c1); err != nil {
		t.Fatal(err)
	}
	for _, pr := range r.Partitions {
		if pr.Syntheses != 1 || pr.HostLosses != 0 || pr.Failures != 0 {
			t.Errorf("partition %d after a %v stall: %d syntheses, %d host losses, %d failures; want its one witness kept",
				pr.Partition, stall, pr.Syntheses, pr.HostLosses, pr.Failures)
		}
	}
	if err := p.stop(); err != nil {
		t.Fatal(err)
	}
	st := p.readStats()
	if st.Host.WitnessLost != 0 || st.Host.Syntheses != len(r.Partitions) || len(st.Quarantined) != 0 {
		t.Errorf("stalled host: %d witnesses lost, %d syntheses for %d partitions, quarantined %v",
			st.Host.WitnessLost, st.Host.Syntheses, len(r.Partitions), st.Quarantined)
	}
	t.Logf("a %v SIGSTOP in a device phase: %d partitions proved, %d syntheses, %d witnesses lost, %d devices quarantined",
		stall, len(r.Partitions), st.Host.Syntheses, st.Host.WitnessLost, len(st.Quarantined))
}
