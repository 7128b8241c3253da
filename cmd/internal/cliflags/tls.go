package cliflags

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"go.temporal.io/sdk/client"
)

// Environment variables of the Temporal connection, as Temporal's own CLI
// reads them (temporalio/cli, cliext/option-sets.yaml); the CLI's older
// names (TEMPORAL_TLS_CERT, TEMPORAL_TLS_KEY, TEMPORAL_TLS_CA) are read
// when the current ones are unset.
const (
	EnvTLS           = "TEMPORAL_TLS"
	EnvTLSCert       = "TEMPORAL_TLS_CLIENT_CERT_PATH"
	EnvTLSKey        = "TEMPORAL_TLS_CLIENT_KEY_PATH"
	EnvTLSCA         = "TEMPORAL_TLS_SERVER_CA_CERT_PATH"
	EnvTLSServerName = "TEMPORAL_TLS_SERVER_NAME"
	EnvAPIKey        = "TEMPORAL_API_KEY"
)

// TemporalAuth is how a Temporal connection is secured: mutual TLS, as a
// self-hosted cluster is secured, or an API key over TLS (Temporal Cloud).
// The zero value is plaintext without credentials.
type TemporalAuth struct {
	CertFile   string // client certificate (PEM), for mTLS
	KeyFile    string // its private key (PEM)
	CAFile     string // CAs trusted for the server's certificate (PEM); empty: the system's
	ServerName string // the name the server's certificate must carry; empty: the address's host
	APIKey     string
	// TLS is "true" or "false" (--tls), or empty: TLS is then on when any
	// of the above is set.
	TLS string
	// Config, when set by code, is used as is: the TLS of a client of an
	// in-process server (devstack.Server.ClientTLS).
	Config *tls.Config
}

// add registers the flags.
func (a *TemporalAuth) add(fs *flag.FlagSet) {
	fs.StringVar(&a.CertFile, "tls-cert", envFirst(EnvTLSCert, "TEMPORAL_TLS_CERT"), "client certificate (PEM) for mutual TLS with Temporal ($"+EnvTLSCert+")")
	fs.StringVar(&a.KeyFile, "tls-key", envFirst(EnvTLSKey, "TEMPORAL_TLS_KEY"), "private key (PEM) of --tls-cert ($"+EnvTLSKey+")")
	fs.StringVar(&a.CAFile, "tls-ca", envFirst(EnvTLSCA, "TEMPORAL_TLS_CA"), "CA certificates (PEM) trusted for Temporal's server certificate; empty: the system's ($"+EnvTLSCA+")")
	fs.StringVar(&a.ServerName, "tls-server-name", os.Getenv(EnvTLSServerName), "name Temporal's server certificate must carry; empty: the host of --address ($"+EnvTLSServerName+")")
	fs.StringVar(&a.APIKey, "api-key", "", "API key for Temporal (Temporal Cloud); implies TLS ($"+EnvAPIKey+")")
	fs.Var(boolString{&a.TLS}, "tls", "TLS to Temporal even without the --tls-* flags (server certificate checked against the system's CAs); on whenever a --tls-* flag or --api-key is set ($"+EnvTLS+")")
	// Set after registering, so that --help does not print the key as
	// the flag's default.
	a.APIKey = os.Getenv(EnvAPIKey)
	a.TLS = os.Getenv(EnvTLS)
}

// boolString is a boolean flag kept as text, so that "not given" differs
// from "false".
type boolString struct{ s *string }

func (b boolString) String() string {
	if b.s == nil {
		return ""
	}
	return *b.s
}
func (b boolString) Set(v string) error { *b.s = v; return nil }
func (b boolString) IsBoolFlag() bool   { return true }

// apply sets o's TLS and credentials. Its errors name the flag (and
// variable) at fault.
func (a *TemporalAuth) apply(o *client.Options) error {
	if a.Config != nil {
		o.ConnectionOptions.TLS = a.Config
		return nil
	}
	tlsFiles := a.CertFile != "" || a.KeyFile != "" || a.CAFile != "" || a.ServerName != ""
	on := tlsFiles || a.APIKey != ""
	if a.TLS != "" {
		v, err := strconv.ParseBool(a.TLS)
		if err != nil {
			return fmt.Errorf("--tls ($%s): %q is neither true nor false", EnvTLS, a.TLS)
		}
		switch {
		case !v && a.APIKey != "":
			return fmt.Errorf("--api-key with --tls=false ($%s=false): an API key is sent only over TLS", EnvTLS)
		case !v && tlsFiles:
			return fmt.Errorf("--tls=false ($%s=false) contradicts the --tls-* flags given", EnvTLS)
		}
		on = on || v
	}
	switch {
	case a.KeyFile != "" && a.CertFile == "":
		return fmt.Errorf("--tls-key ($%s) without --tls-cert ($%s): a client certificate needs both", EnvTLSKey, EnvTLSCert)
	case a.CertFile != "" && a.KeyFile == "":
		return fmt.Errorf("--tls-cert ($%s) without --tls-key ($%s): a client certificate needs both", EnvTLSCert, EnvTLSKey)
	}
	if a.APIKey != "" {
		o.Credentials = client.NewAPIKeyStaticCredentials(a.APIKey)
	}
	if !on {
		return nil
	}
	c := &tls.Config{ServerName: a.ServerName, MinVersion: tls.VersionTLS12}
	if a.CertFile != "" {
		cert, err := os.ReadFile(a.CertFile)
		if err != nil {
			return fmt.Errorf("client certificate (--tls-cert, $%s): %w", EnvTLSCert, err)
		}
		key, err := os.ReadFile(a.KeyFile)
		if err != nil {
			return fmt.Errorf("client key (--tls-key, $%s): %w", EnvTLSKey, err)
		}
		pair, err := tls.X509KeyPair(cert, key)
		if err != nil {
			return fmt.Errorf("client certificate %s and key %s: %w", a.CertFile, a.KeyFile, err)
		}
		c.Certificates = []tls.Certificate{pair}
	}
	if a.CAFile != "" {
		b, err := os.ReadFile(a.CAFile)
		if err != nil {
			return fmt.Errorf("server CA (--tls-ca, $%s): %w", EnvTLSCA, err)
		}
		c.RootCAs = x509.NewCertPool()
		if !c.RootCAs.AppendCertsFromPEM(b) {
			return fmt.Errorf("server CA (--tls-ca, $%s) %s holds no PEM certificate", EnvTLSCA, a.CAFile)
		}
	}
	o.ConnectionOptions.TLS = c
	return nil
}

// TLSError is a dial refused for transport security: the server or this
// client rejected the other's certificate, or one side speaks TLS and the
// other does not. Retrying does not help.
type TLSError struct {
	Problem string // what is wrong and what to do, for a person
	Err     error
}

func (e *TLSError) Error() string { return e.Problem + ": " + e.Err.Error() }
func (e *TLSError) Unwrap() error { return e.Err }

// explain turns a failed dial of addr whose cause is TLS into a *TLSError
// saying what was refused; other errors come back as they are. c is the
// TLS the dial used (nil: plaintext). gRPC reports handshake failures as
// text, and under TLS 1.3 a server refuses a client certificate only after
// the client's side of the handshake is done, so gRPC may see no more than
// a broken pipe: then a probe (a TLS handshake, no data sent) learns what
// the server says.
func (a *TemporalAuth) explain(ctx context.Context, addr string, c *tls.Config, err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	has := func(s ...string) bool {
		for _, x := range s {
			if strings.Contains(msg, x) {
				return true
			}
		}
		return false
	}
	transport := has("broken pipe", "connection reset", "EOF", "server preface", "handshake")
	if transport && ctx.Err() == nil && !has("remote error: tls:", "x509:") {
		probeCfg := c
		if probeCfg == nil {
			// Does the server speak TLS at all? Only the handshake's
			// first messages matter here, not whom the server is.
			probeCfg = &tls.Config{InsecureSkipVerify: true}
		}
		if perr := probe(ctx, addr, probeCfg); perr != nil && (c != nil || strings.Contains(perr.Error(), "remote error: tls:")) {
			msg += " (probe: " + perr.Error() + ")"
		} else if perr == nil && c == nil {
			msg += " (probe: the server completed a TLS handshake)"
		}
	}
	certName := "no client certificate"
	if a.CertFile != "" {
		certName = "the client certificate " + a.CertFile
	}
	var p string
	switch {
	case c != nil && has("tls: certificate required") && a.CertFile == "":
		p = fmt.Sprintf("the Temporal server requires a client certificate (mutual TLS) and got none: give --tls-cert and --tls-key ($%s, $%s)", EnvTLSCert, EnvTLSKey)
	case c != nil && has("tls: unknown certificate authority", "tls: bad certificate", "tls: certificate required"):
		p = fmt.Sprintf("the Temporal server refused %s: it is not signed by a CA the server trusts (unknown CA)", certName)
	case c != nil && has("tls: expired certificate"):
		p = fmt.Sprintf("the Temporal server refused %s: expired", certName)
	case c != nil && has("tls: unsupported certificate", "tls: certificate revoked", "tls: access denied"):
		p = fmt.Sprintf("the Temporal server refused %s", certName)
	case has("certificate signed by unknown authority"):
		p = fmt.Sprintf("Temporal's server certificate is not signed by a CA this client trusts: give its CA with --tls-ca ($%s)", EnvTLSCA)
	case has("x509: certificate is valid for", "x509: cannot validate certificate"):
		p = fmt.Sprintf("Temporal's server certificate does not carry the name dialed: set --tls-server-name ($%s) to a name it carries", EnvTLSServerName)
	case c != nil && has("first record does not look like a TLS handshake", "server gave HTTP response"):
		p = "the Temporal server does not speak TLS: drop --tls, the --tls-* flags and --api-key, or check --address"
	case c == nil && has("(probe: "):
		p = fmt.Sprintf("the Temporal server speaks TLS and this client dialed in plaintext: give --tls-ca and, for mutual TLS, --tls-cert and --tls-key ($%s, $%s, $%s)", EnvTLSCA, EnvTLSCert, EnvTLSKey)
	default:
		return err
	}
	return &TLSError{Problem: p, Err: errors.New(msg)}
}

// probe makes a TLS handshake with addr, then waits briefly for the
// server's verdict on this client (an alert) and returns it, or the
// handshake's error; nil when the server kept the connection.
func probe(ctx context.Context, addr string, c *tls.Config) error {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	c = c.Clone()
	if c.ServerName == "" {
		if host, _, err := net.SplitHostPort(addr); err == nil {
			c.ServerName = host // as gRPC names the server
		}
	}
	conn, err := (&tls.Dialer{Config: c}).DialContext(ctx, "tcp", addr)
	if err != nil {
		return err
	}
	defer conn.Close()
	deadline, _ := ctx.Deadline()
	conn.SetReadDeadline(deadline)
	if _, err := conn.Read(make([]byte, 1)); err != nil && strings.Contains(err.Error(), "remote error") {
		return err
	}
	return nil
}

// envFirst is the first of the variables set.
func envFirst(names ...string) string {
	for _, n := range names {
		if v := os.Getenv(n); v != "" {
			return v
		}
	}
	return ""
}
