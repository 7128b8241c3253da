package activities

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/c2flow/c2flow/storage"
)

// Spill carries a synthesized witness from a synthesis-only host to a
// device host. Same-host affinity (role prove) needs none and moves no
// bytes; a spill is for fleets whose CPU and GPU boxes differ.
type Spill interface {
	Put(ctx context.Context, key string, data []byte) error
	Get(ctx context.Context, key string) ([]byte, error)
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
func (d DirSpill) Put(ctx context.Context, key string, data []byte) error {
	p, err := d.path(key)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return fmt.Errorf("spill: %w", err)
	}
	tmp := p + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("spill: %w", err)
	}
	if err := os.Rename(tmp, p); err != nil {
		return fmt.Errorf("spill: %w", err)
	}
	return nil
}

// Get reads a spilled witness.
func (d DirSpill) Get(ctx context.Context, key string) ([]byte, error) {
	p, err := d.path(key)
	if err != nil {
		return nil, err
	}
	b, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w: %s", ErrSpillMissing, p)
	}
	return b, err
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

// S3Spill spills through the artifact store under spill/ (checksummed
// like every object there).
type S3Spill struct{ Store *storage.Store }

// Put implements Spill.
func (s S3Spill) Put(ctx context.Context, key string, data []byte) error {
	return s.Store.Put(ctx, "spill/"+key, data)
}

// Get implements Spill.
func (s S3Spill) Get(ctx context.Context, key string) ([]byte, error) {
	b, err := s.Store.Get(ctx, "spill/"+key)
	if errors.Is(err, storage.ErrNotFound) {
		return nil, fmt.Errorf("%w: %v", ErrSpillMissing, err)
	}
	return b, err
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
