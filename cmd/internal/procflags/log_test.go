package procflags

import (
	"bytes"
	"strings"
	"testing"
)

// The run's file gets info and above whatever the terminal's level, and
// debug too when asked; in the chosen format.
func TestLoggerToFile(t *testing.T) {
	for _, c := range []struct {
		level, format string
		wantDebug     bool
	}{
		{"warn", "text", false},
		{"error", "json", false},
		{"debug", "text", true},
	} {
		var file bytes.Buffer
		l := Log{Level: c.level, Format: c.format}
		log, err := l.LoggerTo(&file)
		if err != nil {
			t.Fatal(err)
		}
		log.Info("GPU_END", "gpu_ms", 2300)
		log.Debug("DETAIL")
		out := file.String()
		if !strings.Contains(out, "GPU_END") || !strings.Contains(out, "2300") {
			t.Errorf("%s/%s: no info line in the file: %q", c.level, c.format, out)
		}
		if strings.Contains(out, "DETAIL") != c.wantDebug {
			t.Errorf("%s/%s: debug line in the file %v, want %v", c.level, c.format, !c.wantDebug, c.wantDebug)
		}
		if c.format == "json" && !strings.HasPrefix(out, "{") {
			t.Errorf("json format: %q", out)
		}
		if l.Debug() != c.wantDebug {
			t.Errorf("%s: Debug() %v", c.level, l.Debug())
		}
	}
	if _, err := (&Log{Level: "loud", Format: "text"}).LoggerTo(nil); err == nil {
		t.Error("bad level accepted")
	}
	if _, err := (&Log{Level: "info", Format: "xml"}).LoggerTo(&bytes.Buffer{}); err == nil {
		t.Error("bad format accepted")
	}
}
