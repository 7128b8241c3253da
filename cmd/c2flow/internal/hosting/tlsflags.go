package hosting

import (
	"errors"
	"flag"
	"os"

	"github.com/c2flow/c2flow/devstack"
)

// addServerTLS registers the flags that make an embedded Temporal server's
// frontend serve mutual TLS. The function it returns gives nil when none
// is set.
func addServerTLS(fs *flag.FlagSet) func() (*devstack.TLS, error) {
	var t devstack.TLS
	fs.StringVar(&t.CertFile, "tls-cert", os.Getenv("C2FLOW_SERVER_TLS_CERT"), "serve Temporal's frontend with mutual TLS: its certificate (PEM) ($C2FLOW_SERVER_TLS_CERT)")
	fs.StringVar(&t.KeyFile, "tls-key", os.Getenv("C2FLOW_SERVER_TLS_KEY"), "private key (PEM) of --tls-cert ($C2FLOW_SERVER_TLS_KEY)")
	fs.StringVar(&t.ClientCAFile, "tls-client-ca", os.Getenv("C2FLOW_SERVER_TLS_CLIENT_CA"), "with --tls-cert: CA certificates (PEM) whose client certificates Temporal accepts; no other client gets in ($C2FLOW_SERVER_TLS_CLIENT_CA)")
	return func() (*devstack.TLS, error) {
		switch {
		case t == devstack.TLS{}:
			return nil, nil
		case t.CertFile == "" || t.KeyFile == "":
			return nil, errors.New("--tls-cert and --tls-key go together")
		case t.ClientCAFile == "":
			return nil, errors.New("--tls-cert needs --tls-client-ca: the frontend serves mutual TLS, and accepts the client certificates of these CAs only")
		}
		return &t, nil
	}
}

// tlsHint is what a client of the stack adds to its command line when the
// frontend serves mutual TLS.
func tlsHint(s *Stack) string {
	if s.Temporal.ClientTLS() == nil {
		return ""
	}
	return " --tls-cert CLIENT.pem --tls-key CLIENT-key.pem --tls-ca SERVER-CA.pem"
}
