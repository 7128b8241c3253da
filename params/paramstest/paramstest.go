// Package paramstest gives tests the keys of a profile, made once by a
// development setup and cached in $C2FLOW_PARAMS (the Makefile points every
// package there) or a per-user temporary directory.
package paramstest

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"

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
	k, err := params.Load(context.Background(), params.DirStore{Root: Dir()}, p, nil)
	if err != nil {
		tb.Fatal(err)
	}
	cache[profile] = k
	return k
}
