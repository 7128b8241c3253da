package storage

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/c2flow/c2flow/params"
	"github.com/c2flow/c2flow/porep"
)

// C1Key, C2Key and ManifestKey are the keys of a sector's artifacts.
func C1Key(sectorID uint64) string       { return fmt.Sprintf("c1/%d.json", sectorID) }
func C2Key(sectorID uint64) string       { return fmt.Sprintf("c2/%d.proof", sectorID) }
func ManifestKey(sectorID uint64) string { return fmt.Sprintf("c2/%d.json", sectorID) }

// Manifest describes a stored C2 proof.
type Manifest struct {
	SectorID    uint64          `json:"sector_id"`
	Profile     string          `json:"profile"`
	Partitions  int             `json:"partitions"`
	VKDigest    string          `json:"vk_digest"` // circuit digest of the keys that verified it
	SHA256      string          `json:"sha256"`    // of the proof object
	ProofBytes  int             `json:"proof_bytes"`
	PartitionMS []PartitionTime `json:"partition_ms,omitempty"`
}

// PartitionTime are one partition's phase times in milliseconds.
type PartitionTime struct {
	Partition  int   `json:"partition"`
	SynthMS    int64 `json:"synth_ms"`
	QueueMS    int64 `json:"queue_ms"`
	DeviceMS   int64 `json:"device_ms"`
	FinalizeMS int64 `json:"finalize_ms"`
}

// PutC1 stores a C1 artifact.
func (s *Store) PutC1(ctx context.Context, c1 *porep.C1) error {
	var b bytes.Buffer
	if err := c1.Encode(&b); err != nil {
		return err
	}
	return s.Put(ctx, C1Key(c1.SectorID), b.Bytes())
}

// PutC2 stores a verified C2 proof and its manifest. The proof is written
// conditionally: if another proof of the sector is already stored (a
// retried activity re-proved it, and Groth16 proofs are randomized), the
// stored one is kept and returned with created=false; the caller checks it.
func (s *Store) PutC2(ctx context.Context, m Manifest, proof []byte) (stored []byte, created bool, err error) {
	hx, _ := sum(proof)
	m.SHA256, m.ProofBytes = hx, len(proof)
	created, err = s.PutIfAbsent(ctx, C2Key(m.SectorID), proof)
	switch {
	case errors.Is(err, ErrExists):
		stored, err = s.Get(ctx, C2Key(m.SectorID))
		if err != nil {
			return nil, false, err
		}
		return stored, false, nil
	case err != nil:
		return nil, false, err
	}
	mb, _ := json.MarshalIndent(m, "", "  ")
	if err := s.Put(ctx, ManifestKey(m.SectorID), mb); err != nil {
		return nil, false, err
	}
	return proof, created, nil
}

// ParamCache is a params.Store over S3 with a local directory in front: a
// worker downloads each key once, then reads its local copy.
type ParamCache struct {
	Local params.DirStore
	S3    *Store
}

// Open implements params.Store.
func (c ParamCache) Open(ctx context.Context, key string) (io.ReadCloser, error) {
	rc, err := c.Local.Open(ctx, key)
	if err == nil || !errors.Is(err, params.ErrNotFound) {
		return rc, err
	}
	dst := filepath.Join(c.Local.Root, filepath.FromSlash(key))
	if err := c.S3.DownloadFile(ctx, key, dst); err != nil {
		if errors.Is(err, ErrNotFound) {
			return nil, fmt.Errorf("%s: %w", key, params.ErrNotFound)
		}
		return nil, err
	}
	return os.Open(dst)
}

// Put implements params.Store: local first, then uploaded.
func (c ParamCache) Put(ctx context.Context, key string, write func(io.Writer) error) error {
	if err := c.Local.Put(ctx, key, write); err != nil {
		return err
	}
	return c.S3.UploadFile(ctx, key, filepath.Join(c.Local.Root, filepath.FromSlash(key)))
}

// Publish uploads the local copies of keys under prefix that storage lacks,
// so that other workers can download them.
func (c ParamCache) Publish(ctx context.Context, prefix string, names ...string) error {
	for _, n := range names {
		key := prefix + n
		_, err := c.S3.Head(ctx, key)
		if err == nil {
			continue
		}
		if !errors.Is(err, ErrNotFound) {
			return err
		}
		if err := c.S3.UploadFile(ctx, key, filepath.Join(c.Local.Root, filepath.FromSlash(key))); err != nil {
			return err
		}
	}
	return nil
}
