package devstack

import (
	"bytes"
	"strings"
	"sync"
	"testing"

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
