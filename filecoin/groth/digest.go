package groth

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"

	"golang.org/x/crypto/blake2b"
)

// DigestLen is the length of a parameter file digest in hex characters.
const DigestLen = 32

// FileDigest returns the digest parameters.json records for a parameter
// file's contents: the first 32 hex characters of their BLAKE2b-512
// (storage-proofs-core parameter_cache.rs, blake2b_simd's default 64-byte
// output, to_hex()[..32]).
func FileDigest(r io.Reader) (string, error) {
	h, err := blake2b.New512(nil)
	if err != nil {
		return "", fmt.Errorf("parameter digest: %w", err)
	}
	if _, err := io.CopyBuffer(h, r, make([]byte, 4<<20)); err != nil {
		return "", fmt.Errorf("parameter digest: %w", err)
	}
	return hex.EncodeToString(h.Sum(nil))[:DigestLen], nil
}

// CheckFileDigest computes path's digest and compares it with want (the
// parameters.json entry's "digest").
func CheckFileDigest(path, want string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("checking parameter digest: %w", err)
	}
	defer f.Close()
	got, err := FileDigest(f)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if got != want {
		return fmt.Errorf("%s: parameter digest %s, parameters.json says %s: %w", path, got, want, ErrMismatch)
	}
	return nil
}

// ParameterEntry is one entry of rust-fil-proofs' parameters.json.
type ParameterEntry struct {
	CID        string `json:"cid"`
	Digest     string `json:"digest"`
	SectorSize uint64 `json:"sector_size"`
}

// ParseParametersJSON parses a parameters.json document: file name to
// entry.
func ParseParametersJSON(b []byte) (map[string]ParameterEntry, error) {
	var m map[string]ParameterEntry
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("parsing parameters.json: %w", err)
	}
	for name, e := range m {
		if len(e.Digest) != DigestLen {
			return nil, fmt.Errorf("parsing parameters.json: %s: digest %q is not %d hex characters: %w", name, e.Digest, DigestLen, ErrFormat)
		}
	}
	return m, nil
}
