// Package s3test runs a real S3 server (versitygw, embedded) in a separate
// process for tests, so a test can stop and restart it. The process is the
// test binary itself, re-executed: a package that uses Start calls Main from
// its TestMain.
package s3test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/c2flow/c2flow/storage"
	"github.com/c2flow/c2flow/storage/s3server"
)

const envServe = "C2FLOW_S3TEST_SERVE"

// Main runs the tests, or serves S3 when this process is a server started
// by Start.
func Main(m *testing.M) {
	if v := os.Getenv(envServe); v != "" {
		f := strings.SplitN(v, "|", 6)
		ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
		defer stop()
		if err := s3server.Run(ctx, s3server.Config{Addr: f[0], Dir: f[1], AccessKey: f[2], SecretKey: f[3], CertFile: f[4], KeyFile: f[5]}); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// Server is an S3 server process.
type Server struct {
	Addr, Dir      string
	Access, Secret string
	// CertFile and KeyFile, set by StartTLS, make the server speak HTTPS;
	// Config's clients trust the CAs of CAFile.
	CertFile, KeyFile, CAFile string
	t                         testing.TB
	cmd                       *exec.Cmd
}

// Start starts a server on a free port over a temporary directory; it is
// killed when the test ends.
func Start(t testing.TB) *Server {
	t.Helper()
	return StartTLS(t, "", "", "")
}

// StartTLS is Start with a server speaking HTTPS with the given certificate
// and key (PEM files); Config's clients trust the CAs of caFile.
func StartTLS(t testing.TB, certFile, keyFile, caFile string) *Server {
	t.Helper()
	addr, err := s3server.FreeAddr()
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{Addr: addr, Dir: t.TempDir(), Access: "c2flow-test", Secret: "c2flow-test-secret", CertFile: certFile, KeyFile: keyFile, CAFile: caFile, t: t}
	s.Restart()
	t.Cleanup(s.Stop)
	return s
}

// Restart starts the server again on the same address and directory.
func (s *Server) Restart() {
	s.t.Helper()
	if s.cmd != nil {
		s.t.Fatal("s3test: server already running")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envServe+"="+strings.Join([]string{s.Addr, s.Dir, s.Access, s.Secret, s.CertFile, s.KeyFile}, "|"))
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Start(); err != nil {
		s.t.Fatalf("s3test: start server: %v", err)
	}
	s.cmd = cmd
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := s3server.WaitReady(ctx, s.Addr); err != nil {
		s.t.Fatal(err)
	}
}

// Stop kills the server (SIGKILL: a crash, not a shutdown).
func (s *Server) Stop() {
	if s.cmd == nil {
		return
	}
	s.cmd.Process.Kill()
	s.cmd.Wait()
	s.cmd = nil
}

// Endpoint is the server's URL.
func (s *Server) Endpoint() string {
	if s.CertFile != "" {
		return "https://" + s.Addr
	}
	return "http://" + s.Addr
}

// Config returns a client configuration for bucket.
func (s *Server) Config(bucket string) storage.Config {
	return storage.Config{Endpoint: s.Endpoint(), Bucket: bucket, AccessKey: s.Access, SecretKey: s.Secret, PathStyle: true, CABundle: s.CAFile}
}

// Store opens a store on bucket, creating the bucket.
func (s *Server) Store(bucket string) *storage.Store {
	s.t.Helper()
	st, err := storage.Open(context.Background(), s.Config(bucket))
	if err != nil {
		s.t.Fatal(err)
	}
	if err := st.EnsureBucket(context.Background()); err != nil {
		s.t.Fatal(err)
	}
	return st
}
