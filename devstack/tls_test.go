package devstack

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	taskqueuepb "go.temporal.io/api/taskqueue/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"

	"github.com/c2flow/c2flow/internal/pki"
	"github.com/c2flow/c2flow/internal/pki/pkitest"
)

// With TLS the frontend accepts only clients with a certificate of the
// client CA (and the server's own); its system worker and the Web UI get
// in too.
func TestMutualTLS(t *testing.T) {
	serverCA := pkitest.NewCA(t, "server-ca")
	clientCA := pkitest.NewCA(t, "client-ca")
	otherCA := pkitest.NewCA(t, "other-ca")
	cert, key := serverCA.Issue("frontend", pki.Server, "127.0.0.1")
	var log syncBuffer
	s, err := Start(Options{TLS: &TLS{CertFile: cert, KeyFile: key, ClientCAFile: clientCA.CertFile}, UI: "127.0.0.1:0", Log: &log, LogLevel: "warn"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()

	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(serverCA.CA.CertPEM())
	good, err := clientCA.CA.IssueTLS("worker", pki.Client)
	if err != nil {
		t.Fatal(err)
	}
	foreign, err := otherCA.CA.IssueTLS("intruder", pki.Client)
	if err != nil {
		t.Fatal(err)
	}
	dial := func(c *tls.Config) (client.Client, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		return client.DialContext(ctx, client.Options{HostPort: s.Addr(), ConnectionOptions: client.ConnectionOptions{TLS: c}})
	}
	for _, c := range []struct {
		name string
		tls  *tls.Config
		want string // in the error
	}{
		// Under TLS 1.3 the server's refusal of a client may reach gRPC
		// as a broken pipe: what the client is told is cliflags' test.
		{"plaintext", nil, ""},
		{"no client certificate", &tls.Config{RootCAs: roots}, ""},
		// Go's client offers no certificate the server's CA list does not
		// name; this one presents it anyway, for the server to judge.
		{"certificate of another CA", &tls.Config{RootCAs: roots, GetClientCertificate: func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
			return &foreign, nil
		}}, ""},
		{"server CA not trusted", &tls.Config{Certificates: []tls.Certificate{good}}, "certificate signed by unknown authority"},
	} {
		cl, err := dial(c.tls)
		if err == nil {
			cl.Close()
			t.Fatalf("%s: the server let the client in", c.name)
		}
		t.Logf("%s: %v", c.name, err)
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want it to say %q", c.name, err, c.want)
		}
	}

	for name, c := range map[string]*tls.Config{
		"client certificate": {RootCAs: roots, Certificates: []tls.Certificate{good}},
		"in-process client":  s.ClientTLS(),
	} {
		cl, err := dial(c)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		cl.Close()
	}

	// The system worker (schedules, batch operations) polls through the
	// same frontend with the server's own certificate.
	cl, err := dial(s.ClientTLS())
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		resp, err := cl.WorkflowService().DescribeTaskQueue(context.Background(), &workflowservice.DescribeTaskQueueRequest{
			Namespace: s.Namespace(), TaskQueue: &taskqueuepb.TaskQueue{Name: "temporal-sys-per-ns-tq", Kind: enumspb.TASK_QUEUE_KIND_NORMAL},
			TaskQueueType: enumspb.TASK_QUEUE_TYPE_WORKFLOW,
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.Pollers) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the system worker never polled; server log:\n%s", log.String())
		}
		time.Sleep(500 * time.Millisecond)
	}

	// The UI's API reaches the frontend with the server's own certificate,
	// and its own door requires what the frontend's does: HTTPS with a
	// client certificate of the client CA. A client without one gets
	// nothing, over HTTPS or plain HTTP (the UI bypassed mutual TLS).
	api := s.UIAddr() + "/api/v1/namespaces"
	viaHTTPS := func(certs ...tls.Certificate) (string, error) {
		c := &http.Client{Timeout: 20 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots, Certificates: certs}}}
		resp, err := c.Get("https://" + api)
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			return string(b), fmt.Errorf("%s", resp.Status)
		}
		return string(b), nil
	}
	if page, err := viaHTTPS(good); err != nil || !strings.Contains(page, `"`+s.Namespace()+`"`) {
		t.Fatalf("namespaces through the UI's API with a client certificate: %v %.300s", err, page)
	}
	if page, err := viaHTTPS(); err == nil || strings.Contains(page, s.Namespace()) {
		t.Errorf("the UI answered a client without a certificate: %.300s", page)
	}
	if page, err := viaHTTPS(foreign); err == nil || strings.Contains(page, s.Namespace()) {
		t.Errorf("the UI answered a client with another CA's certificate: %.300s", page)
	}
	if resp, err := http.Get("http://" + api); err == nil {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK || strings.Contains(string(b), s.Namespace()) {
			t.Errorf("the UI answered plain HTTP under mutual TLS: %s %.300s", resp.Status, b)
		}
	}
}

// Without TLS the Web UI binds loopback only, unless UIInsecure, which
// warns.
func TestUILoopbackOnly(t *testing.T) {
	_, err := Start(Options{UI: "0.0.0.0:0", LogLevel: "warn", Log: io.Discard})
	if err == nil || !strings.Contains(err.Error(), "--ui-insecure-listen") {
		t.Fatalf("a plain-HTTP UI on 0.0.0.0: %v, want a refusal naming --ui-insecure-listen", err)
	}
	var warn strings.Builder
	s, err := Start(Options{UI: "0.0.0.0:0", UIInsecure: true, Warn: &warn, LogLevel: "warn", Log: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	s.Stop()
	if !strings.Contains(warn.String(), "WARNING") {
		t.Errorf("no warning for an insecure UI: %q", warn.String())
	}
}

// Bad TLS options fail Start with a message naming the problem.
func TestTLSOptionErrors(t *testing.T) {
	ca := pkitest.NewCA(t, "ca")
	cert, key := ca.Issue("frontend", pki.Server, "frontend.example")
	_, otherKey := ca.Issue("other", pki.Server, "127.0.0.1")
	for _, c := range []struct {
		tls  TLS
		want string
	}{
		{TLS{CertFile: cert, KeyFile: key}, "client CA is required"},
		{TLS{CertFile: cert + ".missing", KeyFile: key, ClientCAFile: ca.CertFile}, "frontend certificate: open"},
		{TLS{CertFile: cert, KeyFile: otherKey, ClientCAFile: ca.CertFile}, "private key does not match public key"},
		{TLS{CertFile: cert, KeyFile: key, ClientCAFile: key}, "holds no PEM certificate"},
	} {
		s, err := Start(Options{TLS: &c.tls})
		if err == nil {
			s.Stop()
			t.Fatalf("%+v: started", c.tls)
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.tls, err, c.want)
		}
	}
}
