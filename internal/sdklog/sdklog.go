// Package sdklog is how c2flow's processes hand the Temporal SDK a logger:
// a small package of its own, so that a worker binary that needs it does
// not link the embedded stack (its Temporal server and S3 server).
package sdklog

import (
	"context"
	"log/slog"
	"strings"
)

// Handler is the handler the Temporal SDK logs through: warnings and
// errors only (the SDK is chatty at info), less the warning about a
// throttled heartbeat flushed after its activity was canceled (nothing is
// wrong then).
func Handler(h slog.Handler) slog.Handler { return levelFilter{h, slog.LevelWarn} }

// levelFilter drops records below a level.
type levelFilter struct {
	slog.Handler
	min slog.Level
}

func (l levelFilter) Enabled(ctx context.Context, lv slog.Level) bool {
	return lv >= l.min && l.Handler.Enabled(ctx, lv)
}

// Handle drops the SDK's warning about a throttled heartbeat flushed after
// its activity completed: nothing is wrong then.
func (l levelFilter) Handle(ctx context.Context, r slog.Record) error {
	if r.Message == "RecordActivityHeartbeat with error" {
		canceled := false
		r.Attrs(func(a slog.Attr) bool {
			if a.Key == "Error" && strings.Contains(a.Value.String(), "context canceled") {
				canceled = true
			}
			return !canceled
		})
		if canceled {
			return nil
		}
	}
	return l.Handler.Handle(ctx, r)
}

func (l levelFilter) WithAttrs(a []slog.Attr) slog.Handler {
	return levelFilter{l.Handler.WithAttrs(a), l.min}
}

func (l levelFilter) WithGroup(n string) slog.Handler {
	return levelFilter{l.Handler.WithGroup(n), l.min}
}
