// Package pki issues X.509 certificates from a CA held in memory: the
// embedded Temporal server's own client identity (devstack), and the
// throwaway CAs of tests. Keys are ECDSA P-256.
package pki

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"time"
)

// CA is a certificate authority whose key never leaves memory.
type CA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pem  []byte
}

// validity of what this package issues: long enough for any server run.
const validity = 10 * 365 * 24 * time.Hour

// NewCA makes a self-signed CA named name.
func NewCA(name string) (*CA, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("pki: CA key: %w", err)
	}
	tmpl := &x509.Certificate{
		Subject:               pkix.Name{CommonName: name},
		NotBefore:             time.Now().Add(-time.Hour), // tolerate clock skew
		NotAfter:              time.Now().Add(validity),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
	}
	der, err := create(tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("pki: parse CA %s: %w", name, err)
	}
	return &CA{cert: cert, key: key, pem: pemBlock("CERTIFICATE", der)}, nil
}

// CertPEM is the CA's certificate, PEM-encoded: what a peer trusts.
func (ca *CA) CertPEM() []byte { return ca.pem }

// Usage says what an issued certificate may authenticate.
type Usage int

const (
	Server Usage = 1 << iota // a TLS server, named by the hosts given
	Client                   // a TLS client (mTLS)
)

// Issue makes a certificate for name with the given usages; hosts (IP
// addresses or DNS names) become its subject alternative names. It returns
// the certificate and its key, PEM-encoded (the key as PKCS #8).
func (ca *CA) Issue(name string, usage Usage, hosts ...string) (certPEM, keyPEM []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, fmt.Errorf("pki: key for %s: %w", name, err)
	}
	tmpl := &x509.Certificate{
		Subject:   pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour),
		NotAfter:  time.Now().Add(validity),
		KeyUsage:  x509.KeyUsageDigitalSignature,
	}
	if usage&Server != 0 {
		tmpl.ExtKeyUsage = append(tmpl.ExtKeyUsage, x509.ExtKeyUsageServerAuth)
	}
	if usage&Client != 0 {
		tmpl.ExtKeyUsage = append(tmpl.ExtKeyUsage, x509.ExtKeyUsageClientAuth)
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	der, err := create(tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		return nil, nil, err
	}
	kder, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, nil, fmt.Errorf("pki: encode key for %s: %w", name, err)
	}
	return pemBlock("CERTIFICATE", der), pemBlock("PRIVATE KEY", kder), nil
}

// IssueTLS is Issue as a tls.Certificate.
func (ca *CA) IssueTLS(name string, usage Usage, hosts ...string) (tls.Certificate, error) {
	c, k, err := ca.Issue(name, usage, hosts...)
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.X509KeyPair(c, k)
}

func create(tmpl, parent *x509.Certificate, pub *ecdsa.PublicKey, signer *ecdsa.PrivateKey) ([]byte, error) {
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return nil, fmt.Errorf("pki: serial: %w", err)
	}
	tmpl.SerialNumber = serial
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, pub, signer)
	if err != nil {
		return nil, fmt.Errorf("pki: sign %s: %w", tmpl.Subject.CommonName, err)
	}
	return der, nil
}

func pemBlock(typ string, der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})
}
