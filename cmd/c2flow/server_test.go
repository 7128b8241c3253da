package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/c2flow/c2flow/cmd/c2flow/internal/clitest"
	"github.com/c2flow/c2flow/cmd/internal/cliflags"
	"github.com/c2flow/c2flow/devstack"
	"github.com/c2flow/c2flow/devstack/pgtest"
	"github.com/c2flow/c2flow/internal/pki"
	"github.com/c2flow/c2flow/internal/pki/pkitest"
)

// `c2flow server` refuses bad flags before touching a database, naming
// the flag.
func TestServerFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "--db is required"},
		{[]string{"--db", "postgres://u@h:1/d", "--history-shards", "0"}, "--history-shards 0"},
		{[]string{"--db", "postgres://u@h:1/d", "--address", "0.0.0.0:7233"}, "IP of an interface"},
		{[]string{"--db", "postgres://u@h:1/d", "--address", "localhost:7233"}, "IP of an interface"},
		{[]string{"--db", "postgres://u@h:1/d", "--address", "127.0.0.1:x"}, "not a port number"},
		{[]string{"--db", "postgres://u@h:1/d", "--log-level", "loud"}, "--log-level"},
		{[]string{"--db", "mysql://u@h:1/d"}, "scheme"},
		{[]string{"--db", "postgres://u@h:1/d", "extra"}, "unexpected arguments"},
	} {
		err := dispatch(context.Background(), append([]string{"server"}, c.args...))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("server %v: %v, want an error saying %q", c.args, err, c.want)
		}
	}
}

// `c2flow server --help` says where the internal services bind: loopback,
// not the frontend's IP (devstack binds them to 127.0.0.1).
func TestServerHelpSaysLoopback(t *testing.T) {
	h := clitest.CaptureStderr(t, func() {
		if err := dispatch(context.Background(), []string{"server", "--help"}); !errors.Is(err, flag.ErrHelp) {
			t.Fatalf("server --help: %v", err)
		}
	})
	if strings.Contains(h, "bind the same IP") || !strings.Contains(h, "loopback") {
		t.Fatalf("server --help on the internal services:\n%s", h)
	}
}

// `c2flow server --tls-cert --tls-key --tls-client-ca` serves its frontend
// with mutual TLS on PostgreSQL: a client with a certificate of the client
// CA gets in, one without is refused, saying so.
func TestServerMutualTLS(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a Temporal server on PostgreSQL")
	}
	pg := pgtest.URL(t, pgtest.Base(t))
	serverCA := pkitest.NewCA(t, "server-ca")
	clientCA := pkitest.NewCA(t, "client-ca")
	cert, key := serverCA.Issue("temporal", pki.Server, "127.0.0.1")
	cliCert, cliKey := clientCA.Issue("operator", pki.Client)
	// A port below the ephemeral range: one freed from it can be taken
	// by an outgoing connection before the server binds it.
	var addr string
	for addr == "" {
		a := fmt.Sprintf("127.0.0.1:%d", 20000+rand.IntN(12000))
		if l, err := net.Listen("tcp", a); err == nil {
			l.Close()
			addr = a
		}
	}

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	srvCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	stdout := os.Stdout
	os.Stdout, _ = os.OpenFile(os.DevNull, os.O_WRONLY, 0) // the banner
	defer func() { os.Stdout.Close(); os.Stdout = stdout }()
	go func() {
		done <- dispatch(srvCtx, []string{"server", "--db", pg, "--history-shards", "2", "--address", addr, "--ui", "",
			"--log-level", "error", "--tls-cert", cert, "--tls-key", key, "--tls-client-ca", clientCA.CertFile})
	}()
	defer func() {
		stop()
		if err := <-done; err != nil {
			t.Errorf("server: %v", err)
		}
	}()
	log := slog.New(slog.DiscardHandler)
	good := cliflags.Temporal{Address: addr, Namespace: "default", Auth: cliflags.TemporalAuth{CertFile: cliCert, KeyFile: cliKey, CAFile: serverCA.CertFile}}
	c, err := good.DialRetry(ctx, log, 2*time.Minute)
	if err != nil {
		t.Fatalf("with a client certificate: %v", err)
	}
	c.Close()
	bare := cliflags.Temporal{Address: addr, Namespace: "default", Auth: cliflags.TemporalAuth{CAFile: serverCA.CertFile}}
	if c, err := bare.Dial(ctx, log); err == nil {
		c.Close()
		t.Fatal("a client without a certificate got in")
	} else if !strings.Contains(err.Error(), "requires a client certificate") {
		t.Fatalf("without a client certificate: %v", err)
	}
}

// Temporal persists the history shard count at the first start: `c2flow
// server --history-shards 8` on a database created with 2 is refused,
// naming both counts, instead of reporting 8 and using 2.
func TestServerRefusesOtherHistoryShards(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a Temporal server on PostgreSQL")
	}
	pg := pgtest.URL(t, pgtest.Base(t))
	s, err := devstack.Start(devstack.Options{Postgres: pg, HistoryShards: 2, LogLevel: "error", Log: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	s.Stop()
	// Bounded: a server that accepted the count would serve until ctx ends.
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
	defer cancel()
	err = dispatch(ctx, []string{"server", "--db", pg, "--history-shards", "8", "--ui", "", "--log-level", "error", "--address", "127.0.0.1:1"})
	if err == nil || !strings.Contains(err.Error(), "created with 2 history shards, not 8") {
		t.Fatalf("server --history-shards 8 on a database of 2 shards: %v", err)
	}
	// The same count starts as before.
	s, err = devstack.Start(devstack.Options{Postgres: pg, HistoryShards: 2, LogLevel: "error", Log: io.Discard})
	if err != nil {
		t.Fatalf("restart with 2 shards: %v", err)
	}
	s.Stop()
}

// `c2flow server` with PostgreSQL down says so in one line naming the
// database's address, without Temporal's stack traces.
func TestServerPostgresDown(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // a closed port
	var derr error
	stderr := clitest.CaptureStderr(t, func() {
		derr = dispatch(context.Background(), []string{"server", "--db", "postgres://postgres@" + addr + "/x", "--ui", ""})
	})
	if derr == nil || !strings.Contains(derr.Error(), "PostgreSQL at "+addr+" is not reachable") {
		t.Fatalf("server on a closed port: %v", derr)
	}
	if n := strings.Count(stderr, "\n"); n > 3 || strings.Contains(stderr, "goroutine") || strings.Contains(stderr, "go.temporal.io/server/") {
		t.Fatalf("server on a closed port wrote %d lines to stderr:\n%s", n, stderr)
	}
}
