package cli

import (
	"bytes"
	"fmt"
	"log/slog"
	"strings"
	"testing"
)

// A warning logged while a step's line is open is said after the line, as
// part of the step, not in the middle of it; outside a step it is said
// between the steps' lines in their form (the record whole in the run's
// log), never in slog's format among them; below WARN a record goes to the
// terminal's log as it is.
func TestStepWarnings(t *testing.T) {
	var out, term bytes.Buffer
	steps := NewStepWriter(&out)
	log := slog.New(steps.Handler(slog.NewTextHandler(&term, nil))).With("proof", "StackedDrg2KiBV1_1")
	fmt.Fprint(steps, "   StackedDrg2KiBV1_1: making DEVELOPMENT parameters ...")
	log.Warn("DEVELOPMENT SETUP: whoever ran it can forge proofs")
	fmt.Fprint(steps, " done in 1.2s\n")
	want := "   StackedDrg2KiBV1_1: making DEVELOPMENT parameters ... done in 1.2s\n" +
		"   warning: DEVELOPMENT SETUP: whoever ran it can forge proofs (in full in the run's log)\n"
	if out.String() != want {
		t.Errorf("steps:\n%q\nwant\n%q", out.String(), want)
	}
	if term.Len() != 0 {
		t.Errorf("the held warning reached the terminal's log too: %q", term.String())
	}
	log.Warn("outside a step", "error", "what went wrong")
	if term.Len() != 0 || !strings.HasSuffix(out.String(), "   warning: outside a step error=\"what went wrong\" (in full in the run's log)\n") {
		t.Errorf("a warning outside a step: steps %q, terminal %q", out.String(), term.String())
	}
	log.Info("an info line")
	if !strings.Contains(term.String(), "level=INFO") {
		t.Errorf("an info record outside a step: %q", term.String())
	}
}

// A warning logged under a progress line (which stays open for minutes)
// is written above it at once, on a line of its own, and the line drawn
// again below: never into the line, never raw in the log's format.
func TestWarningAboveProgressLine(t *testing.T) {
	var out, term bytes.Buffer
	steps := NewStepWriter(&out)
	log := slog.New(steps.Handler(slog.NewTextHandler(&term, nil)))
	steps.Redraw("[###...] 1/4 partitions")
	log.Warn("loading a DEVELOPMENT SETUP", "proof", "StackedDrg2KiBV1_1")
	steps.Redraw("[####..] 2/4 partitions")
	fmt.Fprintln(steps)
	want := "\r[###...] 1/4 partitions\x1b[K" +
		"\r\x1b[K   warning: loading a DEVELOPMENT SETUP proof=\"StackedDrg2KiBV1_1\" (in full in the run's log)\n" +
		"[###...] 1/4 partitions\x1b[K" +
		"\r[####..] 2/4 partitions\x1b[K\n"
	if out.String() != want {
		t.Errorf("steps:\n%q\nwant\n%q", out.String(), want)
	}
	if term.Len() != 0 {
		t.Errorf("the warning reached the terminal's log raw: %q", term.String())
	}
}
