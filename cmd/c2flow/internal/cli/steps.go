package cli

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
)

// StepWriter is the terminal of a command that prints its steps (demo,
// dev): a step's line may stay open while it works ("making keys ...",
// then " done in 25s"), and a warning logged meanwhile is said after the
// line, as part of the step, instead of in the middle of it (the whole
// structured line goes to the run's log file).
//
// A progress line (Redraw, on a terminal) is different: it stays open for
// minutes, so a warning logged meanwhile is written above it at once and
// the line drawn again below.
type StepWriter struct {
	mu      sync.Mutex
	w       io.Writer
	tty     bool
	open    bool   // the last write did not end a line
	redraw  string // the progress line shown, if the open line is one
	pending []string
}

// NewStepWriter writes steps to w (a terminal when w is one).
func NewStepWriter(w io.Writer) *StepWriter {
	tty := false
	if f, ok := w.(*os.File); ok {
		st, err := f.Stat()
		tty = err == nil && st.Mode()&os.ModeCharDevice != 0
	}
	return &StepWriter{w: w, tty: tty}
}

// Terminal reports whether the steps go to a terminal, where a progress
// line is redrawn in place (Redraw) rather than printed line by line.
func (s *StepWriter) Terminal() bool { return s.tty }

// Redraw shows line as the progress line, in place of the one shown: on a
// terminal only (a carriage return and an erase to the end of the line).
func (s *StepWriter) Redraw(line string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	fmt.Fprintf(s.w, "\r%s\x1b[K", line)
	s.open, s.redraw = true, line
}

// Write writes p and, once a line is ended, the warnings held while it
// was open.
func (s *StepWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n, err := s.w.Write(p)
	if len(p) > 0 {
		s.open = p[len(p)-1] != '\n'
		s.redraw = ""
	}
	if !s.open {
		for _, m := range s.pending {
			s.warn(m)
		}
		s.pending = nil
	}
	return n, err
}

func (s *StepWriter) warn(msg string) {
	fmt.Fprintf(s.w, "   warning: %s (in full in the run's log)\n", msg)
}

// Hold keeps msg for after the open line and reports true, or reports
// false when no line is open. Above a progress line, msg is written at
// once and the line drawn again.
func (s *StepWriter) Hold(msg string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.open {
		return false
	}
	if s.redraw != "" {
		fmt.Fprint(s.w, "\r\x1b[K")
		s.warn(msg)
		fmt.Fprintf(s.w, "%s\x1b[K", s.redraw)
		return true
	}
	s.pending = append(s.pending, msg)
	return true
}

// Handler wraps the terminal's log handler: a record logged while a step's
// line is open is held (its message said after the line).
func (s *StepWriter) Handler(h slog.Handler) slog.Handler { return &stepHandler{Handler: h, steps: s} }

type stepHandler struct {
	slog.Handler
	steps *StepWriter
}

func (h *stepHandler) Handle(ctx context.Context, r slog.Record) error {
	// The record's own attributes, not the logger's, follow its message;
	// the whole record is in the run's log.
	msg := r.Message
	r.Attrs(func(a slog.Attr) bool {
		msg += fmt.Sprintf(" %s=%q", a.Key, a.Value.String())
		return true
	})
	if h.steps.Hold(msg) {
		return nil
	}
	if r.Level >= slog.LevelWarn {
		// Said as the steps say warnings, never in slog's format between
		// them (a progress line on a terminal, or its lines in a file).
		h.steps.Warn(msg)
		return nil
	}
	return h.Handler.Handle(ctx, r)
}

// Warn says msg as a warning between the steps' lines.
func (s *StepWriter) Warn(msg string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.warn(msg)
}

func (h *stepHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return &stepHandler{Handler: h.Handler.WithAttrs(as), steps: h.steps}
}

func (h *stepHandler) WithGroup(name string) slog.Handler {
	return &stepHandler{Handler: h.Handler.WithGroup(name), steps: h.steps}
}
