package cli

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync"
)

// StepWriter is the terminal of a command that prints its steps (demo,
// dev): a step's line may stay open while it works ("making keys ...",
// then " done in 25s"), and a warning logged meanwhile is said after the
// line, as part of the step, instead of in the middle of it (the whole
// structured line goes to the run's log file).
type StepWriter struct {
	mu      sync.Mutex
	w       io.Writer
	open    bool // the last write did not end a line
	pending []string
}

func NewStepWriter(w io.Writer) *StepWriter { return &StepWriter{w: w} }

// Write writes p and, once a line is ended, the warnings held while it
// was open.
func (s *StepWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n, err := s.w.Write(p)
	if len(p) > 0 {
		s.open = p[len(p)-1] != '\n'
	}
	if !s.open {
		for _, m := range s.pending {
			fmt.Fprintf(s.w, "   warning: %s (in full in the run's log)\n", m)
		}
		s.pending = nil
	}
	return n, err
}

// Hold keeps msg for after the open line and reports true, or reports
// false when no line is open.
func (s *StepWriter) Hold(msg string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.open {
		return false
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
	if h.steps.Hold(r.Message) {
		return nil
	}
	return h.Handler.Handle(ctx, r)
}

func (h *stepHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return &stepHandler{Handler: h.Handler.WithAttrs(as), steps: h.steps}
}

func (h *stepHandler) WithGroup(name string) slog.Handler {
	return &stepHandler{Handler: h.Handler.WithGroup(name), steps: h.steps}
}
