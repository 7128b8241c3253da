package s3server_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/c2flow/c2flow/storage"
	"github.com/c2flow/c2flow/storage/s3server"
)

// A bucket account's key reaches its bucket alone: it reads, writes, lists
// and deletes there, but cannot read or write another bucket, nor create
// one; the root key still reaches everything. A restart with a changed
// secret replaces the stored one. (Issue 55, finding 8: workers get this
// key, not the root keys.)
func TestBucketAccount(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "s3")
	const root, rootSecret, acct = "root-key", "root-secret-0123456789", "worker-key"
	addr, err := s3server.FreeAddr()
	if err != nil {
		t.Fatal(err)
	}
	start := func(secret string) func() {
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() {
			done <- s3server.Run(ctx, s3server.Config{Addr: addr, Dir: dir, AccessKey: root, SecretKey: rootSecret,
				BucketAccess: acct, BucketSecret: secret, Bucket: "c2flow"})
		}()
		wctx, wcancel := context.WithTimeout(ctx, 10*time.Second)
		defer wcancel()
		if err := s3server.WaitReady(wctx, addr); err != nil {
			cancel()
			t.Fatal(err, <-done)
		}
		return func() {
			cancel()
			if err := <-done; err != nil {
				t.Fatal(err)
			}
		}
	}
	ctx := context.Background()
	open := func(bucket, access, secret string) *storage.Store {
		st, err := storage.Open(ctx, storage.Config{Endpoint: "http://" + addr, Bucket: bucket, AccessKey: access, SecretKey: secret, PathStyle: true, MaxAttempts: 1})
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	stop := start("worker-secret-0123456789")
	other := open("other", root, rootSecret)
	if err := other.EnsureBucket(ctx); err != nil {
		t.Fatal(err)
	}
	if err := other.Put(ctx, "x", []byte("root's")); err != nil {
		t.Fatal(err)
	}
	w := open("c2flow", acct, "worker-secret-0123456789")
	if err := w.EnsureBucket(ctx); err != nil {
		t.Fatalf("the bucket account's own bucket: %v", err)
	}
	if err := w.Put(ctx, "a/b", []byte("worker's")); err != nil {
		t.Fatalf("put in its bucket: %v", err)
	}
	if b, err := w.Get(ctx, "a/b"); err != nil || string(b) != "worker's" {
		t.Fatalf("get in its bucket: %q, %v", b, err)
	}
	if keys, err := w.List(ctx, "a/"); err != nil || len(keys) != 1 {
		t.Fatalf("list in its bucket: %v, %v", keys, err)
	}
	if b, err := open("c2flow", root, rootSecret).Get(ctx, "a/b"); err != nil || string(b) != "worker's" {
		t.Fatalf("root reading the bucket account's object: %q, %v", b, err)
	}
	// The operator's clients (c2flow submit) write C1s with the root key;
	// the workers read them.
	if err := open("c2flow", root, rootSecret).Put(ctx, "c1/x", []byte("root's")); err != nil {
		t.Fatal(err)
	}
	if b, err := w.Get(ctx, "c1/x"); err != nil || string(b) != "root's" {
		t.Fatalf("the bucket account reading root's object in its bucket: %q, %v", b, err)
	}
	wo := open("other", acct, "worker-secret-0123456789")
	if b, err := wo.Get(ctx, "x"); err == nil {
		t.Errorf("the bucket account read another bucket: %q", b)
	}
	if err := wo.Put(ctx, "y", []byte("no")); err == nil {
		t.Error("the bucket account wrote to another bucket")
	}
	if err := open("third", acct, "worker-secret-0123456789").EnsureBucket(ctx); err == nil {
		t.Error("the bucket account created a bucket")
	}
	if err := w.Delete(ctx, "a/b"); err != nil {
		t.Fatalf("delete in its bucket: %v", err)
	}
	stop()

	stop = start("worker-secret-changed-0123")
	defer stop()
	if err := w.Put(ctx, "c", []byte("old secret")); err == nil {
		t.Error("the old secret still works after a restart with a new one")
	}
	if err := open("c2flow", acct, "worker-secret-changed-0123").Put(ctx, "c", []byte("new")); err != nil {
		t.Errorf("the new secret: %v", err)
	}
}
