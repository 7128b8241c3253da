package storage_test

import (
	"bytes"
	"context"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/c2flow/c2flow/internal/pki"
	"github.com/c2flow/c2flow/internal/pki/pkitest"
	"github.com/c2flow/c2flow/storage"
	"github.com/c2flow/c2flow/storage/s3test"
)

// S3 over HTTPS with a private CA: trusted through Config.CABundle or
// $AWS_CA_BUNDLE, and refused, with what to do, without it.
func TestHTTPSWithPrivateCA(t *testing.T) {
	ca := pkitest.NewCA(t, "s3-ca")
	cert, key := ca.Issue("s3", pki.Server, "127.0.0.1")
	srv := s3test.StartTLS(t, cert, key, ca.CertFile)
	ctx := context.Background()
	st := srv.Store("c2flow") // Config.CABundle
	data := []byte("over https")
	if err := st.Put(ctx, "c1/1.json", data); err != nil {
		t.Fatal(err)
	}
	if got, err := st.Get(ctx, "c1/1.json"); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("get over https: %q, %v", got, err)
	}

	cfg := srv.Config("c2flow")
	cfg.CABundle = ""
	t.Setenv("AWS_CA_BUNDLE", ca.CertFile)
	byEnv, err := storage.Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := byEnv.CheckBucket(ctx); err != nil {
		t.Fatalf("CA from $AWS_CA_BUNDLE: %v", err)
	}

	t.Setenv("AWS_CA_BUNDLE", "") // the system's CAs only
	noCA, err := storage.Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	err = noCA.CheckBucket(ctx)
	if err == nil || !strings.Contains(err.Error(), "the certificate of "+srv.Endpoint()+" is not signed by a CA this client trusts (give its CA with --s3-ca or $AWS_CA_BUNDLE)") {
		t.Fatalf("without the CA: %v", err)
	}

	cfg.CABundle = key
	if _, err := storage.Open(ctx, cfg); err == nil || !strings.Contains(err.Error(), "CA bundle "+key+" holds no PEM certificate") {
		t.Fatalf("a CA bundle without certificates: %v", err)
	}
}

// A refused certificate is not retried: retrying does not change it.
func TestCertificateErrorNotRetried(t *testing.T) {
	var conns atomic.Int32
	srv := httptest.NewUnstartedServer(http.NotFoundHandler())
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the handshakes it refuses
	srv.StartTLS()                                   // its own certificate, which nobody trusts
	defer srv.Close()
	t.Setenv("AWS_CA_BUNDLE", "")
	st, err := storage.Open(context.Background(), storage.Config{Endpoint: srv.URL, Bucket: "b", AccessKey: "k", SecretKey: "s", PathStyle: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.CheckBucket(context.Background()); err == nil {
		t.Fatal("an untrusted server was accepted")
	}
	if n := conns.Load(); n != 1 {
		t.Fatalf("%d connections for one request refused for its certificate, want 1", n)
	}
}
