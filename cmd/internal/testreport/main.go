// Command testreport reads `go test -json` on stdin and prints what a
// person reading a CI log needs: each package's result, and for every
// failed or skipped test the output it wrote (its errors, its skip
// reason), whole and in one place. With -v, go test prints a test's
// errors before its "--- FAIL" line and interleaves parallel tests, so a
// filter on the plain log shows the verdict without the reason; this
// buffers each test's output and prints it with its verdict. The plain
// text of the whole run goes to -log.
//
//	go test -json ./... 2>&1 | go run ./cmd/internal/testreport -log .c2flow/test.log
//
// It exits 1 if any test or package failed.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"
)

func main() {
	logPath := flag.String("log", "", "write the run's plain text output here")
	flag.Parse()
	var log io.Writer = io.Discard
	if *logPath != "" {
		f, err := os.Create(*logPath)
		if err != nil {
			fmt.Fprintf(os.Stderr, "testreport: %v\n", err)
			os.Exit(2)
		}
		defer f.Close()
		log = f
	}
	r := newReport(os.Stdout, log)
	if err := r.read(os.Stdin); err != nil {
		fmt.Fprintf(os.Stderr, "testreport: read go test's output: %v\n", err)
		os.Exit(2)
	}
	r.summary()
	if r.failed > 0 || r.failedPkgs > 0 {
		os.Exit(1)
	}
}

// event is one line of test2json's output (go doc test2json).
type event struct {
	Action  string
	Package string
	Test    string
	Output  string
	Elapsed float64
	Time    time.Time
}

// span is when a package's test binary ran, from the run's first event:
// the slowest ones, and when they started, say where CI's time goes (a
// long package that starts late is the run's tail).
type span struct {
	pkg        string
	start, ran time.Duration
}

type report struct {
	out, log io.Writer
	// buf holds the output of each running test, and of each package
	// outside its tests (build errors, a panic's trace, TestMain), until
	// its verdict.
	buf                     map[string]*strings.Builder
	passed, failed, skipped int
	failedPkgs              int
	failures                []string
	t0                      time.Time
	started                 map[string]time.Time
	spans                   []span
}

func newReport(out, log io.Writer) *report {
	return &report{out: out, log: log, buf: map[string]*strings.Builder{}, started: map[string]time.Time{}}
}

func (r *report) read(in io.Reader) error {
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var e event
		if len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &e) != nil {
			// go test's own stderr (a package that did not build, with an
			// older toolchain): shown as it is.
			fmt.Fprintf(r.out, "%s\n", line)
			fmt.Fprintf(r.log, "%s\n", line)
			continue
		}
		r.event(e)
	}
	return sc.Err()
}

func (r *report) event(e event) {
	key := e.Package + " " + e.Test
	if r.t0.IsZero() && !e.Time.IsZero() {
		r.t0 = e.Time
	}
	switch e.Action {
	case "start":
		r.started[e.Package] = e.Time
	case "output", "build-output":
		fmt.Fprint(r.log, e.Output)
		b := r.buf[key]
		if b == nil {
			b = &strings.Builder{}
			r.buf[key] = b
		}
		b.WriteString(e.Output)
	case "pass", "fail", "skip":
		text := r.buf[key]
		delete(r.buf, key)
		if e.Test == "" {
			r.packageDone(e, text)
			return
		}
		switch e.Action {
		case "pass":
			r.passed++
		case "skip":
			r.skipped++
			fmt.Fprintf(r.out, "--- SKIP: %s (%s)\n%s", e.Test, e.Package, indent(text))
		case "fail":
			r.failed++
			r.failures = append(r.failures, e.Package+" "+e.Test)
			fmt.Fprintf(r.out, "--- FAIL: %s (%s, %.2fs)\n%s", e.Test, e.Package, e.Elapsed, indent(text))
		}
	}
}

// packageDone prints a package's verdict; a failed package's own output
// (a build error, a panic, a timeout's goroutine dump) with it.
func (r *report) packageDone(e event, text *strings.Builder) {
	if st, ok := r.started[e.Package]; ok && !st.IsZero() {
		r.spans = append(r.spans, span{e.Package, st.Sub(r.t0), time.Duration(e.Elapsed * float64(time.Second))})
	}
	switch e.Action {
	case "pass":
		fmt.Fprintf(r.out, "ok   %s %.1fs\n", e.Package, e.Elapsed)
	case "skip":
		fmt.Fprintf(r.out, "?    %s [no test files]\n", e.Package)
	case "fail":
		r.failedPkgs++
		fmt.Fprintf(r.out, "FAIL %s %.1fs\n%s", e.Package, e.Elapsed, indent(text))
		// Tests cut off by the package's end (a panic, the timeout) never
		// got a verdict: their output is the evidence.
		prefix := e.Package + " "
		for k, b := range r.buf {
			if strings.HasPrefix(k, prefix) {
				fmt.Fprintf(r.out, "--- UNFINISHED: %s\n%s", strings.TrimPrefix(k, prefix), indent(b))
				delete(r.buf, k)
			}
		}
	}
}

func (r *report) summary() {
	fmt.Fprintf(r.out, "tests: %d passed, %d failed, %d skipped; packages failed: %d\n", r.passed, r.failed, r.skipped, r.failedPkgs)
	for _, f := range r.failures {
		fmt.Fprintf(r.out, "failed: %s\n", f)
	}
	slices.SortFunc(r.spans, func(a, b span) int { return int(b.ran - a.ran) })
	for i, s := range r.spans[:min(len(r.spans), slowest)] {
		if i == 0 {
			fmt.Fprintf(r.out, "slowest packages (run time, started after the run's start):\n")
		}
		fmt.Fprintf(r.out, "  %-50s %7.1fs  +%v\n", s.pkg, s.ran.Seconds(), s.start.Round(time.Second))
	}
}

// slowest is how many of the slowest packages the summary names.
const slowest = 8

// indent drops go test's own framing lines (=== RUN and the like, the
// verdict line, printed separately) and indents the rest.
func indent(b *strings.Builder) string {
	if b == nil {
		return ""
	}
	var s strings.Builder
	for _, l := range strings.SplitAfter(b.String(), "\n") {
		t := strings.TrimSpace(l)
		if t == "" || t == "PASS" || t == "FAIL" || strings.HasPrefix(t, "ok  \t") || strings.HasPrefix(t, "FAIL\t") ||
			strings.HasPrefix(t, "=== ") || strings.HasPrefix(t, "--- PASS") || strings.HasPrefix(t, "--- FAIL") || strings.HasPrefix(t, "--- SKIP") {
			continue
		}
		if !strings.HasSuffix(l, "\n") {
			l += "\n"
		}
		s.WriteString("  " + l)
	}
	return s.String()
}
