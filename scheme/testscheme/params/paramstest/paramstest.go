// Package paramstest gives tests the keys of a profile, made once by a
// development setup and cached in $C2FLOW_PARAMS (the Makefile points every
// package there) or a per-user temporary directory.
package paramstest

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"

	"github.com/c2flow/c2flow/internal/testdirs"
	"github.com/c2flow/c2flow/scheme/testscheme/params"
	"github.com/c2flow/c2flow/scheme/testscheme/porep"
)

var (
	mu    sync.Mutex
	cache = map[string]*params.Keys{}
)

// Dir is the test parameter cache (testdirs.Params).
func Dir() string { return testdirs.Params() }

// Keys returns the profile's keys, loading them once per test binary.
func Keys(tb testing.TB, profile string) *params.Keys {
	tb.Helper()
	mu.Lock()
	defer mu.Unlock()
	if k, ok := cache[profile]; ok {
		return k
	}
	p, err := porep.LookupProfile(profile)
	if err != nil {
		tb.Fatal(err)
	}
	// Test packages run in parallel processes: one setup per profile, the
	// others wait for it and load its keys.
	if err := os.MkdirAll(Dir(), 0o755); err != nil {
		tb.Fatal(err)
	}
	lock, err := os.OpenFile(filepath.Join(Dir(), ".lock-"+profile), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		tb.Fatal(err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		tb.Fatal(err)
	}
	defer syscall.Flock(int(lock.Fd()), syscall.LOCK_UN)
	k, err := params.Load(context.Background(), params.DirStore{Root: Dir()}, p, nil)
	if err != nil {
		tb.Fatal(err)
	}
	cache[profile] = k
	return k
}
