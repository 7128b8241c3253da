// Package pgtest gives tests a real PostgreSQL server: the cluster named by
// C2FLOW_TEST_POSTGRES (.ci/run starts one with scripts/pg-throwaway.sh),
// or a throwaway cluster of a test's own that it can restart. Without
// C2FLOW_TEST_POSTGRES the tests skip, saying why; under CI=true they fail
// instead: CI must run them.
package pgtest

import (
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// Env names the base URL of the PostgreSQL server tests use:
// postgres://USER@HOST:PORT, a role that may create databases.
const Env = "C2FLOW_TEST_POSTGRES"

var seq atomic.Int64

// Base is the server's URL from Env; without it the test skips (fails
// under CI=true).
func Base(t testing.TB) string {
	t.Helper()
	v := os.Getenv(Env)
	if v == "" {
		msg := Env + " is unset: no PostgreSQL server for this test (start one: eval \"$(scripts/pg-throwaway.sh start DIR)\")"
		if os.Getenv("CI") == "true" {
			t.Fatal(msg + "; CI=true, so this is a failure, not a skip")
		}
		t.Skip(msg)
	}
	return v
}

// URL is a fresh database's URL on the server of base: a name no other
// test uses (the database itself is created by whoever connects first).
func URL(t testing.TB, base string) string {
	t.Helper()
	u, err := url.Parse(base)
	if err != nil {
		t.Fatalf("%s=%q: %v", Env, base, err)
	}
	name := strings.ToLower(strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			return r
		}
		return '_'
	}, t.Name()))
	if len(name) > 30 {
		name = name[:30]
	}
	u.Path = "/" + fmt.Sprintf("t_%s_%d_%d", name, os.Getpid(), seq.Add(1))
	return u.String()
}

// Cluster is a throwaway PostgreSQL cluster of one test
// (scripts/pg-throwaway.sh), stopped when the test ends.
type Cluster struct {
	Base string // postgres://postgres@127.0.0.1:PORT
	dir  string
	t    testing.TB
}

// Start starts a cluster of the test's own, so that it can stop and
// restart it without disturbing other tests. It needs what Base needs:
// Env set (the sign that this machine runs PostgreSQL tests).
func Start(t testing.TB) *Cluster {
	t.Helper()
	Base(t)
	dir, err := os.MkdirTemp("", "c2flow-pg-")
	if err != nil {
		t.Fatal(err)
	}
	c := &Cluster{dir: dir, t: t}
	out, err := c.script("start")
	if err != nil {
		os.RemoveAll(dir)
		t.Fatal(err)
	}
	t.Cleanup(func() {
		c.script("stop")
		os.RemoveAll(dir)
	})
	c.Base = strings.TrimPrefix(strings.TrimSpace(out), "export "+Env+"=")
	return c
}

// Restart stops the cluster (pg_ctl stop -m fast: every connection is
// cut), waits down for the given time and starts it again on its port.
func (c *Cluster) Restart(down time.Duration) {
	c.t.Helper()
	if _, err := c.script("stop"); err != nil {
		c.t.Fatal(err)
	}
	time.Sleep(down)
	if _, err := c.script("restart"); err != nil {
		c.t.Fatal(err)
	}
}

func (c *Cluster) script(verb string) (string, error) {
	_, file, _, _ := runtime.Caller(0)
	script := filepath.Join(filepath.Dir(file), "..", "..", "scripts", "pg-throwaway.sh")
	out, err := exec.Command(script, verb, c.dir).Output()
	if err != nil {
		var stderr string
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		return "", fmt.Errorf("pg-throwaway.sh %s %s: %w: %s", verb, c.dir, err, stderr)
	}
	return string(out), nil
}
