package gateway

import (
	"bytes"
	"crypto/tls"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A second gateway on a live Unix socket fails, naming it, and leaves the
// first one's socket; a listener removes its socket file on Close only
// while the path is still its own.
func TestUnixSocketOwner(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "cuzk.sock")
	first, err := Listen("unix://"+sock, ListenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		for {
			c, err := first.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	if l, err := Listen("unix://"+sock, ListenOptions{}); err == nil || !strings.Contains(err.Error(), sock) || !strings.Contains(err.Error(), "in use") {
		if l != nil {
			l.Close()
		}
		t.Fatalf("a second gateway on the live socket %s: %v", sock, err)
	}
	if c, err := net.Dial("unix", sock); err != nil {
		t.Fatalf("the first gateway's socket after the second's try: %v", err)
	} else {
		c.Close()
	}

	// The path taken over meanwhile (the first's file removed by hand, a
	// new server on it): the first's Close leaves the new socket.
	if err := os.Remove(sock); err != nil {
		t.Fatal(err)
	}
	second, err := Listen("unix://"+sock, ListenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer second.Close()
	first.Close()
	if _, err := os.Lstat(sock); err != nil {
		t.Fatalf("closing the first listener removed the second's socket: %v", err)
	}
	second.Close()
	if _, err := os.Lstat(sock); !os.IsNotExist(err) {
		t.Errorf("the owner's Close left its socket: %v", err)
	}
}

// TLS without client certificates beyond loopback warns as
// --insecure-listen does (anyone can cancel a job); with a client CA, or
// on loopback, it does not.
func TestListenTLSWithoutClientCAWarns(t *testing.T) {
	for _, c := range []struct {
		addr string
		auth tls.ClientAuthType
		warn bool
	}{
		{"0.0.0.0:0", tls.NoClientCert, true},
		{"0.0.0.0:0", tls.VerifyClientCertIfGiven, true},
		{"0.0.0.0:0", tls.RequireAndVerifyClientCert, false},
		{"127.0.0.1:0", tls.NoClientCert, false},
	} {
		var log bytes.Buffer
		l, err := Listen(c.addr, ListenOptions{TLS: &tls.Config{ClientAuth: c.auth}, Log: slog.New(slog.NewTextHandler(&log, nil))})
		if err != nil {
			t.Fatal(err)
		}
		l.Close()
		warned := strings.Contains(log.String(), "level=WARN") && strings.Contains(log.String(), "--grpc-client-ca") && strings.Contains(log.String(), "CancelProof")
		if warned != c.warn {
			t.Errorf("TLS on %s, client auth %v: warned %v, want %v: %s", c.addr, c.auth, warned, c.warn, log.String())
		}
	}
}

// In a container the loopback rule follows the address the port is
// published on (compose's ${C2FLOW_GATEWAY_BIND}), not the container's own
// 0.0.0.0: published on loopback it serves plaintext, published off the
// box it needs TLS. Outside a container Published is refused: there the
// listen address is where clients reach it.
func TestListenPublished(t *testing.T) {
	defer func(f func() bool) { inContainer = f }(inContainer)
	inContainer = func() bool { return true }
	l, err := Listen("0.0.0.0:0", ListenOptions{Published: "127.0.0.1"})
	if err != nil {
		t.Fatalf("in a container, 0.0.0.0 published on 127.0.0.1: %v", err)
	}
	l.Close()
	for _, pub := range []string{"10.0.0.5", "0.0.0.0", "::"} {
		if l, err := Listen("0.0.0.0:0", ListenOptions{Published: pub}); err == nil || !strings.Contains(err.Error(), "--grpc-tls-cert") || !strings.Contains(err.Error(), pub) {
			if l != nil {
				l.Close()
			}
			t.Errorf("in a container, plaintext published on %s: %v; want a refusal naming it and TLS", pub, err)
		}
	}
	l, err = Listen("0.0.0.0:0", ListenOptions{Published: "10.0.0.5", TLS: &tls.Config{ClientAuth: tls.RequireAndVerifyClientCert}})
	if err != nil {
		t.Fatalf("in a container, TLS published on 10.0.0.5: %v", err)
	}
	l.Close()

	inContainer = func() bool { return false }
	if l, err := Listen("0.0.0.0:0", ListenOptions{Published: "127.0.0.1"}); err == nil || !strings.Contains(err.Error(), "not in a container") {
		if l != nil {
			l.Close()
		}
		t.Errorf("outside a container, 0.0.0.0 said to be published on 127.0.0.1: %v; want a refusal", err)
	}
}
