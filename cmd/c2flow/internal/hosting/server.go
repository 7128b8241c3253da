package hosting

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/c2flow/c2flow/cmd/c2flow/internal/cli"
	"github.com/c2flow/c2flow/devstack"
)

// RunServer runs the production shape of the Temporal server: the build
// c2flow embeds, persisted to PostgreSQL with N history shards, plus the
// Temporal Web UI, until interrupted.
func RunServer(ctx context.Context, args []string) error {
	fs := cli.NewFlags("server")
	db := fs.String("db", "", "PostgreSQL database: postgres://USER@HOST:PORT/DBNAME[?sslmode=...] (required; DBNAME and DBNAME_visibility are created if missing, their schemas set up or upgraded; the password from PGPASSWORD)")
	shards := fs.Int("history-shards", 4, "history shards; fixed when the database is first used (Temporal cannot change it later)")
	address := fs.String("address", "127.0.0.1:7233", "frontend gRPC address IP:PORT (workers and clients connect here; its HTTP API takes a free port of the same IP); the internal services (history, matching, system worker) bind loopback (127.0.0.1) on free ports: they take no client authentication")
	ui := fs.String("ui", "127.0.0.1:8233", "Temporal Web UI address HOST:PORT (empty: no UI); with --tls-* it serves HTTPS and requires a client certificate of --tls-client-ca, else loopback only")
	uiInsecure := fs.Bool("ui-insecure-listen", false, "allow a plain-HTTP Web UI beyond loopback (whoever reaches it controls every workflow)")
	namespace := fs.String("namespace", "default", "namespace to register")
	level := fs.String("log-level", "warn", "the server's log level on stderr: debug, info, warn, error")
	logFile := fs.String("log-file", defaultServerLog(), "append the server's full log (with the Go stack traces the terminal is spared) to this file; \"none\": no file")
	serverTLS := addServerTLS(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	tlsConf, err := serverTLS()
	if err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if *db == "" {
		return errors.New("--db is required: postgres://USER@HOST:PORT/DBNAME")
	}
	if *shards < 1 {
		return fmt.Errorf("--history-shards %d: must be at least 1", *shards)
	}
	switch *level {
	case "debug", "info", "warn", "error":
	default:
		return fmt.Errorf("--log-level %q: want debug, info, warn or error", *level)
	}
	host, portStr, err := net.SplitHostPort(*address)
	if err != nil {
		return fmt.Errorf("--address %q: %w", *address, err)
	}
	ip := net.ParseIP(host)
	if ip == nil || ip.IsUnspecified() {
		return fmt.Errorf("--address %q: want the IP of an interface (the services announce it to one another), not %q", *address, host)
	}
	port, err := strconv.Atoi(portStr)
	if err != nil || port < 1 || port > 65535 {
		return fmt.Errorf("--address %q: port %q is not a port number", *address, portStr)
	}
	if err := postgresReachable(ctx, *db); err != nil {
		return err
	}
	var logw io.Writer = &noTraces{w: os.Stderr}
	if *logFile != "" && *logFile != "none" {
		if err := os.MkdirAll(filepath.Dir(*logFile), 0o755); err != nil {
			return fmt.Errorf("--log-file: %w", err)
		}
		f, err := os.OpenFile(*logFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return fmt.Errorf("--log-file: %w", err)
		}
		fmt.Fprintf(os.Stderr, "c2flow server: the full log (stack traces included) goes to %s\n", *logFile)
		defer f.Close()
		logw = io.MultiWriter(logw, f)
	}
	s, err := devstack.Start(devstack.Options{Postgres: *db, HistoryShards: *shards, IP: host, Port: port,
		UI: *ui, UIInsecure: *uiInsecure, Namespace: *namespace, LogLevel: *level, Log: logw, TLS: tlsConf})
	if err != nil {
		return err
	}
	defer s.Stop()
	shown := *db
	if u, err := url.Parse(*db); err == nil {
		shown = u.Redacted()
	}
	security := "plaintext, no client authentication: keep it on a private network"
	if tlsConf != nil {
		security = "mutual TLS: client certificates of " + tlsConf.ClientCAFile
	}
	fmt.Printf("c2flow server up (Ctrl-C to stop)\n  temporal  %s (namespace %s, %d history shards; %s)\n  postgres  %s (and its _visibility database)\n",
		s.Addr(), s.Namespace(), *shards, security, shown)
	if s.UIAddr() != "" {
		fmt.Printf("  web UI    %s\n", s.UIURL())
	}
	<-ctx.Done()
	return nil
}

// defaultServerLog is where the server's full log goes by default: the
// user's cache directory (a server has no data directory of its own; its
// state is in PostgreSQL).
func defaultServerLog() string {
	dir, err := os.UserCacheDir()
	if err != nil {
		return "none"
	}
	return filepath.Join(dir, "c2flow", "server.log")
}

// postgresReachable dials the database's host:port: a server down is one
// line here, not Temporal's retries and stack traces.
func postgresReachable(ctx context.Context, db string) error {
	u, err := url.Parse(db)
	if err != nil || u.Hostname() == "" || u.Scheme != "postgres" && u.Scheme != "postgresql" {
		return nil // devstack names what is wrong with the URL
	}
	port := u.Port()
	if port == "" {
		port = "5432"
	}
	addr := net.JoinHostPort(u.Hostname(), port)
	dctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	c, err := (&net.Dialer{}).DialContext(dctx, "tcp", addr)
	if err != nil {
		return fmt.Errorf("PostgreSQL at %s is not reachable: %w", addr, err)
	}
	return c.Close()
}

// noTraces passes the server's log lines on and drops the Go stack traces
// that zap's console format writes after an error as indented or bare
// frame lines (every log line starts with its timestamp, a digit).
type noTraces struct {
	w       io.Writer
	partial []byte
}

func (n *noTraces) Write(p []byte) (int, error) {
	n.partial = append(n.partial, p...)
	for {
		i := bytes.IndexByte(n.partial, '\n')
		if i < 0 {
			return len(p), nil
		}
		line := n.partial[:i+1]
		if len(line) > 0 && line[0] >= '0' && line[0] <= '9' {
			if _, err := n.w.Write(line); err != nil {
				return len(p), err
			}
		}
		n.partial = n.partial[i+1:]
	}
}
