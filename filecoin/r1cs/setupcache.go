package r1cs

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// SetupCache is where DEVELOPMENT Groth16 setups (single-party, whose toxic
// waste the machine that made them knew) of recorded shapes are kept, by
// shape digest: Dir/<digest>/ (filecoin/groth DevSetup writes dev.params
// and dev.vk there). Processes share it under a file lock per digest
// (Dir/.lock-<digest prefix>, LockFile), so one setup serves every process
// that needs it.
type SetupCache struct {
	Dir string
}

// DefaultSetupCache is the machine-wide cache of development setups:
// $C2FLOW_SETUP_CACHE, else <user cache dir>/c2flow/setups. It is keyed by
// shape digest, not kept under a checkout's parameter cache (C2FLOW_PARAMS),
// so a fresh clone's tests and demos reuse a setup this machine already
// made.
func DefaultSetupCache() SetupCache {
	if d := os.Getenv("C2FLOW_SETUP_CACHE"); d != "" {
		return SetupCache{Dir: d}
	}
	if d, err := os.UserCacheDir(); err == nil {
		return SetupCache{Dir: filepath.Join(d, "c2flow", "setups")}
	}
	return SetupCache{Dir: filepath.Join(os.TempDir(), "c2flow-setups")}
}

// LockFile takes an exclusive flock on path (created if need be), polling
// so that ctx can end the wait; the returned func releases it. Processes
// sharing an on-disk cache serialize on it.
func LockFile(ctx context.Context, path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() { syscall.Flock(int(f.Fd()), syscall.LOCK_UN); f.Close() }, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			f.Close()
			return nil, fmt.Errorf("locking %s: %w", path, err)
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, fmt.Errorf("waiting for %s: %w", path, ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}
