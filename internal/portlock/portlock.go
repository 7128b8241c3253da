// Package portlock hands out TCP ports below Linux's ephemeral range
// (20000-32767) that other processes on the machine do not take while
// they are held. A port checked free and closed can be taken by another
// process before its server binds it, and embedded Temporal exits the
// process when it cannot bind: every caller of this package takes an
// flock(2) named after the port first, held until release, so two of
// them never pick the same one.
package portlock

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
)

// Reserve returns a port of host that can be bound now and that no other
// caller of Reserve on this machine gets until release is called (or the
// process ends, which drops its locks).
func Reserve(host string) (port int, release func(), err error) {
	dir := filepath.Join(os.TempDir(), "c2flow-ports")
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return 0, nil, fmt.Errorf("port locks in %s: %w", dir, err)
	}
	var last error
	for range 200 {
		p := 20000 + rand.IntN(12768)
		f, err := os.OpenFile(filepath.Join(dir, strconv.Itoa(p)), os.O_CREATE|os.O_RDWR, 0o666)
		if err != nil {
			return 0, nil, fmt.Errorf("port lock for %d: %w", p, err)
		}
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
			f.Close()
			if !errors.Is(err, syscall.EWOULDBLOCK) {
				return 0, nil, fmt.Errorf("port lock for %d: %w", p, err)
			}
			last = fmt.Errorf("port %d held by another process", p)
			continue
		}
		l, err := net.Listen("tcp", net.JoinHostPort(host, strconv.Itoa(p)))
		if err != nil {
			f.Close()
			last = err
			continue
		}
		l.Close()
		return p, func() { f.Close() }, nil
	}
	return 0, nil, fmt.Errorf("no free port in 20000-32767 on %s: %w", host, last)
}
