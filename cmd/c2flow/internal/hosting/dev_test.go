package hosting

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/c2flow/c2flow/bench"
	"github.com/c2flow/c2flow/cmd/c2flow/internal/clitest"
)

// At the default terminal level (warn) the timing lines still reach the
// run's log, and `c2flow bench stats` reads that log.
func TestRunLogKeepsTimingLines(t *testing.T) {
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	var d StackFlags
	if err := d.Add(fs, StackDefaults{Dir: filepath.Join(t.TempDir(), "demo")}); err != nil {
		t.Fatal(err)
	}
	if err := fs.Parse(nil); err != nil {
		t.Fatal(err)
	}
	var logs *RunLogs
	term := clitest.CaptureStderr(t, func() {
		var err error
		if logs, err = d.OpenLogs("demo"); err != nil {
			t.Fatal(err)
		}
		logs.Log.Info("GPU_END", "partition", "1/0", "device", "cpu/0", "gpu_ms", 2300)
		logs.Log.Info("GPU_END", "partition", "1/1", "device", "cpu/0", "gpu_ms", 2500)
		logs.Log.Debug("not for the file at the default level")

		logs.Close()
	})
	if term != "" {
		t.Fatalf("the terminal got info lines at --log-level warn: %q", term)
	}
	if logs.Path != filepath.Join(d.Dir, "demo.log") || logs.serverAt != filepath.Join(d.Dir, "demo-temporal.log") {
		t.Fatalf("logs at %s and %s", logs.Path, logs.serverAt)
	}
	in, err := bench.Load(logs.Path)
	if err != nil {
		t.Fatal(err)
	}
	if v := in.Samples("gpu_ms"); len(v) != 2 || v[0] != 2300 || v[1] != 2500 {
		t.Fatalf("gpu_ms from the run log: %v", v)
	}
	b, _ := os.ReadFile(logs.Path)
	if strings.Contains(string(b), "not for the file") {
		t.Fatal("debug line in the run log at the default level")
	}
}

// With --log-level debug the embedded Temporal server logs to the
// terminal: no NAME-temporal.log.
func TestDebugSendsServerLogsToTerminal(t *testing.T) {
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	var d StackFlags
	if err := d.Add(fs, StackDefaults{Dir: t.TempDir()}); err != nil {
		t.Fatal(err)
	}
	if err := fs.Parse([]string{"--log-level", "debug"}); err != nil {
		t.Fatal(err)
	}
	logs, err := d.OpenLogs("dev")
	if err != nil {
		t.Fatal(err)
	}
	defer logs.Close()
	if logs.server != nil || logs.serverAt != "" {
		t.Fatalf("server log to %s at --log-level debug", logs.serverAt)
	}
}
