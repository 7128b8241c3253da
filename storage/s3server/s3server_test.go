package s3server

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// runCapturingStdout runs a server, sends it one request and returns what
// the process printed on stdout meanwhile.
func runCapturingStdout(t *testing.T, verbose bool) string {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout := os.Stdout
	os.Stdout = w
	defer func() { os.Stdout = stdout }()
	captured := make(chan string)
	go func() {
		var b bytes.Buffer
		io.Copy(&b, r)
		captured <- b.String()
	}()

	addr, err := FreeAddr()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, Config{Addr: addr, Dir: filepath.Join(t.TempDir(), "s3"), AccessKey: "k", SecretKey: "secret-key", Verbose: verbose})
	}()
	wctx, wcancel := context.WithTimeout(ctx, 10*time.Second)
	err = WaitReady(wctx, addr)
	wcancel()
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	resp, err := http.Get("http://" + addr + "/") // unauthenticated: refused, and logged when verbose
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	resp.Body.Close()
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	w.Close()
	return <-captured
}

// The embedded server prints nothing unless asked: neither versitygw's
// "No IAM service configured, enabling single account mode" nor its
// per-request lines. Verbose shows the requests (and so that the capture
// works).
func TestQuietUnlessVerbose(t *testing.T) {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chdir(wd) }) // the POSIX backend changes the working directory
	if out := runCapturingStdout(t, false); out != "" {
		t.Fatalf("server printed on stdout: %q", out)
	}
	if out := runCapturingStdout(t, true); out == "" {
		t.Fatal("verbose server printed nothing for a request")
	}
}
