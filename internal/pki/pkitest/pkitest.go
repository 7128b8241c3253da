// Package pkitest writes throwaway CAs and certificates for tests, as PEM
// files in the test's temporary directory.
package pkitest

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/c2flow/c2flow/internal/pki"
)

// CA is a throwaway CA whose certificate is in CertFile.
type CA struct {
	CA       *pki.CA
	CertFile string
	name     string
	dir      string
	t        testing.TB
}

// NewCA makes a CA named name.
func NewCA(t testing.TB, name string) *CA {
	t.Helper()
	ca, err := pki.NewCA(name)
	if err != nil {
		t.Fatal(err)
	}
	c := &CA{CA: ca, name: name, dir: t.TempDir(), t: t}
	c.CertFile = c.write(name+"-ca.pem", ca.CertPEM())
	return c
}

// Issue writes a certificate for name and its key; hosts are its subject
// alternative names (IP addresses or DNS names).
func (c *CA) Issue(name string, usage pki.Usage, hosts ...string) (certFile, keyFile string) {
	c.t.Helper()
	cert, key, err := c.CA.Issue(name, usage, hosts...)
	if err != nil {
		c.t.Fatal(err)
	}
	return c.write(name+".pem", cert), c.write(name+"-key.pem", key)
}

func (c *CA) write(name string, b []byte) string {
	c.t.Helper()
	p := filepath.Join(c.dir, name)
	if err := os.WriteFile(p, b, 0o600); err != nil {
		c.t.Fatal(err)
	}
	return p
}
