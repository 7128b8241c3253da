package devstack

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	uiconfig "github.com/temporalio/ui-server/v2/server/config"
	"go.temporal.io/server/common/config"

	"github.com/c2flow/c2flow/internal/pki"
)

// TLS makes the frontend (gRPC and HTTP API) serve mutual TLS: a client
// must present a certificate signed by one of ClientCAFile's CAs, else the
// handshake fails. Internal traffic (history, matching, membership) stays
// on the IP the server binds.
type TLS struct {
	CertFile string // the frontend's certificate (chain), PEM; it must name Options.IP or a DNS name
	KeyFile  string // its private key, PEM
	// ClientCAFile holds the PEM CAs whose client certificates the
	// frontend accepts. Required: TLS here always means mutual TLS.
	ClientCAFile string
}

// serverTLS is the frontend's TLS as built for one server: the server
// config and the client identity of the server's own clients.
type serverTLS struct {
	root   config.RootTLS
	client *tls.Config
	ui     uiconfig.TLS // the Web UI's client side, as the in-process clients'
	// uiListener is the Web UI's HTTPS: the frontend's certificate, and
	// client certificates of the frontend's client CAs required.
	uiListener *tls.Config
}

// build checks the files and makes the server's TLS configuration. The
// server's own clients (its system worker, and in-process clients through
// Server.ClientTLS) use a certificate from a CA made here in memory and
// trusted only by this server: its key is never written anywhere, so no one
// else can hold such a certificate. They pin the frontend's certificate.
func (t *TLS) build(ip string) (*serverTLS, error) {
	if t.CertFile == "" || t.KeyFile == "" {
		return nil, errors.New("devstack TLS: the frontend certificate and key are both required")
	}
	if t.ClientCAFile == "" {
		return nil, errors.New("devstack TLS: a client CA is required (the frontend requires client certificates)")
	}
	certPEM, err := os.ReadFile(t.CertFile)
	if err != nil {
		return nil, fmt.Errorf("devstack TLS: frontend certificate: %w", err)
	}
	keyPEM, err := os.ReadFile(t.KeyFile)
	if err != nil {
		return nil, fmt.Errorf("devstack TLS: frontend key: %w", err)
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, fmt.Errorf("devstack TLS: frontend certificate %s and key %s: %w", t.CertFile, t.KeyFile, err)
	}
	leaf := pair.Leaf
	serverName := ip
	if leaf.VerifyHostname(ip) != nil {
		if len(leaf.DNSNames) == 0 {
			return nil, fmt.Errorf("devstack TLS: frontend certificate %s names neither %s nor a DNS name", t.CertFile, ip)
		}
		serverName = leaf.DNSNames[0]
	}
	clientCAs, err := os.ReadFile(t.ClientCAFile)
	if err != nil {
		return nil, fmt.Errorf("devstack TLS: client CA: %w", err)
	}
	clientPool := x509.NewCertPool()
	if !clientPool.AppendCertsFromPEM(clientCAs) {
		return nil, fmt.Errorf("devstack TLS: client CA %s holds no PEM certificate", t.ClientCAFile)
	}
	ca, err := pki.NewCA("c2flow embedded server internal CA")
	if err != nil {
		return nil, err
	}
	ownCert, ownKey, err := ca.Issue("c2flow embedded server internal client", pki.Client)
	if err != nil {
		return nil, err
	}
	own, err := tls.X509KeyPair(ownCert, ownKey)
	if err != nil {
		return nil, err
	}
	leafPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: leaf.Raw})
	pinned := x509.NewCertPool()
	pinned.AddCert(leaf)
	b64 := base64.StdEncoding.EncodeToString
	// Absolute paths: the embedded S3 server may change the working
	// directory, and the server rereads the files.
	certFile, err := filepath.Abs(t.CertFile)
	if err != nil {
		return nil, err
	}
	keyFile, err := filepath.Abs(t.KeyFile)
	if err != nil {
		return nil, err
	}
	var root config.RootTLS
	root.Frontend.Server = config.ServerTLS{
		CertFile: certFile, KeyFile: keyFile, RequireClientAuth: true,
		ClientCAData: []string{b64(clientCAs), b64(ca.CertPEM())},
	}
	root.SystemWorker = config.WorkerTLS{
		CertData: b64(ownCert), KeyData: b64(ownKey),
		Client: config.ClientTLS{ServerName: serverName, RootCAData: []string{b64(leafPEM)}},
	}
	return &serverTLS{root: root, client: &tls.Config{
		Certificates: []tls.Certificate{own}, RootCAs: pinned, ServerName: serverName, MinVersion: tls.VersionTLS12,
	}, ui: uiconfig.TLS{
		CertData: b64(ownCert), KeyData: b64(ownKey), CaData: b64(leafPEM),
		ServerName: serverName, EnableHostVerification: true,
	}, uiListener: &tls.Config{
		Certificates: []tls.Certificate{pair}, ClientCAs: clientPool,
		ClientAuth: tls.RequireAndVerifyClientCert, MinVersion: tls.VersionTLS12,
	}}, nil
}

// ClientTLS is the TLS configuration of an in-process client of this
// server (its certificate is accepted by this server only); nil when the
// frontend serves plaintext. It is for the process that started the
// server, such as `c2flow dev`'s own worker; other clients bring their own
// certificates.
func (s *Server) ClientTLS() *tls.Config {
	if s.tls == nil {
		return nil
	}
	return s.tls.Clone()
}
