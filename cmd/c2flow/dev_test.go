package main

import (
	"context"
	"errors"
	"flag"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/c2flow/c2flow/cmd/c2flow/internal/clitest"
	"github.com/c2flow/c2flow/internal/pki"
	"github.com/c2flow/c2flow/internal/pki/pkitest"
	"github.com/c2flow/c2flow/scheme/testscheme/params/paramstest"
	"github.com/c2flow/c2flow/storage"
	"github.com/c2flow/c2flow/storage/s3test"
)

// `c2flow demo --help` shows the demo's own defaults (free ports, its own
// directory), not those of `c2flow dev`; dev keeps its fixed ports.
func TestStackFlagDefaults(t *testing.T) {
	help := func(cmd ...string) string {
		return clitest.CaptureStderr(t, func() {
			if err := dispatch(context.Background(), append(cmd, "--help")); !errors.Is(err, flag.ErrHelp) {
				t.Fatalf("%v --help: %v", cmd, err)
			}
		})
	}
	for _, c := range []struct {
		cmd       []string
		want, not []string
	}{
		{[]string{"demo"}, []string{`(default ".c2flow/demo")`, `(default "127.0.0.1:0")`}, []string{"7233", "9000", ".c2flow/dev"}},
		{[]string{"bench", "batch"}, []string{`(default ".c2flow/bench")`, `(default "127.0.0.1:0")`}, []string{"(default 7233)", "9000", ".c2flow/dev"}},
		{[]string{"dev"}, []string{`(default ".c2flow/dev")`, "(default 7233)", `(default "127.0.0.1:9000")`}, nil},
	} {
		h := help(c.cmd...)
		for _, w := range c.want {
			if !strings.Contains(h, w) {
				t.Errorf("%v --help lacks %s:\n%s", c.cmd, w, h)
			}
		}
		for _, n := range c.not {
			if strings.Contains(h, n) {
				t.Errorf("%v --help shows %s:\n%s", c.cmd, n, h)
			}
		}
	}
}

// `c2flow dev` on a Temporal or S3 port another server holds fails at
// once, saying which port and why, on the terminal (Temporal's own fatal
// error went to its log file only; versitygw's failed bind went unnoticed
// and dev talked to the other server).
func TestDevBusyPorts(t *testing.T) {
	if testing.Short() {
		t.Skip("starts c2flow dev")
	}
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	_, port, _ := net.SplitHostPort(busy.Addr().String())
	dir := t.TempDir()
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"temporal", []string{"--temporal-port", port, "--s3-listen", clitest.FreeAddr(t)}, "temporal frontend: port " + port},
		{"temporal port out of range", []string{"--temporal-port", "70000", "--s3-listen", clitest.FreeAddr(t)}, "port 70000 is not a port number"},
		{"s3", []string{"--temporal-port", "0", "--s3-listen", busy.Addr().String()}, "embedded S3 server on " + busy.Addr().String()},
	} {
		p := startC2flow(t, dir, c.name, append([]string{"dev", "--dir", filepath.Join(dir, c.name), "--ui", "", "--profiles", ""}, c.args...)...)
		select {
		case err := <-p.waited:
			p.waited <- err
		case <-time.After(2 * time.Minute):
			t.Fatalf("%s: dev did not exit:\n%s", c.name, p.output())
		}
		if out := p.output(); !strings.Contains(out, c.want) || !strings.Contains(out, "address already in use") && !strings.Contains(c.want, "not a port") {
			t.Errorf("%s: dev printed:\n%s\nwant %q and the cause", c.name, out, c.want)
		}
	}
}

// `c2flow dev` takes relative paths as relative to where it was started,
// though the embedded S3 server changes the working directory to
// DIR/s3 before Temporal reads its TLS files: --tls-* files are found,
// --stats-file lands where it was asked for, --filecoin-params is not
// made under DIR/s3.
func TestDevRelativePaths(t *testing.T) {
	if testing.Short() {
		t.Skip("starts c2flow dev")
	}
	cwd := t.TempDir()
	serverCA := pkitest.NewCA(t, "server-ca")
	clientCA := pkitest.NewCA(t, "client-ca")
	cert, key := serverCA.Issue("temporal", pki.Server, "127.0.0.1")
	for src, dst := range map[string]string{cert: "srv.pem", key: "srv.key", clientCA.CertFile: "ca.pem"} {
		b, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(cwd, dst), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	p := startC2flowIn(t, cwd, t.TempDir(), "dev", "dev", "--dir", "d", "--temporal-port", "0", "--s3-listen", clitest.FreeAddr(t), "--ui", "",
		"--profiles", "", "--tls-cert", "srv.pem", "--tls-key", "srv.key", "--tls-client-ca", "ca.pem",
		"--stats-file", "stats.json", "--filecoin-params", "fcp", "--params", paramstest.Dir())
	p.waitFor("submit with:", 3*time.Minute)
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, err := os.Stat(filepath.Join(cwd, "stats.json")); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no stats.json in the directory dev was started in; under d/s3: %v", exists(filepath.Join(cwd, "d", "s3", "stats.json")))
		}
		time.Sleep(200 * time.Millisecond)
	}
	if exists(filepath.Join(cwd, "d", "s3", "stats.json")) || exists(filepath.Join(cwd, "d", "s3", "fcp")) {
		t.Error("dev wrote under its S3 directory")
	}
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// Ctrl-C of `c2flow dev` says what the stop waits for and how to stop at
// once (it took 110 s in silence while a witness was held), and the stop
// ends.
func TestDevStopSaysWhatItWaitsFor(t *testing.T) {
	if testing.Short() {
		t.Skip("starts c2flow dev")
	}
	dir := t.TempDir()
	p := startC2flow(t, dir, "dev", "dev", "--dir", filepath.Join(dir, "d"), "--temporal-port", "0", "--s3-listen", clitest.FreeAddr(t), "--ui", "", "--profiles", "")
	p.waitFor("submit with:", 3*time.Minute)
	p.cmd.Process.Signal(syscall.SIGINT)
	p.waitFor("c2flow dev: stopping:", time.Minute)
	if out := p.output(); !strings.Contains(out, "at most 30s") || !strings.Contains(out, "Ctrl-C again to stop at once") {
		t.Errorf("the stop's message: %s", out)
	}
	select {
	case err := <-p.waited:
		p.waited <- err
		if err != nil {
			t.Errorf("dev exited with %v:\n%s", err, p.output())
		}
	case <-time.After(2 * time.Minute):
		t.Fatalf("dev did not stop:\n%s", p.output())
	}
}

// `c2flow dev --external-s3` with a bucket that does not exist fails
// naming it, and never creates it: only the embedded server's bucket is
// the stack's to make.
func TestDevExternalS3NeverCreatesTheBucket(t *testing.T) {
	srv := s3test.Start(t)
	srv.Store("c2flow-real")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel() // without the check the stack comes up and runs: end it
	err := dispatch(ctx, []string{"dev", "--external-s3", "--dir", t.TempDir(), "--temporal-port", "0",
		"--s3-endpoint", srv.Endpoint(), "--s3-bucket", "c2flow-typo", "--s3-access-key", srv.Access, "--s3-secret-key", srv.Secret})
	if err == nil || !errors.Is(err, storage.ErrNoBucket) || !strings.Contains(err.Error(), `"c2flow-typo"`) {
		t.Fatalf("dev on an external S3 without the bucket: %v", err)
	}
	st, err := storage.Open(context.Background(), srv.Config("c2flow-typo"))
	if err != nil {
		t.Fatal(err)
	}
	if err := st.CheckBucket(context.Background()); !errors.Is(err, storage.ErrNoBucket) {
		t.Fatalf("the mistyped bucket was created on the external S3: %v", err)
	}
}
