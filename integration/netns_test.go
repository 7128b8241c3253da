package integration

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/c2flow/c2flow/activities"
	"github.com/c2flow/c2flow/batch"
	"github.com/c2flow/c2flow/devstack/pgtest"
	"github.com/c2flow/c2flow/job"
	"github.com/c2flow/c2flow/registry"
	"github.com/c2flow/c2flow/scheme/testscheme/porep"
	"github.com/c2flow/c2flow/scheme/testscheme/porep/poreptest"
	"github.com/c2flow/c2flow/storage"
)

// Worker hosts on their own network addresses: one Linux network namespace
// per host, joined to the root namespace by a veth pair. Temporal and S3
// listen in the root namespace on two addresses of their own (added to lo),
// so that a host can be cut off from everything (its link down) or from S3
// only (an unreachable route to the S3 address in its namespace).

// netnsSeq numbers the namespaces and addresses of this test process.
var netnsSeq atomic.Int32

// netLab is the network of one test: the service addresses and the hosts.
type netLab struct {
	t          *testing.T
	temporalIP string
	s3IP       string
}

// netHost is a worker host's namespace.
type netHost struct {
	lab  *netLab
	ns   string // namespace name
	veth string // root-side end of its veth pair
}

// ipCmd runs ip(8) with args and returns its error with its output.
func ipCmd(args ...string) error {
	out, err := exec.Command("ip", args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("ip %s: %w: %s", strings.Join(args, " "), err, bytes.TrimSpace(out))
	}
	return nil
}

// unavailable skips the test with reason, or fails it under CI=true, where
// these tests must run.
func unavailable(t *testing.T, reason string) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf("network namespace tests cannot run (CI=true, so not skipped): %s", reason)
	}
	t.Skipf("network namespace tests need root and ip netns: %s", reason)
}

// newNetLab adds the service addresses, or skips (fails under CI) when
// network namespaces are not available.
func newNetLab(t *testing.T) *netLab {
	t.Helper()
	if os.Geteuid() != 0 {
		unavailable(t, "not running as root")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		unavailable(t, "ip (iproute2) not found")
	}
	// Probe: create and delete a namespace.
	probe := fmt.Sprintf("c2f-%d-probe", os.Getpid())
	if err := ipCmd("netns", "add", probe); err != nil {
		unavailable(t, err.Error())
	}
	if err := ipCmd("netns", "del", probe); err != nil {
		t.Fatal(err)
	}
	n := netnsSeq.Add(1)
	// Addresses unique per process and test: 10.201.X.Y for services.
	k := (os.Getpid()*8 + int(n)) % 16384
	base := fmt.Sprintf("10.201.%d.%d", k/64, (k%64)*4)
	ip := net.ParseIP(base).To4()
	lab := &netLab{t: t}
	lab.temporalIP = net.IPv4(ip[0], ip[1], ip[2], ip[3]+1).String()
	lab.s3IP = net.IPv4(ip[0], ip[1], ip[2], ip[3]+2).String()
	for _, a := range []string{lab.temporalIP, lab.s3IP} {
		if err := ipCmd("addr", "add", a+"/32", "dev", "lo"); err != nil {
			unavailable(t, err.Error())
		}
		t.Cleanup(func() { ipCmd("addr", "del", a+"/32", "dev", "lo") })
	}
	return lab
}

// host creates a namespace with a veth pair: 10.200.X.1 on the root side,
// 10.200.X.2 inside, its default route through the root side.
func (l *netLab) host() *netHost {
	t := l.t
	t.Helper()
	n := netnsSeq.Add(1)
	k := (os.Getpid()*8 + int(n)) % 16384
	h := &netHost{lab: l, ns: fmt.Sprintf("c2f-%d-%d", os.Getpid(), n), veth: fmt.Sprintf("c2f%dv%d", os.Getpid()%1000000, n)}
	peer := h.veth + "p"
	ip := net.ParseIP(fmt.Sprintf("10.200.%d.%d", k/64, (k%64)*4)).To4()
	root := net.IPv4(ip[0], ip[1], ip[2], ip[3]+1).String()
	inside := net.IPv4(ip[0], ip[1], ip[2], ip[3]+2).String()
	if err := ipCmd("netns", "add", h.ns); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ipCmd("link", "del", h.veth) // gone with the namespace already, usually
		if err := ipCmd("netns", "del", h.ns); err != nil {
			t.Errorf("cleanup: %v", err)
		}
	})
	for _, args := range [][]string{
		{"link", "add", h.veth, "type", "veth", "peer", "name", peer},
		{"link", "set", peer, "netns", h.ns},
		{"addr", "add", root + "/30", "dev", h.veth},
		{"link", "set", h.veth, "up"},
		{"-n", h.ns, "addr", "add", inside + "/30", "dev", peer},
		{"-n", h.ns, "link", "set", peer, "up"},
		{"-n", h.ns, "link", "set", "lo", "up"},
		{"-n", h.ns, "route", "add", "default", "via", root},
	} {
		if err := ipCmd(args...); err != nil {
			t.Fatal(err)
		}
	}
	return h
}

// cut takes the host's link down (both ends lose carrier); reconnect
// brings it back.
func (h *netHost) cut() {
	h.lab.t.Helper()
	if err := ipCmd("link", "set", h.veth, "down"); err != nil {
		h.lab.t.Fatal(err)
	}
}

func (h *netHost) reconnect() {
	h.lab.t.Helper()
	if err := ipCmd("link", "set", h.veth, "up"); err != nil {
		h.lab.t.Fatal(err)
	}
}

// cutS3 makes the S3 address unreachable from the host (Temporal stays
// reachable); restoreS3 undoes it.
func (h *netHost) cutS3() {
	h.lab.t.Helper()
	if err := ipCmd("-n", h.ns, "route", "add", "unreachable", h.lab.s3IP+"/32"); err != nil {
		h.lab.t.Fatal(err)
	}
}

func (h *netHost) restoreS3() {
	h.lab.t.Helper()
	if err := ipCmd("-n", h.ns, "route", "del", "unreachable", h.lab.s3IP+"/32"); err != nil {
		h.lab.t.Fatal(err)
	}
}

// newNetStack is the production shape with hosts on their own addresses:
// Temporal on PostgreSQL with four history shards and S3, listening on
// the lab's service addresses.
func newNetStack(t *testing.T, profile string) (*stack, *netLab) {
	t.Helper()
	pg := pgtest.URL(t, pgtest.Base(t))
	lab := newNetLab(t)
	return newStackAt(t, profile, stackAt{TemporalIP: lab.temporalIP, S3IP: lab.s3IP, Postgres: pg}), lab
}

// startWorkerIn starts a worker process inside h's namespace with S3
// configuration s3c; its output goes to stderr and to out, if set.
func (s *stack) startWorkerIn(h *netHost, id string, hc activities.Config, s3c storage.Config, out io.Writer) *workerProc {
	s.t.Helper()
	w := io.Writer(os.Stderr)
	if out != nil {
		w = io.MultiWriter(os.Stderr, out)
	}
	return s.startWorkerCmd(s.temporal.Addr(), id, hc, registry.Options{}, "", s3c, []string{"ip", "netns", "exec", h.ns}, w)
}

// outputFile is a file in the test's temporary directory for a worker's
// output.
func outputFile(t *testing.T, name string) *os.File {
	t.Helper()
	f, err := os.Create(filepath.Join(t.TempDir(), name))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// waitOutput waits until the file out contains want.
func waitOutput(t *testing.T, out *os.File, want string, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if b, err := os.ReadFile(out.Name()); err == nil && bytes.Contains(b, []byte(want)) {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("worker output did not mention %q in %v", want, timeout)
}

// A prover host loses its network (link down) during its device phase for
// longer than the heartbeat timeout, then comes back: the partition is
// redone on a second host in its own namespace, the C2 is stored once, by
// that host, and verifies; the cut-off host stores nothing.
func TestNetnsHostCutOffInDevicePhase(t *testing.T) {
	s, lab := newNetStack(t, "2KiB")
	ha, hb := lab.host(), lab.host()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	pauseFile := filepath.Join(t.TempDir(), "paused")
	// Paused in its device phase, host a keeps heartbeating: without the
	// cut, the partition would never move to host b.
	aOut := outputFile(t, "a.log")
	a := s.startWorkerIn(ha, "a", activities.Config{PartitionWorkers: 1, Hooks: &activities.Hooks{PauseAt: "device", PauseFile: pauseFile}}, s.s3.Config("c2flow"), aOut)
	c1 := poreptest.Sector(t, "2KiB", 801).C1()
	ref := s.putC1(c1)
	if _, err := batch.Submit(ctx, s.client, []job.Ref{ref}, batch.Options{BatchID: "netns-cut", Timeouts: faultTimeouts}); err != nil {
		t.Fatal(err)
	}
	waitFile(t, pauseFile, time.Minute)
	ha.cut()
	b := s.startWorkerIn(hb, "b", activities.Config{PartitionWorkers: 1}, s.s3.Config("c2flow"), nil)
	res, err := batch.Wait(ctx, s.client, "netns-cut", time.Second, nil)
	if err != nil {
		t.Fatal(err)
	}
	ha.reconnect()
	r := res.Sectors[0]
	if r.Status != job.StatusProved {
		t.Fatalf("after a link cut in the device phase: %s %s", r.Status, r.Error)
	}
	if p := r.Partitions[0]; p.HostLosses != 1 || p.Failures != 0 || p.Host != "b" || p.Syntheses != 2 {
		t.Errorf("partition: %d host losses, %d failures, %d syntheses, proved on %q; want 1, 0, 2, b", p.HostLosses, p.Failures, p.Syntheses, p.Host)
	}
	if err := s.verifyStored(c1); err != nil {
		t.Fatal(err)
	}
	keys, err := s.store.List(ctx, "c2/")
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{storage.ManifestKey(ref), storage.C2Key(ref)}; len(keys) != 2 || !sameSet(keys, want) {
		t.Errorf("objects under c2/: %v, want %v", keys, want)
	}
	// Cut off, host a's heartbeats gave up (none got through for the
	// heartbeat timeout) and it canceled the device phase itself: its result never reached Temporal, which had timed the
	// activity out and handed the partition to b.
	waitOutput(t, aOut, "DevicePhase canceled on host a", 10*time.Second)
	if err := b.stop(); err != nil {
		t.Fatal(err)
	}
	// Host a writes its stats every second; kill it rather than wait for a
	// graceful stop, which waits on its gRPC connection's reconnect backoff.
	a.kill()
	sa, sb := a.readStats(), b.readStats()
	if sa.Host.Stored != 0 || sa.Host.Finalized != 0 || sb.Host.Stored != 1 {
		t.Errorf("stored: host a %d (finalized %d), host b %d; want 0 (0), 1", sa.Host.Stored, sa.Host.Finalized, sb.Host.Stored)
	}
	t.Logf("link cut in the device phase: partition redone on b (host losses %d), one C2 stored; host a stats %+v", r.Partitions[0].HostLosses, sa.Host)
}

func sameSet(a, b []string) bool {
	m := map[string]int{}
	for _, k := range a {
		m[k]++
	}
	for _, k := range b {
		m[k]--
	}
	for _, v := range m {
		if v != 0 {
			return false
		}
	}
	return true
}

// A host cut off from S3 only (an unreachable route to the S3 address in
// its namespace) while Temporal stays reachable: its activities fail on
// S3, the batch completes on a second host, with every C2 verified, and
// once S3 is reachable again the host proves a sector on its own.
func TestNetnsHostCutOffFromS3(t *testing.T) {
	s, lab := newNetStack(t, "2KiB")
	ha, hb := lab.host(), lab.host()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// Host a gives up an S3 request after 3 attempts instead of 20 (~20 s),
	// so that the activities it takes fail in seconds and go elsewhere.
	aS3 := s.s3.Config("c2flow")
	aS3.MaxAttempts = 3
	aOut := outputFile(t, "a.log")
	a := s.startWorkerIn(ha, "a", activities.Config{PartitionWorkers: 1}, aS3, aOut)
	b := s.startWorkerIn(hb, "b", activities.Config{PartitionWorkers: 1}, s.s3.Config("c2flow"), nil)
	// Both running: their start-up reads from S3 are done.
	waitFile(t, a.stats, time.Minute)
	waitFile(t, b.stats, time.Minute)
	ha.cutS3()
	c1s := []*porep.C1{poreptest.Sector(t, "2KiB", 811).C1(), poreptest.Sector(t, "2KiB", 812).C1()}
	refs := []job.Ref{s.putC1(c1s[0]), s.putC1(c1s[1])}
	if _, err := batch.Submit(ctx, s.client, refs, batch.Options{BatchID: "netns-s3"}); err != nil {
		t.Fatal(err)
	}
	// Host a takes work from Temporal and fails reaching S3.
	waitOutput(t, aOut, "dial tcp "+s.s3.Addr, time.Minute)
	res, err := batch.Wait(ctx, s.client, "netns-s3", time.Second, nil)
	if err != nil {
		t.Fatal(err)
	}
	s.expectProved(res, c1s)
	if err := b.stop(); err != nil {
		t.Fatal(err)
	}
	if sa, sb := a.readStats(), b.readStats(); sa.Host.Stored != 0 || sb.Host.Stored != len(c1s) {
		t.Errorf("stored: host a %d, host b %d; want 0, %d", sa.Host.Stored, sb.Host.Stored, len(c1s))
	}
	// S3 back, host a alone proves the next sector: the cut left it working.
	ha.restoreS3()
	after := poreptest.Sector(t, "2KiB", 813).C1()
	res = s.run(ctx, batch.Options{BatchID: "netns-s3-after"}, []job.Ref{s.putC1(after)})
	s.expectProved(res, []*porep.C1{after})
	if err := a.stop(); err != nil {
		t.Fatal(err)
	}
	sa, sb := a.readStats(), b.readStats()
	if sa.Host.Stored != 1 {
		t.Errorf("host a stored %d C2s after S3 came back, want 1", sa.Host.Stored)
	}
	t.Logf("host a cut off from S3: batch proved by b; host a %+v, host b %+v", sa.Host, sb.Host)
}
