package main

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/c2flow/c2flow/scheme/testscheme/params/paramstest"
)

// README command one as `make demo` runs it: one batch of two test-scheme
// 32KiB sectors (4 partitions each) and two Filecoin 2KiB sectors (the
// real StackedCircuit on the development setup, made on first use),
// proved through the embedded stack, every stored C2 verified by the demo
// itself, the summary naming which sectors are Filecoin's.
func TestDemoMixedBatch(t *testing.T) {
	if testing.Short() {
		t.Skip("runs c2flow demo")
	}
	dir := t.TempDir()
	p := startC2flow(t, dir, "demo", "demo", "--dir", dir, "--params", paramstest.Dir())
	// A guard against a hang, not a timing claim: on a cold machine under
	// two busy loops and other tests (loaded run 3) the Filecoin
	// development setup took 5 minutes and a partition was synthesized
	// again after a heartbeat timeout, past the 15 minutes this was.
	p.waitFor("this run's log:", 40*time.Minute)
	out := p.output()
	for _, want := range []string{
		"4. every C2 in storage verifies, from this process: 2 test-scheme sectors with gnark's verifier, 2 Filecoin sectors as 1 x 192-byte proofs",
		"batch: 4 sectors in",
	} {
		if !strings.Contains(out, want) {
			t.Fatalf("demo output lacks %q:\n%s", want, out)
		}
	}
	// A sector's line: its id, its kind, its wall time in parentheses.
	count := func(kind string) int {
		return len(regexp.MustCompile(`(?m)^\s*\d+ `+kind+`\s+\(`).FindAllString(out, -1))
	}
	if n, m := count("Filecoin StackedDrg2KiBV1_1"), count("test scheme 32KiB"); n != 2 || m != 2 {
		t.Fatalf("summary: %d Filecoin and %d test-scheme sector lines, want 2 and 2:\n%s", n, m, out)
	}
}

// An 8MiB Filecoin sector end to end (issue 56: nothing above 2KiB had
// been proved): sealed, its C1 written, proved through the embedded stack
// under a development setup of the 8MiB circuit (3,844,969 constraints;
// made once, cached by circuit digest) and its stored C2 verified by the
// demo itself.
func TestDemo8MiB(t *testing.T) {
	if testing.Short() {
		t.Skip("runs c2flow demo on an 8MiB sector")
	}
	dir := t.TempDir()
	p := startC2flow(t, dir, "demo", "demo", "--dir", dir, "--params", paramstest.Dir(),
		"--proof", "StackedDrg8MiBV1_1", "--filecoin-sectors", "1", "--sectors", "0")
	p.waitFor("this run's log:", 40*time.Minute)
	out := p.output()
	for _, want := range []string{
		"4. every C2 in storage verifies, from this process: 0 test-scheme sectors with gnark's verifier, 1 Filecoin sectors as 1 x 192-byte proofs",
		"batch: 1 sectors in",
	} {
		if !strings.Contains(out, want) {
			t.Fatalf("demo output lacks %q:\n%s", want, out)
		}
	}
	if n := len(regexp.MustCompile(`(?m)^\s*\d+ Filecoin StackedDrg8MiBV1_1\s+\(`).FindAllString(out, -1)); n != 1 {
		t.Fatalf("summary: %d 8MiB sector lines, want 1:\n%s", n, out)
	}
}
