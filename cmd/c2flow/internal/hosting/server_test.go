package hosting

import (
	"bytes"
	"io"
	"path/filepath"
	"strings"
	"testing"
)

// The server's terminal gets its log lines without zap's stack traces;
// the log file (by default in the user's cache directory) gets them all.
func TestServerLogKeepsTracesOffTheTerminal(t *testing.T) {
	var term, file bytes.Buffer
	w := io.MultiWriter(&noTraces{w: &term}, &file)
	log := "2026-12-03T20:00:00.000Z\tERROR\tshard status unknown\t{\"shard-id\": 1}\n" +
		"go.temporal.io/server/service/history/shard.(*ContextImpl).transition\n" +
		"\t/go/pkg/mod/go.temporal.io/server@v1.32.1/service/history/shard/context_impl.go:1422\n" +
		"2026-12-03T20:00:01.000Z\tINFO\tstarted\n"
	for _, part := range []string{log[:30], log[30:100], log[100:]} { // lines split across writes
		if _, err := w.Write([]byte(part)); err != nil {
			t.Fatal(err)
		}
	}
	if got := term.String(); strings.Contains(got, "go.temporal.io/server/") || strings.Count(got, "\n") != 2 || !strings.Contains(got, "shard status unknown") {
		t.Errorf("terminal:\n%s", got)
	}
	if file.String() != log {
		t.Errorf("log file lost lines:\n%s", file.String())
	}
	if d := defaultServerLog(); !strings.HasSuffix(d, filepath.Join("c2flow", "server.log")) && d != "none" {
		t.Errorf("default log file %q", d)
	}
}
