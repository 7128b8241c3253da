package devstack

import (
	"bytes"
	"context"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.uber.org/zap"
)

// syncBuffer is a bytes.Buffer safe for the server's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// The server's log goes to Options.Log, not to the terminal, at the level
// asked; at info its stop is logged too.
func TestLogGoesToWriter(t *testing.T) {
	var buf syncBuffer
	s, err := Start(Options{LogLevel: "info", Log: &buf})
	if err != nil {
		t.Fatal(err)
	}
	started := len(buf.String())
	if started == 0 {
		t.Fatal("no server log lines at info in Options.Log")
	}
	s.Stop()
	if len(buf.String()) == started {
		t.Fatal("at info, the server's stop is not logged")
	}
	if s.level.Level() != zap.InfoLevel {
		t.Fatalf("level after Stop %v, want info", s.level.Level())
	}
}

// Below info, Stop silences the server before stopping it: the errors its
// services log about one another's closing ("shard closed") are noise.
func TestStopSilencesShutdownNoise(t *testing.T) {
	var buf syncBuffer
	s, err := Start(Options{LogLevel: "warn", Log: &buf})
	if err != nil {
		t.Fatal(err)
	}
	before := buf.String()
	s.Stop()
	if got := buf.String(); got != before {
		t.Fatalf("logged while stopping: %q", strings.TrimPrefix(got, before))
	}
	if s.level.Level() != zap.FatalLevel {
		t.Fatalf("level while stopping %v, want fatal", s.level.Level())
	}
}

// Only the frontend serves on the server's address: history, matching
// and the system worker, which take no client authentication, listen on
// loopback only. 127.0.0.2 stands for an interface's address (all of
// 127/8 is local on Linux); the server must work there end to end.
func TestInternalServicesOnLoopbackOnly(t *testing.T) {
	if l, err := net.Listen("tcp", "127.0.0.2:0"); err != nil {
		t.Skipf("127.0.0.2 is not local here: %v", err)
	} else {
		l.Close()
	}
	s, err := Start(Options{IP: "127.0.0.2", LogLevel: "warn", Log: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	if !strings.HasPrefix(s.Addr(), "127.0.0.2:") {
		t.Fatalf("frontend at %s, want 127.0.0.2", s.Addr())
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := client.DialContext(ctx, client.Options{HostPort: s.Addr()})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// A workflow round trip goes through history and matching.
	if _, err := c.WorkflowService().DescribeNamespace(ctx, &workflowservice.DescribeNamespaceRequest{Namespace: s.Namespace()}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.DescribeTaskQueue(ctx, "probe", enumspb.TASK_QUEUE_TYPE_WORKFLOW); err != nil {
		t.Fatalf("matching through the frontend: %v", err)
	}
	if len(s.internal) != 3 {
		t.Fatalf("internal addresses %v", s.internal)
	}
	for _, a := range s.internal {
		_, port, _ := net.SplitHostPort(a)
		if !strings.HasPrefix(a, "127.0.0.1:") {
			t.Errorf("internal service at %s, want loopback", a)
		}
		if conn, err := net.DialTimeout("tcp", net.JoinHostPort("127.0.0.2", port), time.Second); err == nil {
			conn.Close()
			t.Errorf("an internal service answers on the server's address at port %s", port)
		}
		conn, err := net.DialTimeout("tcp", a, time.Second)
		if err != nil {
			t.Errorf("internal service %s: %v", a, err)
			continue
		}
		conn.Close()
	}
}
