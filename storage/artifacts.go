package storage

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/c2flow/c2flow/job"
)

// C1Key, C2Key and ManifestKey are the keys of a sector's artifacts,
// named by the sector's identity (prover/sector/input digest): an input
// object is content-addressed and never overwritten, and a C2 is bound to
// the exact input it was made from.
func C1Key(ref job.Ref) string       { return "c1/" + ref.Identity() + ".json" }
func C2Key(ref job.Ref) string       { return C2KeyOf(ref.Identity()) }
func ManifestKey(ref job.Ref) string { return "c2/" + ref.Identity() + ".json" }

// C2KeyOf is C2Key by identity.
func C2KeyOf(identity string) string { return "c2/" + identity + ".proof" }

// InputIdentity is the identity whose input key is key (C1Key), ok false
// for any other key.
func InputIdentity(key string) (identity string, ok bool) {
	id, ok := strings.CutSuffix(strings.TrimPrefix(key, "c1/"), ".json")
	return id, ok && id != "" && strings.HasPrefix(key, "c1/")
}

// Manifest describes a stored C2 proof and what it was made from.
type Manifest struct {
	// Ref is the sector's identity (its InputDigest the SHA-256 of the
	// C1 bytes the proof was made from) and proof.
	job.Ref
	Partitions int `json:"partitions"`
	// VKDigest is the SHA-256 of the verifying-key file that verified the
	// proof before it was stored, PKDigest of the proving-key file it was
	// made with (pk and vk swapped in storage do not go unnoticed);
	// CircuitDigest names the circuit.
	VKDigest      string          `json:"vk_digest"`
	PKDigest      string          `json:"pk_digest,omitempty"` // SHA-256 of the proving-key file the proof was made with
	CircuitDigest string          `json:"circuit_digest,omitempty"`
	SHA256        string          `json:"sha256"` // of the proof object
	ProofBytes    int             `json:"proof_bytes"`
	PartitionMS   []PartitionTime `json:"partition_ms,omitempty"`
}

// PartitionTime are one partition's phase times in milliseconds.
type PartitionTime struct {
	Partition  int   `json:"partition"`
	SynthMS    int64 `json:"synth_ms"`
	QueueMS    int64 `json:"queue_ms"`
	DeviceMS   int64 `json:"device_ms"`
	FinalizeMS int64 `json:"finalize_ms"`
}

// PutC1 stores a sector's input under its content-addressed key, only if
// absent: an object already there has the same identity, and readers
// check its digest. raw must be the bytes ref's digest names (a caller's
// mix-up is refused, wrapping ErrDigest, before anything is written).
func (s *Store) PutC1(ctx context.Context, ref job.Ref, raw []byte) error {
	if d := job.Digest(raw); d != ref.InputDigest {
		return fmt.Errorf("store C1 %s: its bytes have SHA-256 %s: %w", C1Key(ref), d, ErrDigest)
	}
	_, err := s.PutIfAbsent(ctx, C1Key(ref), raw)
	if err != nil {
		return fmt.Errorf("store C1 %s: %w", C1Key(ref), err)
	}
	return nil
}

// GetC1 reads the C1 of sector identity id and checks its bytes against
// the digest the identity pins: an object replaced after submission is an
// error wrapping ErrDigest, never a C1 to prove.
func (s *Store) GetC1(ctx context.Context, ref job.Ref) ([]byte, error) {
	raw, err := s.Get(ctx, C1Key(ref))
	if err != nil {
		return nil, err
	}
	if got := job.Digest(raw); got != ref.InputDigest {
		return nil, fmt.Errorf("C1 %s: SHA-256 %s, the sector pinned %s: %w", C1Key(ref), got, ref.InputDigest, ErrDigest)
	}
	return raw, nil
}

// ErrDigest: an object's bytes are not the ones its identity names.
var ErrDigest = errors.New("object replaced: digest mismatch")

// PutC2 stores a verified C2 proof and its manifest. The proof is written
// conditionally: if another proof of the sector is already stored (a
// retried activity re-proved it, and Groth16 proofs are randomized), the
// stored one is kept and returned with created=false when it passes its
// checksum and keep (nil: any intact proof is kept). One that fails either
// is replaced by proof with a write conditional on its ETag (If-Match), so
// bit rot on the server is repaired and a concurrent writer is never
// overwritten; replaced says why (nil when nothing was replaced).
func (s *Store) PutC2(ctx context.Context, m Manifest, proof []byte, keep func(stored []byte) error) (stored []byte, created bool, replaced error, err error) {
	id := m.Ref
	created, err = s.PutIfAbsent(ctx, C2Key(id), proof)
	if err != nil && !errors.Is(err, ErrExists) {
		return nil, false, nil, err
	}
	if !created {
		// Stored already, with these bytes or others: read and check
		// them, since a recorded digest says nothing of the disk's bytes.
		var etag string
		stored, etag, err = s.getTagged(ctx, C2Key(id))
		switch {
		case errors.Is(err, ErrChecksum):
			replaced = err
		case err != nil:
			return nil, false, nil, err
		case keep != nil:
			if kerr := keep(stored); kerr != nil {
				replaced = fmt.Errorf("stored C2 %s rejected: %w", C2Key(id), kerr)
			}
		}
		if replaced == nil {
			if err := s.PutManifest(ctx, m, stored); err != nil {
				return nil, false, nil, err
			}
			return stored, false, nil, nil
		}
		if err := s.replaceIfMatch(ctx, C2Key(id), etag, proof); err != nil {
			return nil, false, replaced, fmt.Errorf("replace C2 %s (%v): %w", C2Key(id), replaced, err)
		}
		created = true
	}
	if err := s.PutManifest(ctx, m, proof); err != nil {
		return nil, false, replaced, err
	}
	return proof, created, replaced, nil
}

// PutManifest writes the manifest of the stored proof bytes proof (after
// a crash between the proof and its manifest, or when a retry finds an
// earlier proof stored and has checked it).
func (s *Store) PutManifest(ctx context.Context, m Manifest, proof []byte) error {
	m.SHA256, _ = sum(proof)
	m.ProofBytes = len(proof)
	mb, _ := json.MarshalIndent(m, "", "  ")
	if err := s.Put(ctx, ManifestKey(m.Ref), mb); err != nil {
		return fmt.Errorf("store C2 manifest %s: %w", ManifestKey(m.Ref), err)
	}
	return nil
}

// GetC2 reads a sector's stored C2 and its manifest and checks that they
// agree: the manifest names this identity and the proof's SHA-256. Whether
// the proof verifies is the caller's check.
func (s *Store) GetC2(ctx context.Context, ref job.Ref) (Manifest, []byte, error) {
	id := ref.Identity()
	var m Manifest
	mb, err := s.Get(ctx, ManifestKey(ref))
	if err != nil {
		return m, nil, err
	}
	if err := json.Unmarshal(mb, &m); err != nil {
		return m, nil, fmt.Errorf("C2 manifest %s: %v: %w", ManifestKey(ref), err, ErrDigest)
	}
	if m.Identity() != id {
		return m, nil, fmt.Errorf("C2 manifest %s is for %s: %w", ManifestKey(ref), m.Identity(), ErrDigest)
	}
	proof, err := s.Get(ctx, C2Key(ref))
	if err != nil {
		return m, nil, err
	}
	if hx, _ := sum(proof); hx != m.SHA256 {
		return m, nil, fmt.Errorf("C2 %s: SHA-256 %s, its manifest says %s: %w", C2Key(ref), hx, m.SHA256, ErrDigest)
	}
	return m, proof, nil
}
