package deploy

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// The bare-metal units (deploy/systemd) pass `systemd-analyze verify` with
// nothing said (it only warns about an unknown key or a bad value), run as
// a dedicated user under hardening and a memory cap, and every flag their
// ExecStart gives is one the binary defines (each command line, with the
// example environment's values, parsed up to a final -h).
func TestSystemdUnits(t *testing.T) {
	analyze, err := exec.LookPath("systemd-analyze")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("systemd-analyze is not installed (Debian: apt-get install -y systemd)")
		}
		t.Skip("systemd-analyze is not installed")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	bin := t.TempDir()
	if out, err := exec.CommandContext(ctx, "go", "build", "-o", bin+"/", "../cmd/c2flow", "../cmd/worker").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	env := readEnvFile(t, "systemd/c2flow.env.example")
	units, err := filepath.Glob("systemd/*.service")
	if err != nil || len(units) != 3 {
		t.Fatalf("units: %v %v, want c2flow-server, c2flow-gateway and c2flow-worker@", units, err)
	}
	dir := t.TempDir()
	var paths []string
	for _, u := range units {
		b, err := os.ReadFile(u)
		if err != nil {
			t.Fatal(err)
		}
		text := string(b)
		for _, want := range []string{"User=c2flow", "NoNewPrivileges=yes", "ProtectSystem=strict", "MemoryMax=", "EnvironmentFile=/etc/c2flow/c2flow.env", "SystemCallFilter=@system-service"} {
			if !strings.Contains(text, "\n"+want) {
				t.Errorf("%s: no %s", u, want)
			}
		}
		if strings.Contains(text, "--insecure-listen") {
			t.Errorf("%s: --insecure-listen: the gateway serves plaintext on loopback only, TLS off the box", u)
		}
		name := filepath.Base(u)
		if strings.HasSuffix(name, "@.service") {
			name = strings.Replace(name, "@.service", "@0.service", 1)
			text = strings.ReplaceAll(text, "%i", "0")
		}
		text = strings.ReplaceAll(text, "/usr/local/bin/", bin+"/")
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
		for _, line := range strings.Split(text, "\n") {
			if cmdline, ok := strings.CutPrefix(line, "ExecStart="); ok {
				checkFlags(t, ctx, name, expandEnv(t, cmdline, env))
			}
		}
	}
	cmd := exec.CommandContext(ctx, analyze, append([]string{"verify", "--man=no"}, paths...)...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil || len(strings.TrimSpace(string(out))) > 0 {
		t.Errorf("systemd-analyze verify: %v\n%s", err, out)
	}
}

// checkFlags runs a unit's command line with -h last: Go's flag parsing
// stops there (the command prints its usage, or "help requested") once
// every flag before it is known, and names an unknown one.
func checkFlags(t *testing.T, ctx context.Context, unit string, argv []string) {
	t.Helper()
	out, err := exec.CommandContext(ctx, argv[0], append(argv[1:], "-h")...).CombinedOutput()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatalf("%s: %v", unit, err)
	}
	if strings.Contains(string(out), "not defined") || !strings.Contains(string(out), "help requested") && !strings.HasPrefix(string(out), "usage of") {
		t.Errorf("%s: %s: %s", unit, strings.Join(argv, " "), lastLine(string(out)))
	}
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

var unitVar = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`)

// expandEnv splits a unit's command line into words, its ${VAR}s from env
// (the example environment file) and "" an empty word, as systemd does.
func expandEnv(t *testing.T, line string, env map[string]string) []string {
	t.Helper()
	var argv []string
	for _, w := range strings.Fields(line) {
		w = unitVar.ReplaceAllStringFunc(w, func(m string) string {
			v, ok := env[unitVar.FindStringSubmatch(m)[1]]
			if !ok {
				t.Errorf("%s: %s is not in the example environment", line, m)
			}
			return v
		})
		if w == `""` {
			w = ""
		}
		argv = append(argv, w)
	}
	return argv
}
