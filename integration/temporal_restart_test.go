package integration

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/c2flow/c2flow/activities"
	"github.com/c2flow/c2flow/batch"
	"github.com/c2flow/c2flow/devstack"
	"github.com/c2flow/c2flow/job"
	"github.com/c2flow/c2flow/scheme/testscheme/porep"
	"github.com/c2flow/c2flow/scheme/testscheme/porep/poreptest"
	"github.com/c2flow/c2flow/storage/s3server"
)

const envTemporal = "C2FLOW_TEST_TEMPORAL"

// runTemporal is the body of a Temporal server process: "dbfile|port".
func runTemporal(v string) int {
	f := strings.SplitN(v, "|", 2)
	port, _ := strconv.Atoi(f[1])
	srv, err := devstack.Start(devstack.Options{DBFile: f[0], Port: port})
	if err != nil {
		fmt.Fprintln(os.Stderr, "temporal:", err)
		return 1
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	<-ctx.Done()
	srv.Stop()
	return 0
}

// temporalProc is an embedded Temporal server in its own process, so a test
// can kill it and start it again over the same SQLite file.
type temporalProc struct {
	t        *testing.T
	db, addr string
	cmd      *exec.Cmd
}

func startTemporalProc(t *testing.T) *temporalProc {
	addr, err := s3server.FreeAddr()
	if err != nil {
		t.Fatal(err)
	}
	p := &temporalProc{t: t, db: filepath.Join(t.TempDir(), "temporal.db"), addr: addr}
	p.start()
	t.Cleanup(p.kill)
	return p
}

func (p *temporalProc) start() {
	p.t.Helper()
	_, port, _ := net.SplitHostPort(p.addr)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envTemporal+"="+p.db+"|"+port)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		p.t.Fatal(err)
	}
	p.cmd = cmd
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := s3server.WaitReady(ctx, p.addr); err != nil {
		p.t.Fatal(err)
	}
	// The frontend accepts connections before it is healthy ("Frontend is
	// not healthy yet" failed a dial made at once): wait for a dial to
	// pass its health check.
	for {
		c, err := client.DialContext(ctx, client.Options{HostPort: p.addr, Logger: quietSDKLogger()})
		if err == nil {
			c.Close()
			return
		}
		if ctx.Err() != nil {
			p.t.Fatalf("temporal at %s never became healthy: %v", p.addr, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func (p *temporalProc) kill() {
	if p.cmd != nil {
		p.cmd.Process.Kill()
		p.cmd.Wait()
		p.cmd = nil
	}
}

// The Temporal server is killed mid-batch and restarted over its SQLite
// file: workflows resume and complete.
func TestTemporalRestartMidBatch(t *testing.T) {
	s := newStack(t, "32KiB") // its S3 and keys; the in-process server goes unused
	tp := startTemporalProc(t)
	s.temporal = nil
	c, err := client.Dial(client.Options{HostPort: tp.addr, Logger: quietSDKLogger()})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	s.client = c
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	w := s.startWorkerAt(tp.addr, "w", activities.Config{PartitionWorkers: 2})
	c1s := []*porep.C1{poreptest.Sector(t, "32KiB", 801).C1(), poreptest.Sector(t, "32KiB", 802).C1()}
	refs := []job.Ref{s.putC1(c1s[0]), s.putC1(c1s[1])}
	if _, err := batch.Submit(ctx, c, refs, batch.Options{BatchID: "restart", Timeouts: faultTimeouts}); err != nil {
		t.Fatal(err)
	}
	w.waitStats(2*time.Minute, func(st activities.Stats) bool { return st.Host.DevicePhases >= 2 })
	tp.kill()
	time.Sleep(3 * time.Second)
	tp.start()
	t.Log("temporal server restarted over its SQLite file")
	var res job.BatchResult
	for {
		res, err = batch.Wait(ctx, c, "restart", time.Second, nil)
		if err == nil || ctx.Err() != nil {
			break
		}
		time.Sleep(time.Second) // the client reconnects
	}
	if err != nil {
		t.Fatal(err)
	}
	s.expectProved(res, c1s)
	w.stop()
}
