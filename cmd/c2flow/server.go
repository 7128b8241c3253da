package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"strconv"

	"github.com/c2flow/c2flow/devstack"
)

// runServer runs the production shape of the Temporal server: the build
// c2flow embeds, persisted to PostgreSQL with N history shards, plus the
// Temporal Web UI, until interrupted.
func runServer(ctx context.Context, args []string) error {
	fs := newFlags("server")
	db := fs.String("db", "", "PostgreSQL database: postgres://USER@HOST:PORT/DBNAME[?sslmode=...] (required; DBNAME and DBNAME_visibility are created if missing, their schemas set up or upgraded; the password from PGPASSWORD)")
	shards := fs.Int("history-shards", 4, "history shards; fixed when the database is first used (Temporal cannot change it later)")
	address := fs.String("address", "127.0.0.1:7233", "frontend gRPC address IP:PORT (workers and clients connect here; its HTTP API takes a free port of the same IP); the internal services (history, matching, system worker) bind loopback (127.0.0.1) on free ports: they take no client authentication")
	ui := fs.String("ui", "127.0.0.1:8233", "Temporal Web UI address HOST:PORT (empty: no UI); with --tls-* it serves HTTPS and requires a client certificate of --tls-client-ca, else loopback only")
	uiInsecure := fs.Bool("ui-insecure-listen", false, "allow a plain-HTTP Web UI beyond loopback (whoever reaches it controls every workflow)")
	namespace := fs.String("namespace", "default", "namespace to register")
	level := fs.String("log-level", "warn", "the server's log level on stderr: debug, info, warn, error")
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
	s, err := devstack.Start(devstack.Options{Postgres: *db, HistoryShards: *shards, IP: host, Port: port,
		UI: *ui, UIInsecure: *uiInsecure, Namespace: *namespace, LogLevel: *level, Log: os.Stderr, TLS: tlsConf})
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
