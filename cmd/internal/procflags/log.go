// Package procflags holds the flags of a c2flow process that proves in its
// own process: logging and devices. It stays apart from cliflags (Temporal, S3,
// the worker host) so that a command proving in its own process, and its
// cuda-tagged test under make test-icicle, link no Temporal client.
package procflags

import (
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
)

// Env is $name, or def when it is unset or empty: every flag's default.
func Env(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// Log are the logging flags.
type Log struct {
	Level  string
	Format string
}

// Add registers the flags.
func (l *Log) Add(fs *flag.FlagSet, defLevel string) {
	fs.StringVar(&l.Level, "log-level", Env("C2FLOW_LOG_LEVEL", defLevel), "debug, info, warn or error")
	fs.StringVar(&l.Format, "log-format", Env("C2FLOW_LOG_FORMAT", "text"), "text or json")
}

// Logger builds the slog logger (to stderr).
func (l *Log) Logger() (*slog.Logger, error) { return l.LoggerTo(nil) }

// LoggerTo builds the logger of Logger that also writes to file, when it
// is not nil, every record at info and above (at --log-level when that is
// lower), in the --log-format: a run's own log, which keeps the timing
// lines (SYNTH_END, GPU_START, GPU_END, FINALIZE_END) that the terminal's
// level may drop.
func (l *Log) LoggerTo(file io.Writer) (*slog.Logger, error) { return l.LoggerToWrapped(file, nil) }

// LoggerToWrapped is LoggerTo with the terminal's handler wrapped by wrap
// (nil: as it is); the file's is not.
func (l *Log) LoggerToWrapped(file io.Writer, wrap func(slog.Handler) slog.Handler) (*slog.Logger, error) {
	lv, err := l.level()
	if err != nil {
		return nil, err
	}
	h, err := l.handler(os.Stderr, lv)
	if err != nil {
		return nil, err
	}
	if wrap != nil {
		h = wrap(h)
	}
	if file == nil {
		return slog.New(h), nil
	}
	fh, _ := l.handler(file, min(lv, slog.LevelInfo))
	return slog.New(slog.NewMultiHandler(h, fh)), nil
}

// Debug reports whether --log-level asks for debug: then third-party logs
// (the embedded Temporal and S3 servers') go to the terminal too.
func (l *Log) Debug() bool {
	lv, err := l.level()
	return err == nil && lv <= slog.LevelDebug
}

func (l *Log) level() (slog.Level, error) {
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(l.Level)); err != nil {
		return lv, fmt.Errorf("--log-level: %w", err)
	}
	return lv, nil
}

func (l *Log) handler(w io.Writer, lv slog.Level) (slog.Handler, error) {
	o := &slog.HandlerOptions{Level: lv}
	switch strings.ToLower(l.Format) {
	case "text":
		return slog.NewTextHandler(w, o), nil
	case "json":
		return slog.NewJSONHandler(w, o), nil
	}
	return nil, fmt.Errorf("--log-format: %q is neither text nor json", l.Format)
}
