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

	"github.com/c2flow/c2flow/filecoin/r1cs"
	"github.com/c2flow/c2flow/params"
	"github.com/c2flow/c2flow/porep"
)

var (
	mu    sync.Mutex
	cache = map[string]*params.Keys{}
)

// Dir is the test parameter cache.
func Dir() string {
	if d := os.Getenv("C2FLOW_PARAMS"); d != "" {
		return d
	}
	return filepath.Join(os.TempDir(), "c2flow-test-params")
}

// FilecoinSetups is the cache of development setups of Filecoin circuits
// the tests share: the machine-wide r1cs.DefaultSetupCache, not under
// Dir(), because the 2KiB setup takes over 16 minutes to make and a fresh
// clone's tests should find the one this machine already made.
func FilecoinSetups() r1cs.SetupCache {
	return r1cs.DefaultSetupCache()
}

// FilecoinDevParams is the test directory of development setups in
// Filecoin's format (filecoin/c2 DevSetup writes them there from
// FilecoinSetups).
func FilecoinDevParams() string { return filepath.Join(Dir(), "filecoin", "dev-params") }

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
