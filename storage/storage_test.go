package storage_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/c2flow/c2flow/job"
	"github.com/c2flow/c2flow/storage"
	"github.com/c2flow/c2flow/storage/s3test"
)

func TestMain(m *testing.M) { s3test.Main(m) }

func TestRoundTripAndRange(t *testing.T) {
	srv := s3test.Start(t)
	st := srv.Store("c2flow")
	ctx := context.Background()
	data := []byte("hello c2flow, a small object")
	if err := st.Put(ctx, "c1/1.json", data); err != nil {
		t.Fatal(err)
	}
	got, err := st.Get(ctx, "c1/1.json")
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("get: %q, %v", got, err)
	}
	part, err := st.GetRange(ctx, "c1/1.json", 6, 6)
	if err != nil || string(part) != "c2flow" {
		t.Fatalf("range: %q, %v", part, err)
	}
	if _, err := st.Get(ctx, "c1/2.json"); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("missing key: %v", err)
	}
	keys, err := st.List(ctx, "c1/")
	if err != nil || len(keys) != 1 || keys[0] != "c1/1.json" {
		t.Fatalf("list: %v, %v", keys, err)
	}
}

// objectFile finds an object's file in the server's data directory.
func objectFile(t *testing.T, srv *s3test.Server, bucket, key string) string {
	p := filepath.Join(srv.Dir, bucket, filepath.FromSlash(key))
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("object file: %v", err)
	}
	return p
}

func TestCorruptObjectIsDetected(t *testing.T) {
	srv := s3test.Start(t)
	st := srv.Store("c2flow")
	ctx := context.Background()
	data := bytes.Repeat([]byte("proof"), 1000)
	if err := st.Put(ctx, "c2/7.proof", data); err != nil {
		t.Fatal(err)
	}
	f := objectFile(t, srv, "c2flow", "c2/7.proof")
	b, _ := os.ReadFile(f)
	b[100] ^= 0xff // same size, one flipped byte: bit rot on the server's disk
	if err := os.WriteFile(f, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Get(ctx, "c2/7.proof"); !errors.Is(err, storage.ErrChecksum) {
		t.Fatalf("corrupt object read: %v", err)
	}
}

func TestConditionalPut(t *testing.T) {
	srv := s3test.Start(t)
	st := srv.Store("c2flow")
	ctx := context.Background()
	a, b := []byte("proof A"), []byte("proof B")
	m := storage.Manifest{Ref: job.Ref{ProverID: "aa", SectorID: 1, InputDigest: "d", Proof: "2KiB"}, Partitions: 1}
	key := storage.C2Key(m.Ref)
	created, err := st.PutIfAbsent(ctx, key, a)
	if err != nil || !created {
		t.Fatalf("first write: created=%v err=%v", created, err)
	}
	created, err = st.PutIfAbsent(ctx, key, a)
	if err != nil || created {
		t.Fatalf("same bytes again: created=%v err=%v", created, err)
	}
	if _, err := st.PutIfAbsent(ctx, key, b); !errors.Is(err, storage.ErrExists) {
		t.Fatalf("different bytes: %v", err)
	}
	got, _ := st.Get(ctx, key)
	if !bytes.Equal(got, a) {
		t.Fatal("the stored proof was overwritten")
	}
	stored, created, _, err := st.PutC2(ctx, m, b, nil)
	if err != nil || created || !bytes.Equal(stored, a) {
		t.Fatalf("PutC2 over an existing proof: created=%v err=%v", created, err)
	}
}

func randomFile(t *testing.T, size int) (string, [32]byte) {
	p := filepath.Join(t.TempDir(), "pk")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.New()
	if _, err := io.CopyN(io.MultiWriter(f, h), rand.Reader, int64(size)); err != nil {
		t.Fatal(err)
	}
	f.Close()
	var sum [32]byte
	copy(sum[:], h.Sum(nil))
	return p, sum
}

func fileSum(t *testing.T, p string) [32]byte {
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return sha256.Sum256(b)
}

// A proving-key-sized object goes up in parts and comes down in parallel
// ranges; the log line gives loopback MiB/s.
func TestMultipartLargeObject(t *testing.T) {
	srv := s3test.Start(t)
	st := srv.Store("c2flow")
	ctx := context.Background()
	const size = 130 << 20
	src, want := randomFile(t, size)
	t0 := time.Now()
	if err := st.UploadFile(ctx, "params/x/y/pk", src); err != nil {
		t.Fatal(err)
	}
	up := time.Since(t0)
	dst := filepath.Join(t.TempDir(), "cache", "pk")
	t1 := time.Now()
	if err := st.DownloadFile(ctx, "params/x/y/pk", dst); err != nil {
		t.Fatal(err)
	}
	down := time.Since(t1)
	if fileSum(t, dst) != want {
		t.Fatal("downloaded file differs")
	}
	t.Logf("%d MiB: upload %.0f MiB/s, download %.0f MiB/s (loopback)", size>>20, float64(size>>20)/up.Seconds(), float64(size>>20)/down.Seconds())
	// A corrupted part on the server is caught and the cache file never appears.
	f := objectFile(t, srv, "c2flow", "params/x/y/pk")
	fh, _ := os.OpenFile(f, os.O_RDWR, 0)
	fh.WriteAt([]byte{0xde, 0xad}, 50<<20)
	fh.Close()
	dst2 := filepath.Join(t.TempDir(), "pk")
	if err := st.DownloadFile(ctx, "params/x/y/pk", dst2); !errors.Is(err, storage.ErrChecksum) {
		t.Fatalf("corrupt download: %v", err)
	}
	if _, err := os.Stat(dst2); !os.IsNotExist(err) {
		t.Fatal("a corrupt download left a cache file")
	}
}

// The server is killed during a transfer and comes back a few seconds
// later: the SDK's retryer carries the transfer through.
func TestServerRestartMidTransfer(t *testing.T) {
	srv := s3test.Start(t)
	st := srv.Store("c2flow")
	ctx := context.Background()
	src, want := randomFile(t, 96<<20)
	done := make(chan error, 1)
	go func() { done <- st.UploadFile(ctx, "params/r/s/pk", src) }()
	time.Sleep(150 * time.Millisecond)
	srv.Stop()
	time.Sleep(2 * time.Second)
	srv.Restart()
	if err := <-done; err != nil {
		t.Fatalf("upload across a restart: %v", err)
	}
	dst := filepath.Join(t.TempDir(), "pk")
	go func() { done <- st.DownloadFile(ctx, "params/r/s/pk", dst) }()
	time.Sleep(100 * time.Millisecond)
	srv.Stop()
	time.Sleep(2 * time.Second)
	srv.Restart()
	if err := <-done; err != nil {
		t.Fatalf("download across a restart: %v", err)
	}
	if fileSum(t, dst) != want {
		t.Fatal("file differs after restarts")
	}
	// Small requests too: the server is down when the request starts.
	srv.Stop()
	go func() { time.Sleep(2 * time.Second); srv.Restart() }()
	if err := st.Put(ctx, "c1/9.json", []byte("{}")); err != nil {
		t.Fatalf("put while the server restarts: %v", err)
	}
}

func TestWrongCredentials(t *testing.T) {
	srv := s3test.Start(t)
	srv.Store("c2flow")
	cfg := srv.Config("c2flow")
	cfg.SecretKey = "wrong"
	st, err := storage.Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	err = st.Put(context.Background(), "c1/1.json", []byte("x"))
	if !errors.Is(err, storage.ErrAuth) || !strings.Contains(err.Error(), "check the access key") {
		t.Fatalf("wrong secret: %v", err)
	}
	if el := time.Since(t0); el > 5*time.Second {
		t.Logf("auth failure took %v: it should fail fast, not retry", el)
	}
	cfg = srv.Config("no-such-bucket")
	st, _ = storage.Open(context.Background(), cfg)
	if _, err := st.Get(context.Background(), "c1/1.json"); !errors.Is(err, storage.ErrNoBucket) {
		t.Fatalf("missing bucket: %v", err)
	}
}

// A stored C2 that fails its checksum (bit rot on the server's disk) or
// the caller's keep check is replaced in place by the new proof.
func TestPutC2ReplacesACorruptOrRejectedProof(t *testing.T) {
	srv := s3test.Start(t)
	st := srv.Store("c2flow")
	ctx := context.Background()
	m := storage.Manifest{Ref: job.Ref{ProverID: "aa", SectorID: 2, InputDigest: "d", Proof: "2KiB"}, Partitions: 1}
	key := storage.C2Key(m.Ref)
	a, b, c := bytes.Repeat([]byte("A"), 1000), bytes.Repeat([]byte("B"), 1000), bytes.Repeat([]byte("C"), 1000)
	if _, _, _, err := st.PutC2(ctx, m, a, nil); err != nil {
		t.Fatal(err)
	}
	f := objectFile(t, srv, "c2flow", key)
	rot, _ := os.ReadFile(f)
	rot[500] ^= 0x01
	if err := os.WriteFile(f, rot, 0o644); err != nil {
		t.Fatal(err)
	}
	stored, created, replaced, err := st.PutC2(ctx, m, b, nil)
	if err != nil || !created || !bytes.Equal(stored, b) || !errors.Is(replaced, storage.ErrChecksum) {
		t.Fatalf("PutC2 over a rotten proof: created=%v replaced=%v err=%v", created, replaced, err)
	}
	if _, got, err := st.GetC2(ctx, m.Ref); err != nil || !bytes.Equal(got, b) {
		t.Fatalf("after replacing a rotten proof: %v", err)
	}
	no := errors.New("does not verify")
	_, created, replaced, err = st.PutC2(ctx, m, c, func([]byte) error { return no })
	if err != nil || !created || !errors.Is(replaced, no) {
		t.Fatalf("PutC2 over a rejected proof: created=%v replaced=%v err=%v", created, replaced, err)
	}
	if _, got, err := st.GetC2(ctx, m.Ref); err != nil || !bytes.Equal(got, c) {
		t.Fatalf("after replacing a rejected proof: %v", err)
	}
	// The same bytes stored again over their rotten copy: its recorded
	// digest matches, its bytes do not, and it is rewritten.
	rot, _ = os.ReadFile(f)
	rot[10] ^= 0x01
	if err := os.WriteFile(f, rot, 0o644); err != nil {
		t.Fatal(err)
	}
	_, created, replaced, err = st.PutC2(ctx, m, c, nil)
	if err != nil || !created || !errors.Is(replaced, storage.ErrChecksum) {
		t.Fatalf("PutC2 of the same bytes over their rotten copy: created=%v replaced=%v err=%v", created, replaced, err)
	}
	if _, got, err := st.GetC2(ctx, m.Ref); err != nil || !bytes.Equal(got, c) {
		t.Fatalf("after rewriting a rotten copy: %v", err)
	}
}

// CheckBucket tells a wrong secret, an unknown access key, a missing
// bucket, an unreachable server and no credentials apart; with a custom
// endpoint the EC2 metadata service is never asked for credentials.
func TestCheckBucketTellsProblemsApart(t *testing.T) {
	srv := s3test.Start(t)
	srv.Store("c2flow")
	ctx := context.Background()
	check := func(cfg storage.Config) error {
		t.Helper()
		st, err := storage.Open(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		return st.CheckBucket(ctx)
	}
	expect := func(what string, err, want error, text string, not ...error) {
		t.Helper()
		if !errors.Is(err, want) || !strings.Contains(err.Error(), text) {
			t.Fatalf("%s: %v; want %v and %q", what, err, want, text)
		}
		for _, n := range not {
			if errors.Is(err, n) {
				t.Fatalf("%s: %v is also %v", what, err, n)
			}
		}
		if what != "missing bucket" && strings.Contains(err.Error(), "create it first") {
			t.Fatalf("%s: %v tells to create the bucket", what, err)
		}
	}
	if err := check(srv.Config("c2flow")); err != nil {
		t.Fatal(err)
	}
	cfg := srv.Config("c2flow")
	cfg.SecretKey = "wrong"
	expect("wrong secret", check(cfg), storage.ErrAuth, "check the access key and secret", storage.ErrNoBucket)
	cfg = srv.Config("c2flow")
	cfg.AccessKey = "nobody"
	expect("unknown access key", check(cfg), storage.ErrAuth, "check the access key and secret", storage.ErrNoBucket)
	expect("missing bucket", check(srv.Config("no-such-bucket")), storage.ErrNoBucket, `bucket "no-such-bucket" does not exist`, storage.ErrAuth)

	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cfg = srv.Config("c2flow")
	cfg.Endpoint, cfg.MaxAttempts = "http://"+l.Addr().String(), 2
	l.Close()
	expect("unreachable", check(cfg), storage.ErrUnreachable, "check the endpoint", storage.ErrNoBucket, storage.ErrAuth)

	// A metadata service that counts who asks it.
	imds, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer imds.Close()
	asked := make(chan struct{}, 16)
	go func() {
		for {
			c, err := imds.Accept()
			if err != nil {
				return
			}
			asked <- struct{}{}
			c.Close()
		}
	}()
	t.Setenv("AWS_EC2_METADATA_SERVICE_ENDPOINT", "http://"+imds.Addr().String())
	for _, v := range []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE", "AWS_EC2_METADATA_DISABLED"} {
		t.Setenv(v, "")
	}
	none := filepath.Join(t.TempDir(), "none")
	t.Setenv("AWS_CONFIG_FILE", none)
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", none)
	cfg = srv.Config("c2flow")
	cfg.AccessKey, cfg.SecretKey, cfg.MaxAttempts = "", "", 2
	expect("no credentials", check(cfg), storage.ErrNoCredentials, "give an access key and secret", storage.ErrNoBucket, storage.ErrAuth)
	select {
	case <-asked:
		t.Fatal("the EC2 metadata service was asked for credentials with a custom endpoint")
	default:
	}
}
