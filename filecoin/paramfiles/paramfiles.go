// Package paramfiles is Filecoin's parameter store: the .params/.vk pairs
// of its Groth16 circuits and parameters.json, in a local directory and,
// for what that lacks, a remote storage they are downloaded from. It
// finds a circuit's pair (Store.Locate), checks the files against
// parameters.json's digests, and installs and publishes a development
// setup's pair (InstallDev, Store.Publish). What the circuits are is
// filecoin/snark's: a Circuit says what finding one's pair needs of it.
package paramfiles

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/c2flow/c2flow/filecoin/groth"
	"github.com/c2flow/c2flow/internal/mapped"
)

const (
	// PairPrefix is the name of Filecoin's seal parameter files up to the
	// tree shape: PairPrefix + "<shape>-sha256_hasher-<id>.params" and
	// ".vk" (rust-fil-proofs parameters.json).
	PairPrefix = "v28-stacked-proof-of-replication-merkletree-poseidon_hasher-"
	// ParametersJSON names the file of the parameter files' digests and
	// sector sizes, as rust-fil-proofs and lotus ship it
	// (build/proof-params/parameters.json).
	ParametersJSON = "parameters.json"
	// DevMarker names the file that marks a parameter directory as a
	// development setup (see InstallDev).
	DevMarker = "DEVELOPMENT-SETUP"
	// RemotePrefix is the key prefix of the parameter files in a Remote:
	// RemotePrefix + <file name>.
	RemotePrefix = "params/filecoin/"
	// maxParametersJSON bounds parameters.json (Filecoin's is ~20 KB).
	maxParametersJSON = 4 << 20
)

// ErrBadParams is wrapped when a parameter file is not what
// parameters.json says it is (its digest differs), or two files that
// must be a pair are not.
var ErrBadParams = errors.New("bad Filecoin parameter file")

// DefaultDir is Filecoin's parameter directory as filecoin-proofs finds
// it: $FIL_PROOFS_PARAMETER_CACHE, else /var/tmp/filecoin-proof-parameters
// (rust-fil-proofs storage-proofs-core/src/parameter_cache.rs).
func DefaultDir() string {
	if d := os.Getenv("FIL_PROOFS_PARAMETER_CACHE"); d != "" {
		return d
	}
	return "/var/tmp/filecoin-proof-parameters"
}

// Remote holds parameter files that the local directory lacks, under
// RemotePrefix + <file name> (parameters.json and DevMarker included).
type Remote interface {
	// Open returns the object under key, or an error wrapping
	// fs.ErrNotExist when there is none.
	Open(ctx context.Context, key string) (io.ReadCloser, error)
}

// Publisher is a Remote that keys can be published to (storage.Store).
type Publisher interface {
	Remote
	Head(ctx context.Context, key string) (string, error)
	UploadFile(ctx context.Context, key, src string) error
}

// Listing is a parameters.json: each parameter file's digest and sector
// size, by file name.
type Listing = map[string]groth.ParameterEntry

// Files is a .params/.vk pair on disk.
type Files struct {
	Params, VK string
}

// Circuit is what finding one Groth16 circuit's pair needs of it.
type Circuit struct {
	Name       string // the proof's name, in messages
	SectorSize uint64
	NumInputs  int // ONE included: the .vk's IC points
	// Prefix is the pair's name up to its identifier: parameters.json
	// lists the published pair as Prefix + <id>, and a development setup
	// is named DevBase(Prefix, <circuit digest>).
	Prefix string
	// Published is the published pair's base name where several circuits
	// share Prefix and sector size (PoSt's window and winning), else "".
	Published string
	// Digest, where set, gives the circuit's digest, which names its
	// development setup: asked only when no published name decides.
	Digest func() (string, error)
}

// DevBase is the base name of the development setup of a circuit whose
// pairs are named prefix + <id> and whose digest is digest.
func DevBase(prefix, digest string) string { return prefix + "dev" + digest[:16] }

// Located is a circuit's parameter pair as found.
type Located struct {
	Files
	// WantParams and WantVK are parameters.json's digests of the .params
	// and .vk; empty when the pair is not listed (given, or a development
	// setup's).
	WantParams, WantVK string
	// Dev is set for a development setup's pair.
	Dev bool
}

// Sums are a file's digests, computed in one read.
type Sums struct {
	SHA256    string // hex SHA-256
	FilDigest string // parameters.json's digest (groth.FileDigest)
	size      int64
	mtime     time.Time
}

// storedSums are Sums as Store.Stamps keeps them.
type storedSums struct {
	SHA256    string `json:"sha256"`
	FilDigest string `json:"fil_digest"`
}

// sumCache computes each file's digests once per Store, again only when
// its size or modification time changes.
type sumCache struct {
	mu sync.Mutex
	m  map[string]Sums
}

// Sums are path's digests, computed once while the file is unchanged.
func (s *Store) Sums(ctx context.Context, path string) (Sums, error) {
	c := &s.sums
	st, err := os.Stat(path)
	if err != nil {
		return Sums{}, err
	}
	c.mu.Lock()
	sums, ok := c.m[path]
	c.mu.Unlock()
	if ok && sums.size == st.Size() && sums.mtime.Equal(st.ModTime()) {
		return sums, nil
	}
	// Another process (or this one, before a restart) may have hashed
	// the file as it is: a 32GiB PoRep's .params is 47 GB, hashed once
	// per change, not once per start.
	var kept storedSums
	if s.Stamps.Get(path, &kept) && kept.SHA256 != "" {
		sums = Sums{SHA256: kept.SHA256, FilDigest: kept.FilDigest}
	} else {
		before, err := mapped.Stat(path)
		if err != nil {
			return Sums{}, err
		}
		if sums, err = SumFile(ctx, path); err != nil {
			return Sums{}, err
		}
		if err := s.Stamps.Put(path, before, storedSums{SHA256: sums.SHA256, FilDigest: sums.FilDigest}); err != nil {
			s.log().Warn("parameter file digests not remembered: the next process hashes it again", "file", path, "err", err)
		}
	}
	sums.size, sums.mtime = st.Size(), st.ModTime()
	c.mu.Lock()
	if c.m == nil {
		c.m = map[string]Sums{}
	}
	c.m[path] = sums
	c.mu.Unlock()
	return sums, nil
}

// SumFile reads path once for its SHA-256 and its parameters.json digest.
func SumFile(ctx context.Context, path string) (Sums, error) {
	f, err := os.Open(path)
	if err != nil {
		return Sums{}, err
	}
	defer f.Close()
	h := sha256.New()
	d, err := groth.FileDigest(io.TeeReader(ctxReader{ctx, f}, h))
	if err != nil {
		return Sums{}, fmt.Errorf("digest of %s: %w", path, err)
	}
	return Sums{SHA256: hex.EncodeToString(h.Sum(nil)), FilDigest: d}, nil
}

// ctxReader ends a long read when ctx ends.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// Check returns the digests of path, checked against parameters.json's
// want where it lists the file.
func (s *Store) Check(ctx context.Context, path, want string) (Sums, error) {
	sums, err := s.Sums(ctx, path)
	if err != nil {
		return sums, err
	}
	if want != "" && sums.FilDigest != want {
		return sums, fmt.Errorf("%s: digest %s, %s says %s: %w (delete the file to fetch it again)",
			path, sums.FilDigest, ParametersJSON, want, ErrBadParams)
	}
	return sums, nil
}

// CheckPair returns the digests of loc's files, checked against
// parameters.json's where it lists them.
func (s *Store) CheckPair(ctx context.Context, loc *Located) (pSums, vSums Sums, err error) {
	if vSums, err = s.Check(ctx, loc.VK, loc.WantVK); err != nil {
		return pSums, vSums, err
	}
	pSums, err = s.Check(ctx, loc.Params, loc.WantParams)
	return pSums, vSums, err
}
