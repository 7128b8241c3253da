package main

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/c2flow/c2flow/batch"
	"github.com/c2flow/c2flow/cmd/internal/cliflags"
	"github.com/c2flow/c2flow/devstack"
	"github.com/c2flow/c2flow/internal/pki"
	"github.com/c2flow/c2flow/internal/pki/pkitest"
	"github.com/c2flow/c2flow/job"
	"github.com/c2flow/c2flow/scheme/testscheme"
	"github.com/c2flow/c2flow/scheme/testscheme/params"
	"github.com/c2flow/c2flow/scheme/testscheme/params/paramstest"
	"github.com/c2flow/c2flow/scheme/testscheme/porep"
	"github.com/c2flow/c2flow/scheme/testscheme/porep/poreptest"
	"github.com/c2flow/c2flow/scheme/testscheme/schemetest"
	"github.com/c2flow/c2flow/storage/s3test"
)

func TestMain(m *testing.M) { s3test.Main(m) }

// The secured production shape: Temporal's frontend serves mutual TLS, S3
// speaks HTTPS with a certificate of a private CA. A worker given its
// client certificate and the CA by flags proves a batch; a worker without
// a certificate, with one of another CA, in plaintext or not trusting the
// server's CA is refused with a message naming the problem; an S3 client
// without the CA is refused too.
func TestWorkerOverMutualTLS(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Temporal and S3 servers and proves a batch")
	}
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chdir(wd) })
	serverCA := pkitest.NewCA(t, "server-ca") // issues the servers' certificates
	clientCA := pkitest.NewCA(t, "client-ca") // issues the workers'
	otherCA := pkitest.NewCA(t, "other-ca")
	frontCert, frontKey := serverCA.Issue("temporal", pki.Server, "127.0.0.1")
	s3Cert, s3Key := serverCA.Issue("s3", pki.Server, "127.0.0.1")
	workerCert, workerKey := clientCA.Issue("worker", pki.Client)
	intruderCert, intruderKey := otherCA.Issue("intruder", pki.Client)

	temporal, err := devstack.Start(devstack.Options{DBFile: filepath.Join(t.TempDir(), "temporal.db"),
		TLS: &devstack.TLS{CertFile: frontCert, KeyFile: frontKey, ClientCAFile: clientCA.CertFile}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(temporal.Stop)
	s3 := s3test.StartTLS(t, s3Cert, s3Key, serverCA.CertFile)
	store := s3.Store("c2flow")
	keys := paramstest.Keys(t, "2KiB")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	ts := testscheme.New(params.Cache{Local: params.DirStore{Root: paramstest.Dir()}, Remote: store})
	if err := ts.EnsureKeys(ctx, keys.Profile.Name, true, io.Discard); err != nil {
		t.Fatal(err)
	}

	s3Flags := []string{"--s3-endpoint", s3.Endpoint(), "--s3-ca", serverCA.CertFile, "--s3-bucket", "c2flow",
		"--s3-access-key", s3.Access, "--s3-secret-key", s3.Secret}
	workerArgs := func(tlsFlags ...string) []string {
		return append(append([]string{"--address", temporal.Addr(), "--log-level", "error",
			"--profiles", "2KiB", "--params", t.TempDir()}, tlsFlags...), s3Flags...)
	}

	// Refused, each with what is wrong.
	for _, c := range []struct {
		name  string
		flags []string
		want  string
	}{
		{"plaintext", nil, "speaks TLS and this client dialed in plaintext"},
		{"no client certificate", []string{"--tls-ca", serverCA.CertFile}, "requires a client certificate (mutual TLS) and got none"},
		{"certificate of another CA", []string{"--tls-ca", serverCA.CertFile, "--tls-cert", intruderCert, "--tls-key", intruderKey},
			"refused the client certificate " + intruderCert + ": it is not signed by a CA the server trusts (unknown CA)"},
		{"server CA not trusted", []string{"--tls-cert", workerCert, "--tls-key", workerKey},
			"server certificate is not signed by a CA this client trusts: give its CA with --tls-ca"},
	} {
		err := run(ctx, workerArgs(c.flags...))
		var te *cliflags.TLSError
		if !errors.As(err, &te) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: worker: %v; want a TLS error saying %q", c.name, err, c.want)
		}
	}
	// S3 over HTTPS without its CA: the system's CAs do not vouch for it.
	noCA := cliflags.S3{Endpoint: s3.Endpoint(), Bucket: "c2flow", AccessKey: s3.Access, SecretKey: s3.Secret, PathStyle: true}
	if _, err := noCA.Open(ctx); err == nil || !strings.Contains(err.Error(), "is not signed by a CA this client trusts (give its CA with --s3-ca") {
		t.Errorf("S3 without its CA: %v", err)
	}

	// The right certificate: a worker proves a batch.
	wctx, stopWorker := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		done <- run(wctx, workerArgs("--tls-ca", serverCA.CertFile, "--tls-cert", workerCert, "--tls-key", workerKey))
	}()
	defer func() {
		stopWorker()
		if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("worker: %v", err)
		}
	}()
	tf := cliflags.Temporal{Address: temporal.Addr(), Namespace: temporal.Namespace(),
		Auth: cliflags.TemporalAuth{CertFile: workerCert, KeyFile: workerKey, CAFile: serverCA.CertFile}}
	c, err := tf.Dial(ctx, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c1s := []*porep.C1{poreptest.Sector(t, "2KiB", 201).C1(), poreptest.Sector(t, "2KiB", 202).C1()}
	var refs []job.Ref
	for _, c1 := range c1s {
		ref, err := schemetest.PutC1(ctx, store, c1)
		if err != nil {
			t.Fatal(err)
		}
		refs = append(refs, ref)
	}
	o := batch.Options{BatchID: "tls", MaxInFlight: 2}
	if _, err := batch.Submit(ctx, c, refs, o); err != nil {
		t.Fatal(err)
	}
	res, err := batch.Wait(ctx, c, o.BatchID, time.Second, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Sectors) != len(c1s) {
		t.Fatalf("batch result: %+v", res)
	}
	byID := map[uint64]*porep.C1{}
	for _, c1 := range c1s {
		byID[c1.SectorID] = c1
	}
	for _, r := range res.Sectors {
		if r.Status != job.StatusProved {
			t.Fatalf("sector %d: %s: %s", r.SectorID, r.Status, r.Error)
		}
		b, err := store.Get(ctx, r.C2Key)
		if err != nil {
			t.Fatal(err)
		}
		c2, err := testscheme.UnmarshalC2(b)
		if err != nil {
			t.Fatal(err)
		}
		if err := testscheme.VerifyC2(keys.VK, byID[r.SectorID].Statement(), c2); err != nil {
			t.Fatalf("sector %d: stored C2: %v", r.SectorID, err)
		}
	}
}
