package storage

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
)

// caBundleOption loads Config.CABundle: the CAs trusted for an HTTPS
// endpoint instead of the system's (as AWS_CA_BUNDLE, which the SDK reads
// itself when CABundle is empty).
func caBundleOption(path string) (config.LoadOptionsFunc, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("storage: CA bundle: %w", err)
	}
	if !x509.NewCertPool().AppendCertsFromPEM(b) {
		return nil, fmt.Errorf("storage: CA bundle %s holds no PEM certificate", path)
	}
	return config.WithCustomCABundle(bytes.NewReader(b)), nil
}

// certError reports whether err is a refused TLS certificate, either
// side's: nothing a retry changes.
func certError(err error) bool {
	var unknownCA x509.UnknownAuthorityError
	var hostErr x509.HostnameError
	var invalid x509.CertificateInvalidError
	var verify *tls.CertificateVerificationError
	var alert tls.AlertError
	var rec tls.RecordHeaderError
	return errors.As(err, &unknownCA) || errors.As(err, &hostErr) || errors.As(err, &invalid) ||
		errors.As(err, &verify) || errors.As(err, &alert) || errors.As(err, &rec)
}

// noRetryCertErrors stops the retryer on certificate errors, which it
// would otherwise retry as connection errors for about 20 s.
func noRetryCertErrors(err error) aws.Ternary {
	if certError(err) {
		return aws.FalseTernary
	}
	return aws.UnknownTernary
}

// certProblem says what is wrong when err is a TLS failure talking to
// endpoint; "" otherwise.
func certProblem(err error, endpoint string) string {
	var unknownCA x509.UnknownAuthorityError
	var hostErr x509.HostnameError
	var rec tls.RecordHeaderError
	switch {
	case errors.As(err, &unknownCA):
		return fmt.Sprintf("the certificate of %s is not signed by a CA this client trusts (give its CA with --s3-ca or $AWS_CA_BUNDLE)", endpoint)
	case errors.As(err, &hostErr):
		return fmt.Sprintf("the certificate of %s does not carry the endpoint's host name", endpoint)
	case errors.As(err, &rec):
		return fmt.Sprintf("%s does not speak TLS (use http://)", endpoint)
	case certError(err):
		return fmt.Sprintf("TLS with %s failed", endpoint)
	}
	return ""
}
