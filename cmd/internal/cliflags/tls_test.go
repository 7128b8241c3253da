package cliflags

import (
	"context"
	"errors"
	"flag"
	"io"
	"log/slog"
	"net"
	"strings"
	"testing"

	"go.temporal.io/sdk/client"

	"github.com/c2flow/c2flow/internal/pki"
	"github.com/c2flow/c2flow/internal/pki/pkitest"
)

// parseTemporal registers the Temporal flags and parses args.
func parseTemporal(t *testing.T, args ...string) Temporal {
	t.Helper()
	var tf Temporal
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	tf.Add(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return tf
}

// The connection's settings come from Temporal CLI's variables (current
// names first, then the older ones), and flags override them.
func TestTemporalFlagsFromEnv(t *testing.T) {
	t.Setenv("TEMPORAL_ADDRESS", "temporal.example:7233")
	t.Setenv("TEMPORAL_NAMESPACE", "provers")
	t.Setenv(EnvTLSCert, "env-cert.pem")
	t.Setenv("TEMPORAL_TLS_KEY", "legacy-key.pem")
	t.Setenv("TEMPORAL_TLS_CA", "legacy-ca.pem")
	t.Setenv(EnvTLSCA, "")
	t.Setenv(EnvTLSServerName, "frontend.example")
	t.Setenv(EnvAPIKey, "env-key")
	t.Setenv(EnvTLS, "true")
	tf := parseTemporal(t)
	want := TemporalAuth{CertFile: "env-cert.pem", KeyFile: "legacy-key.pem", CAFile: "legacy-ca.pem",
		ServerName: "frontend.example", APIKey: "env-key", TLS: "true"}
	if tf.Address != "temporal.example:7233" || tf.Namespace != "provers" || tf.Auth != want {
		t.Fatalf("from the environment: %+v", tf)
	}
	tf = parseTemporal(t, "--address", "a:1", "--namespace", "n", "--tls-cert", "c.pem", "--tls-key", "k.pem",
		"--tls-ca", "ca.pem", "--tls-server-name", "s", "--api-key", "flag-key", "--tls=false")
	want = TemporalAuth{CertFile: "c.pem", KeyFile: "k.pem", CAFile: "ca.pem", ServerName: "s", APIKey: "flag-key", TLS: "false"}
	if tf.Address != "a:1" || tf.Namespace != "n" || tf.Auth != want {
		t.Fatalf("flags over the environment: %+v", tf)
	}
}

// What the SDK gets: plaintext by default, TLS with the certificate and
// CA given, TLS for an API key.
func TestTemporalAuthApply(t *testing.T) {
	ca := pkitest.NewCA(t, "ca")
	cert, key := ca.Issue("worker", pki.Client)
	var o client.Options
	if err := (&TemporalAuth{}).apply(&o); err != nil || o.ConnectionOptions.TLS != nil || o.Credentials != nil {
		t.Fatalf("zero value: TLS %v, credentials %v, %v", o.ConnectionOptions.TLS, o.Credentials, err)
	}
	o = client.Options{}
	if err := (&TemporalAuth{CertFile: cert, KeyFile: key, CAFile: ca.CertFile, ServerName: "frontend"}).apply(&o); err != nil {
		t.Fatal(err)
	}
	c := o.ConnectionOptions.TLS
	if c == nil || len(c.Certificates) != 1 || c.RootCAs == nil || c.ServerName != "frontend" {
		t.Fatalf("mTLS: %+v", c)
	}
	o = client.Options{}
	if err := (&TemporalAuth{APIKey: "k"}).apply(&o); err != nil {
		t.Fatal(err)
	}
	if o.ConnectionOptions.TLS == nil || o.ConnectionOptions.TLS.RootCAs != nil || o.Credentials == nil {
		t.Fatalf("API key: TLS %+v, credentials %v", o.ConnectionOptions.TLS, o.Credentials)
	}
	o = client.Options{}
	if err := (&TemporalAuth{TLS: "1"}).apply(&o); err != nil || o.ConnectionOptions.TLS == nil {
		t.Fatalf("--tls alone: %v, %v", o.ConnectionOptions.TLS, err)
	}
}

// Bad settings fail before any dial, naming what is wrong.
func TestTemporalAuthErrors(t *testing.T) {
	ca := pkitest.NewCA(t, "ca")
	cert, key := ca.Issue("worker", pki.Client)
	_, otherKey := ca.Issue("other", pki.Client)
	for _, c := range []struct {
		a    TemporalAuth
		want string
	}{
		{TemporalAuth{KeyFile: key}, "--tls-key ($TEMPORAL_TLS_CLIENT_KEY_PATH) without --tls-cert"},
		{TemporalAuth{CertFile: cert}, "--tls-cert ($TEMPORAL_TLS_CLIENT_CERT_PATH) without --tls-key"},
		{TemporalAuth{CertFile: cert + ".missing", KeyFile: key}, "client certificate (--tls-cert, $TEMPORAL_TLS_CLIENT_CERT_PATH): open " + cert + ".missing: no such file"},
		{TemporalAuth{CertFile: cert, KeyFile: key + ".missing"}, "client key (--tls-key, $TEMPORAL_TLS_CLIENT_KEY_PATH): open"},
		{TemporalAuth{CertFile: cert, KeyFile: otherKey}, "private key does not match public key"},
		{TemporalAuth{CAFile: key}, "server CA (--tls-ca, $TEMPORAL_TLS_SERVER_CA_CERT_PATH) " + key + " holds no PEM certificate"},
		{TemporalAuth{APIKey: "k", TLS: "false"}, "--api-key with --tls=false ($TEMPORAL_TLS=false): an API key is sent only over TLS"},
		{TemporalAuth{CAFile: ca.CertFile, TLS: "false"}, "contradicts the --tls-* flags"},
		{TemporalAuth{TLS: "maybe"}, `--tls ($TEMPORAL_TLS): "maybe" is neither true nor false`},
	} {
		var o client.Options
		err := c.a.apply(&o)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.a, err, c.want)
		}
	}
}

// A client with TLS at a plaintext server is told the server does not
// speak TLS (a listener that answers like an HTTP/2 server without TLS).
func TestDialPlaintextServerWithTLS(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			conn, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer conn.Close()
				conn.Read(make([]byte, 512))
				conn.Write([]byte("HTTP/1.1 400 Bad Request\r\n\r\n"))
			}()
		}
	}()
	tf := Temporal{Address: l.Addr().String(), Namespace: "default", Auth: TemporalAuth{TLS: "true"}}
	_, err = tf.Dial(context.Background(), slog.New(slog.NewTextHandler(io.Discard, nil)))
	var te *TLSError
	if !errors.As(err, &te) || !strings.Contains(err.Error(), "does not speak TLS") {
		t.Fatalf("TLS to a plaintext server: %v", err)
	}
}
