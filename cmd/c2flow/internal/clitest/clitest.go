// Package clitest holds what the tests of c2flow's commands share: the
// terminal a command wrote, and free loopback ports.
package clitest

import (
	"fmt"
	"io"
	"os"
	"testing"

	"github.com/c2flow/c2flow/internal/portlock"
)

// CaptureStderr returns what f writes on os.Stderr.
func CaptureStderr(t testing.TB, f func()) string { return capture(t, &os.Stderr, f) }

// CaptureStdout returns what f writes on os.Stdout.
func CaptureStdout(t testing.TB, f func()) string { return capture(t, &os.Stdout, f) }

// capture points *file at a pipe while f runs and returns what came
// through it.
func capture(t testing.TB, file **os.File, f func()) string {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	saved := *file
	*file = w
	out := make(chan string)
	go func() {
		b, _ := io.ReadAll(r)
		out <- string(b)
	}()
	func() {
		defer func() { *file = saved }()
		f()
	}()
	w.Close()
	return <-out
}

// FreeAddr returns a loopback address with a free port below the
// ephemeral range (one freed from it can be taken by an outgoing
// connection before the server binds it), held under portlock until the
// test ends so that a parallel test binary does not pick it too.
func FreeAddr(t testing.TB) string {
	t.Helper()
	port, release, err := portlock.Reserve("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(release)
	return fmt.Sprintf("127.0.0.1:%d", port)
}
