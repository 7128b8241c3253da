package portlock

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
)

// TestReservedPortIsLocked checks the lock another process would try: a
// held port's lock file cannot be taken, and a released one can.
func TestReservedPortIsLocked(t *testing.T) {
	port, release, err := Reserve("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	if port < 20000 || port > 32767 {
		t.Fatalf("port %d outside 20000-32767", port)
	}
	path := filepath.Join(os.TempDir(), "c2flow-ports", strconv.Itoa(port))
	// flock is per open file description: a second open in this process
	// contends like another process would.
	try := func() error {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		return syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	}
	if err := try(); err == nil {
		t.Fatalf("port %d's lock taken while reserved", port)
	}
	if _, err := exec.LookPath("flock"); err == nil {
		if exec.Command("flock", "-n", path, "true").Run() == nil {
			t.Fatalf("another process took port %d's lock while reserved", port)
		}
	}
	release()
	if err := try(); err != nil {
		t.Fatalf("port %d's lock not free after release: %v", port, err)
	}
}
