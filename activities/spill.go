package activities

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/c2flow/c2flow/storage"
)

// Spill carries a synthesized witness from a synthesis-only host to a
// device host. Same-host affinity (role prove) needs none and moves no
// bytes; a spill is for fleets whose CPU and GPU boxes differ. Witnesses
// are streamed both ways: neither host holds their encoding beside the
// witness (a 32GiB partition's is about 90 MB packed).
type Spill interface {
	// Put stores the size bytes write writes under key, whole or not at
	// all.
	Put(ctx context.Context, key string, size int64, write func(io.Writer) error) error
	// Get opens the witness under key; a missing one is ErrSpillMissing.
	Get(ctx context.Context, key string) (io.ReadCloser, error)
	Delete(ctx context.Context, key string) error
}

// ErrSpillMissing is returned by Get for a key that is not spilled.
var ErrSpillMissing = errors.New("spilled witness not found")

// DirSpill spills to a directory every host of the fleet mounts (a local
// disk for hosts of one box, NFS for several).
type DirSpill struct{ Root string }

func (d DirSpill) path(key string) (string, error) {
	if key == "" || strings.Contains(key, "..") || strings.HasPrefix(key, "/") {
		return "", fmt.Errorf("spill key %q", key)
	}
	return filepath.Join(d.Root, filepath.FromSlash(key)), nil
}

// Put writes the witness atomically (temp file, then rename).
func (d DirSpill) Put(ctx context.Context, key string, size int64, write func(io.Writer) error) error {
	p, err := d.path(key)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return fmt.Errorf("spill %s: %w", key, err)
	}
	f, err := os.CreateTemp(filepath.Dir(p), filepath.Base(p)+".tmp*")
	if err != nil {
		return fmt.Errorf("spill %s: %w", key, err)
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	err = write(bw)
	if err == nil {
		err = bw.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), p)
	}
	if err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("spill %s: %w", key, err)
	}
	return nil
}

// Get opens a spilled witness.
func (d DirSpill) Get(ctx context.Context, key string) (io.ReadCloser, error) {
	p, err := d.path(key)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w: %s", ErrSpillMissing, p)
	}
	return f, err
}

// Delete removes a spilled witness (absent is not an error).
func (d DirSpill) Delete(ctx context.Context, key string) error {
	p, err := d.path(key)
	if err != nil {
		return err
	}
	if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// S3Spill spills through the artifact store under spill/, streamed
// (storage.PutStream: multipart, a checksum per part; the witness's own
// SHA-256 checks it whole when it is read).
type S3Spill struct{ Store *storage.Store }

// Put implements Spill.
func (s S3Spill) Put(ctx context.Context, key string, size int64, write func(io.Writer) error) error {
	return s.Store.PutStream(ctx, "spill/"+key, size, write)
}

// Get implements Spill.
func (s S3Spill) Get(ctx context.Context, key string) (io.ReadCloser, error) {
	r, err := s.Store.Open(ctx, "spill/"+key)
	if errors.Is(err, storage.ErrNotFound) {
		return nil, fmt.Errorf("%w: %v", ErrSpillMissing, err)
	}
	return r, err
}

// Delete implements Spill.
func (s S3Spill) Delete(ctx context.Context, key string) error {
	return s.Store.Delete(ctx, "spill/"+key)
}

// ParseSpill returns the spill a --spill flag names: "dir:PATH" or "s3".
func ParseSpill(spec string, store *storage.Store) (Spill, error) {
	switch {
	case spec == "":
		return nil, nil
	case spec == "s3":
		if store == nil {
			return nil, errors.New("--spill s3 needs the S3 store")
		}
		return S3Spill{Store: store}, nil
	case strings.HasPrefix(spec, "dir:") && len(spec) > 4:
		return DirSpill{Root: spec[4:]}, nil
	}
	return nil, fmt.Errorf("--spill %q: want dir:PATH or s3", spec)
}
