package params

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// Remote is the shared store behind a worker's local key cache (the S3
// artifact store: storage.Store implements it). An absent key's error
// matches fs.ErrNotExist.
type Remote interface {
	DownloadFile(ctx context.Context, key, dst string) error
	UploadFile(ctx context.Context, key, src string) error
	Head(ctx context.Context, key string) (string, error)
}

// Cache is a Store over a Remote with a local directory in front: a
// worker downloads each key once, then reads its local copy.
type Cache struct {
	Local  DirStore
	Remote Remote
}

func (c Cache) lockSetup(ctx context.Context, profile string) (func(), error) {
	return c.Local.lockSetup(ctx, profile)
}

// Open implements Store.
func (c Cache) Open(ctx context.Context, key string) (io.ReadCloser, error) {
	rc, err := c.Local.Open(ctx, key)
	if err == nil || !errors.Is(err, ErrNotFound) {
		return rc, err
	}
	dst := filepath.Join(c.Local.Root, filepath.FromSlash(key))
	if err := c.Remote.DownloadFile(ctx, key, dst); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s: %w", key, ErrNotFound)
		}
		return nil, err
	}
	return os.Open(dst)
}

// Put implements Store: local first, then uploaded.
func (c Cache) Put(ctx context.Context, key string, write func(io.Writer) error) error {
	if err := c.Local.Put(ctx, key, write); err != nil {
		return err
	}
	return c.Remote.UploadFile(ctx, key, filepath.Join(c.Local.Root, filepath.FromSlash(key)))
}

// Quarantine implements Quarantiner: the local copy is moved
// aside, and the next Open downloads the key again.
func (c Cache) Quarantine(ctx context.Context, key string) (string, error) {
	return c.Local.Quarantine(ctx, key)
}

// Refetches implements Quarantiner: S3 is behind the local copy.
func (Cache) Refetches() bool { return true }

// Publish uploads the local copies of keys under prefix that storage lacks,
// in the order named, so that other workers can download them. A digests
// file that neither has is skipped: keys made before digests files have none.
func (c Cache) Publish(ctx context.Context, prefix string, names ...string) error {
	for _, n := range names {
		key := prefix + n
		_, err := c.Remote.Head(ctx, key)
		if err == nil {
			continue
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		local := filepath.Join(c.Local.Root, filepath.FromSlash(key))
		if _, err := os.Stat(local); errors.Is(err, os.ErrNotExist) {
			if n == DigestsFile { // a key set made before digests files
				continue
			}
			return fmt.Errorf("publish %s: the local key set %s is incomplete (no %s) and storage has none: delete %s and run `c2flow circuit setup` again",
				key, filepath.Dir(local), n, filepath.Dir(local))
		}
		if err := c.Remote.UploadFile(ctx, key, local); err != nil {
			return err
		}
	}
	return nil
}
