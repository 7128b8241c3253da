package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestReportShowsWhy runs go test -json on a throwaway module whose tests
// fail (with t.Errorf before the verdict, as -v prints it, and in a
// parallel pair), skip and pass, and checks that the report prints each
// failure's message and each skip's reason beside its verdict.
func TestReportShowsWhy(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module example.com/r\n\ngo 1.22\n")
	write("r_test.go", `package r

import "testing"

func TestA(t *testing.T) { t.Parallel(); t.Log("a is running"); t.Errorf("a went wrong: %d", 41) }
func TestB(t *testing.T) { t.Parallel(); t.Log("b is running") }
func TestC(t *testing.T) { t.Skip("needs a thing this machine lacks") }
func TestD(t *testing.T) { t.Run("sub", func(t *testing.T) { t.Fatal("sub failed here") }) }
`)
	cmd := exec.Command("go", "test", "-json", "-count=1", "./...")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=", "GOWORK=off")
	raw, _ := cmd.CombinedOutput() // fails: its tests do
	var out, log bytes.Buffer
	r := newReport(&out, &log)
	if err := r.read(bytes.NewReader(raw)); err != nil {
		t.Fatal(err)
	}
	r.summary()
	got := out.String()
	t.Logf("the report:\n%s", got)
	for _, want := range []string{
		"--- FAIL: TestA (example.com/r",
		"a went wrong: 41",
		"--- SKIP: TestC (example.com/r)",
		"needs a thing this machine lacks",
		"--- FAIL: TestD/sub",
		"sub failed here",
		"FAIL example.com/r",
		"tests: 1 passed, 3 failed, 1 skipped; packages failed: 1",
		"slowest packages (run time, started after the run's start):\n  example.com/r ",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the report lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "b is running") {
		t.Errorf("the report prints a passing test's output:\n%s", got)
	}
	if !strings.Contains(log.String(), "b is running") {
		t.Errorf("the log lacks a passing test's output:\n%s", log.String())
	}
	// The output under TestA's verdict is TestA's, not its parallel twin's.
	a := got[strings.Index(got, "--- FAIL: TestA"):]
	if next := strings.Index(a[1:], "---"); next > 0 {
		a = a[:next+1]
	}
	if strings.Contains(a, "b is running") {
		t.Errorf("TestA's block holds TestB's output:\n%s", a)
	}
}
