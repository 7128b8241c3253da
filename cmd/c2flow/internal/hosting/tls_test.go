package hosting

import (
	"context"
	"io"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/c2flow/c2flow/batch"
	"github.com/c2flow/c2flow/cmd/c2flow/internal/cli"
	"github.com/c2flow/c2flow/cmd/c2flow/internal/pipeline"
	"github.com/c2flow/c2flow/cmd/internal/cliflags"
	"github.com/c2flow/c2flow/internal/pki"
	"github.com/c2flow/c2flow/internal/pki/pkitest"
	"github.com/c2flow/c2flow/scheme/testscheme/params/paramstest"
)

// `c2flow dev --tls-cert --tls-key --tls-client-ca` serves Temporal with
// mutual TLS: its own worker gets in, a CLI command with a client
// certificate of the client CA sees it, one without is refused.
func TestDevMutualTLS(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the dev stack")
	}
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chdir(wd) }) // the embedded S3 server changes it
	serverCA := pkitest.NewCA(t, "server-ca")
	clientCA := pkitest.NewCA(t, "client-ca")
	cert, key := serverCA.Issue("temporal", pki.Server, "127.0.0.1")
	cliCert, cliKey := clientCA.Issue("operator", pki.Client)

	fs := cli.NewFlags("dev")
	var d StackFlags
	if err := d.Add(fs, StackDefaults{Dir: t.TempDir(), Port: 0, S3Addr: "127.0.0.1:0"}); err != nil {
		t.Fatal(err)
	}
	d.tls = addServerTLS(fs)
	if err := fs.Parse([]string{"--tls-cert", cert, "--tls-key", key, "--tls-client-ca", clientCA.CertFile,
		"--params", paramstest.Dir(), "--profiles", "2KiB"}); err != nil {
		t.Fatal(err)
	}
	paramstest.Keys(t, "2KiB") // made once, under the test cache's lock
	logs, err := d.OpenLogs("dev")
	if err != nil {
		t.Fatal(err)
	}
	defer logs.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	s, err := d.Start(ctx, []string{"2KiB"}, logs, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	if h := tlsHint(s); !strings.Contains(h, "--tls-cert") {
		t.Errorf("the submit hint lacks the TLS flags: %q", h)
	}

	addr := s.Temporal.Addr()
	stdout := os.Stdout
	os.Stdout, _ = os.OpenFile(os.DevNull, os.O_WRONLY, 0) // the fleet table
	err = pipeline.RunFleet(ctx, []string{"--address", addr, "--tls-cert", cliCert, "--tls-key", cliKey, "--tls-ca", serverCA.CertFile})
	os.Stdout.Close()
	os.Stdout = stdout
	if err != nil {
		t.Fatalf("fleet with a client certificate: %v", err)
	}
	tf := cliflags.Temporal{Address: addr, Namespace: "default", Auth: cliflags.TemporalAuth{CertFile: cliCert, KeyFile: cliKey, CAFile: serverCA.CertFile}}
	c, err := tf.Dial(ctx, logs.Log)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// The worker registers its pollers as it starts: look until they show.
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(200 * time.Millisecond) {
		ps, err := batch.Fleet(ctx, c)
		if err != nil {
			t.Fatal(err)
		}
		if slices.ContainsFunc(ps, func(p batch.Poller) bool { return strings.Contains(p.Identity, s.Worker.ID()) }) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the dev stack's worker %s is not among the pollers: %+v", s.Worker.ID(), ps)
		}
	}
	err = pipeline.RunFleet(ctx, []string{"--address", addr, "--tls-ca", serverCA.CertFile})
	if err == nil || !strings.Contains(err.Error(), "requires a client certificate") {
		t.Fatalf("fleet without a client certificate: %v", err)
	}
}

// The server's TLS flags come as a set.
func TestServerTLSFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string // in the error; empty: TLS off
	}{
		{nil, ""},
		{[]string{"--tls-cert", "c.pem"}, "--tls-cert and --tls-key go together"},
		{[]string{"--tls-cert", "c.pem", "--tls-key", "k.pem"}, "--tls-cert needs --tls-client-ca"},
		{[]string{"--tls-client-ca", "ca.pem"}, "--tls-cert and --tls-key go together"},
	} {
		fs := cli.NewFlags("dev")
		get := addServerTLS(fs)
		if err := fs.Parse(c.args); err != nil {
			t.Fatal(err)
		}
		tls, err := get()
		switch {
		case c.want == "" && (err != nil || tls != nil):
			t.Errorf("%v: %+v, %v", c.args, tls, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%v: %v, want %q", c.args, err, c.want)
		}
	}
}
