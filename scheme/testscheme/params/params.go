// Package params compiles a profile's partition circuit and provides its
// Groth16 keys, from a Store (local directory, S3) or from a development
// setup the first time a circuit digest is seen.
//
// The setup is gnark's single-party groth16.Setup: its toxic waste is known
// to the machine that ran it. It is for development and tests only; a
// production deployment loads keys from a multi-party ceremony.
//
// Every load checks every key file: its size and SHA-256 against the
// set's digests file (DigestsFile, written with the keys), and its
// structure against the circuit as it is decoded, so a corrupt file is an
// error, never a panic or a key that makes bad proofs. A bad local copy
// is moved aside and, where the store has one behind it (S3), fetched
// again.
package params

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/c2flow/c2flow/internal/flock"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/consensys/gnark-crypto/ecc"
	"github.com/consensys/gnark/backend/groth16"
	groth16bls "github.com/consensys/gnark/backend/groth16/bls12-381"
	csbls "github.com/consensys/gnark/constraint/bls12-381"
	"github.com/consensys/gnark/frontend"
	"github.com/consensys/gnark/frontend/cs/r1cs"

	"github.com/c2flow/c2flow/scheme/testscheme/porep"
	"github.com/c2flow/c2flow/scheme/testscheme/porep/circuit"
)

// ErrNotFound is returned by a Store for a key it does not hold.
var ErrNotFound = errors.New("not found")

// Store holds parameter files by key. Put must be atomic: a reader never
// sees a partly written object.
type Store interface {
	Open(ctx context.Context, key string) (io.ReadCloser, error)
	Put(ctx context.Context, key string, write func(io.Writer) error) error
}

// Keys is a compiled partition circuit with its proving and verifying keys.
type Keys struct {
	Profile porep.Profile
	Digest  string // hex SHA-256 prefix of the serialized R1CS
	CCS     *csbls.R1CS
	PK      *groth16bls.ProvingKey
	VK      *groth16bls.VerifyingKey
	// PKSHA256 and VKSHA256 are the hex SHA-256 of the key files as read
	// or written: a C2 manifest pins the files its proof was made and
	// verified with.
	PKSHA256, VKSHA256 string
}

// Prefix is the key prefix of the profile's parameters: params/<profile>/<digest>/.
func (k *Keys) Prefix() string { return Prefix(k.Profile.Name, k.Digest) }

// Prefix returns params/<profile>/<digest>/.
func Prefix(profile, digest string) string { return "params/" + profile + "/" + digest + "/" }

// Compile builds the R1CS of a profile's partition circuit and its digest.
func Compile(p porep.Profile) (*csbls.R1CS, string, error) {
	ccs, err := frontend.Compile(ecc.BLS12_381.ScalarField(), r1cs.NewBuilder, circuit.New(p))
	if err != nil {
		return nil, "", fmt.Errorf("compile %s circuit: %w", p.Name, err)
	}
	h := sha256.New()
	if _, err := ccs.WriteTo(h); err != nil {
		return nil, "", fmt.Errorf("digest %s circuit: %w", p.Name, err)
	}
	return ccs.(*csbls.R1CS), hex.EncodeToString(h.Sum(nil))[:16], nil
}

// SynthBytes estimates a partition's synthesis memory: gnark's solver
// makes the dense wire vector and a, b, c (one element per constraint
// each), 32 bytes an element, before the wires are packed.
func SynthBytes(ccs *csbls.R1CS) int64 {
	wires := ccs.GetNbPublicVariables() + ccs.GetNbSecretVariables() + ccs.GetNbInternalVariables()
	return int64(wires+3*ccs.GetNbConstraints()) * 32
}

// Load returns the profile's keys (log may be nil): compiled here, keys read from the store
// when it has them for this circuit digest, else made by a development setup
// and written to the store so the next run reuses them. A key file that
// fails its checks is an error (ErrMismatch, ErrMalformed), not a reason
// to run a setup; where nothing behind the store can replace it, the bad
// copy is moved aside, so the next Load finds no keys and makes new ones.
func Load(ctx context.Context, store Store, p porep.Profile, log *slog.Logger) (*Keys, error) {
	k, err := load(ctx, store, p, log)
	if err == nil || !errors.Is(err, ErrNotFound) {
		return k, err
	}
	// Processes sharing a key directory make one setup: the others wait
	// for it and read its keys (two setups would leave proofs made with
	// one and verified with the other).
	if l, ok := store.(setupLocker); ok {
		unlock, err := l.lockSetup(ctx, p.Name)
		if err != nil {
			return nil, fmt.Errorf("development setup of %s: %w", p.Name, err)
		}
		defer unlock()
		if k, err = load(ctx, store, p, log); err == nil || !errors.Is(err, ErrNotFound) {
			return k, err
		}
	}
	log = logger(log).With("profile", p.Name, "digest", k.Digest, "constraints", k.CCS.GetNbConstraints())
	log.Warn("no keys for this circuit: running groth16.Setup, a SINGLE-PARTY DEVELOPMENT SETUP whose keys must never secure real sectors")
	t1 := time.Now()
	pk, vk, err := groth16.Setup(k.CCS)
	if err != nil {
		return nil, fmt.Errorf("groth16 setup %s: %w", p.Name, err)
	}
	k.PK, k.VK = pk.(*groth16bls.ProvingKey), vk.(*groth16bls.VerifyingKey)
	log.Info("development setup done", "setup_ms", time.Since(t1).Milliseconds())
	if err := k.Write(ctx, store); err != nil {
		return nil, err
	}
	return k, nil
}

// LoadExisting returns the profile's keys from the store, or an error
// wrapping ErrNotFound that says how to make them; it never runs a setup.
func LoadExisting(ctx context.Context, store Store, p porep.Profile, log *slog.Logger) (*Keys, error) {
	k, err := load(ctx, store, p, log)
	if errors.Is(err, ErrNotFound) {
		return nil, fmt.Errorf("no proving keys for profile %s (circuit %s) under %s: run `c2flow circuit setup --profile %s` against this storage first: %w",
			p.Name, k.Digest, k.Prefix(), p.Name, err)
	}
	return k, err
}

// load compiles the circuit and reads its keys. On ErrNotFound it still
// returns the compiled Keys (without pk/vk), so Load can run the setup
// without compiling again.
func load(ctx context.Context, store Store, p porep.Profile, log *slog.Logger) (*Keys, error) {
	t0 := time.Now()
	ccs, digest, err := Compile(p)
	if err != nil {
		return nil, err
	}
	k := &Keys{Profile: p, Digest: digest, CCS: ccs}
	if err := k.read(ctx, store, logger(log)); err != nil {
		if errors.Is(err, ErrNotFound) {
			return k, err
		}
		return nil, err
	}
	logger(log).Info("proving keys loaded", "profile", p.Name, "digest", digest, "ms", time.Since(t0).Milliseconds())
	return k, nil
}

func logger(l *slog.Logger) *slog.Logger {
	if l == nil {
		return slog.New(slog.DiscardHandler)
	}
	return l
}

// read reads the digests file, then the vk and the pk, each checked
// against it. A set without a vk is ErrNotFound (the vk is written last).
func (k *Keys) read(ctx context.Context, store Store, log *slog.Logger) error {
	d, err := k.readDigests(ctx, store, log)
	if err != nil && !errors.Is(err, ErrNotFound) {
		return err
	}
	// The decoders keep the last key they read: the one that passed, when
	// readFile returns nil.
	var (
		vk    *groth16bls.VerifyingKey
		pk    *groth16bls.ProvingKey
		shape = shapeOf(k.CCS)
	)
	if err := k.readFile(ctx, store, "vk", d.file("vk"), log, func(r io.Reader, size int64) (sum string, err error) {
		vk, sum, err = readVK(r, size)
		return sum, err
	}); err != nil {
		return err
	}
	if d == nil { // the vk, written last, is there: keys made before digests files
		log.Warn("keys have no "+DigestsFile+" (made before key files were checked): loading them unchecked; delete "+k.Prefix()+
			" and run `c2flow circuit setup` again for keys that are checked at every load",
			"profile", k.Profile.Name, "digest", k.Digest)
	}
	if err := k.readFile(ctx, store, "pk", d.file("pk"), log, func(r io.Reader, size int64) (sum string, err error) {
		pk, sum, err = readPK(r, size, shape)
		return sum, err
	}); err != nil {
		return err
	}
	k.VK, k.PK = vk, pk
	return nil
}

// readDigests reads and checks the digests file (ErrNotFound if absent).
func (k *Keys) readDigests(ctx context.Context, store Store, log *slog.Logger) (*Digests, error) {
	var d *Digests
	err := fetchChecked(ctx, store, k.Prefix()+DigestsFile, false, log, func(rc io.ReadCloser) error {
		b, err := io.ReadAll(io.LimitReader(rc, maxDigestsBytes+1))
		if err != nil {
			return fmt.Errorf("read %s%s: %w", k.Prefix(), DigestsFile, err)
		}
		got := new(Digests)
		if len(b) > maxDigestsBytes {
			err = fmt.Errorf("over %d bytes", maxDigestsBytes)
		} else {
			err = got.check(b, k.Profile.Name, k.Digest)
		}
		if err != nil {
			return &badFile{fmt.Errorf("%s%s: %w: %v", k.Prefix(), DigestsFile, ErrMalformed, err)}
		}
		d = got
		return nil
	})
	return d, err
}

// readFile opens one key file and decodes it with decode, which returns
// the file's SHA-256. With want (from the digests file), a file of another
// size or SHA-256 is a bad copy; without it (keys made before digests
// files), one that does not decode is. A bad copy is quarantined and
// fetched again where the store has a source behind it.
func (k *Keys) readFile(ctx context.Context, store Store, name string, want *FileDigest, log *slog.Logger, decode func(io.Reader, int64) (string, error)) error {
	key := k.Prefix() + name
	var sum string
	err := fetchChecked(ctx, store, key, true, log, func(rc io.ReadCloser) error {
		r, size, err := sized(rc)
		if err != nil {
			return fmt.Errorf("read %s: %w", key, err)
		}
		if want != nil && size != want.Bytes { // no need to decode it
			h := sha256.New()
			if _, err := io.Copy(h, r); err != nil {
				return fmt.Errorf("read %s: %w", key, err)
			}
			return &badFile{fmt.Errorf("%s: %d bytes with SHA-256 %x, %s records %d bytes with SHA-256 %s: %w",
				key, size, h.Sum(nil), DigestsFile, want.Bytes, want.SHA256, ErrMismatch)}
		}
		got, err := decode(r, size)
		switch {
		case got == "": // a read error
			return fmt.Errorf("read %s: %w", key, err)
		case want != nil && got != want.SHA256:
			if err != nil {
				err = fmt.Errorf(" (and it does not decode: %v)", err)
			} else {
				err = errors.New("")
			}
			return &badFile{fmt.Errorf("%s: SHA-256 %s, %s records %s%v: %w", key, got, DigestsFile, want.SHA256, err, ErrMismatch)}
		case err != nil && want != nil:
			return fmt.Errorf("%s matches its SHA-256 in %s, yet: %w", key, DigestsFile, err)
		case err != nil:
			return &badFile{fmt.Errorf("%s: %w", key, err)}
		}
		sum = got
		return nil
	})
	if err != nil {
		return err
	}
	if name == "pk" {
		k.PKSHA256 = sum
	} else {
		k.VKSHA256 = sum
	}
	return nil
}

// badFile marks an error that says a stored copy's bytes are wrong.
type badFile struct{ err error }

func (b *badFile) Error() string { return b.err.Error() }
func (b *badFile) Unwrap() error { return b.err }

// fetchChecked opens key and runs check on it. When check finds the copy
// bad, the copy is quarantined (if quarantineAlone, even where no source
// can replace it) and, where the store has a source behind it, fetched and
// checked once more. A missing key is ErrNotFound only on the first open.
func fetchChecked(ctx context.Context, store Store, key string, quarantineAlone bool, log *slog.Logger, check func(io.ReadCloser) error) error {
	open := func() error {
		rc, err := store.Open(ctx, key)
		if err != nil {
			return fmt.Errorf("open %s: %w", key, err)
		}
		defer rc.Close()
		return check(rc)
	}
	err := open()
	var bad *badFile
	if !errors.As(err, &bad) {
		return err
	}
	q, ok := store.(Quarantiner)
	if !ok || (!quarantineAlone && !q.Refetches()) {
		return err
	}
	moved, qerr := q.Quarantine(ctx, key)
	if qerr != nil {
		return fmt.Errorf("%w (and moving it aside failed: %v)", err, qerr)
	}
	log.Warn("key file failed its check: moved aside", "key", key, "moved_to", moved, "err", err)
	if !q.Refetches() {
		return fmt.Errorf("%w; moved aside to %s, and no store behind this one holds another copy", err, moved)
	}
	if err2 := open(); err2 != nil {
		if errors.As(err2, &bad) {
			return fmt.Errorf("%w; and so is the copy fetched again after the first was moved aside to %s", err2, moved)
		}
		// %v: a missing key here is not "no keys", which would let Load
		// run a setup that replaces the keys.
		return fmt.Errorf("%w; moved aside to %s, and fetching it again failed: %v", err, moved, err2)
	}
	log.Info("key file fetched again and checked", "key", key)
	return nil
}

// sized returns r with its size: a file's from Stat, else read into memory.
func sized(rc io.ReadCloser) (io.Reader, int64, error) {
	if f, ok := rc.(interface{ Stat() (fs.FileInfo, error) }); ok {
		fi, err := f.Stat()
		if err == nil && fi.Mode().IsRegular() {
			return rc, fi.Size(), nil
		}
	}
	b, err := io.ReadAll(rc)
	if err != nil {
		return nil, 0, err
	}
	return bytes.NewReader(b), int64(len(b)), nil
}

// Write writes the keys to the store: r1cs, pk, the digests file, then the
// vk, whose presence marks a complete set. It sets PKSHA256 and VKSHA256.
func (k *Keys) Write(ctx context.Context, store Store) error {
	d := Digests{Profile: k.Profile.Name, Circuit: k.Digest, Files: map[string]FileDigest{}}
	put := func(name string, write func(io.Writer) error) error {
		err := store.Put(ctx, k.Prefix()+name, func(w io.Writer) error {
			h, n := sha256.New(), &counter{}
			err := write(io.MultiWriter(w, h, n))
			d.Files[name] = FileDigest{SHA256: hex.EncodeToString(h.Sum(nil)), Bytes: n.n}
			return err
		})
		if err != nil {
			return fmt.Errorf("store %s%s: %w", k.Prefix(), name, err)
		}
		return nil
	}
	var vk bytes.Buffer
	if _, err := k.VK.WriteRawTo(&vk); err != nil {
		return fmt.Errorf("serialize %svk: %w", k.Prefix(), err)
	}
	vkSum := sha256.Sum256(vk.Bytes())
	if err := put("r1cs", func(w io.Writer) error { _, err := k.CCS.WriteTo(w); return err }); err != nil {
		return err
	}
	if err := put("pk", func(w io.Writer) error { _, err := k.PK.WriteRawTo(w); return err }); err != nil {
		return err
	}
	d.Files["vk"] = FileDigest{SHA256: hex.EncodeToString(vkSum[:]), Bytes: int64(vk.Len())}
	db, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		return err
	}
	if err := store.Put(ctx, k.Prefix()+DigestsFile, func(w io.Writer) error { _, err := w.Write(append(db, '\n')); return err }); err != nil {
		return fmt.Errorf("store %s%s: %w", k.Prefix(), DigestsFile, err)
	}
	if err := put("vk", func(w io.Writer) error { _, err := w.Write(vk.Bytes()); return err }); err != nil {
		return err
	}
	k.PKSHA256, k.VKSHA256 = d.Files["pk"].SHA256, d.Files["vk"].SHA256
	return nil
}

type counter struct{ n int64 }

func (c *counter) Write(p []byte) (int, error) { c.n += int64(len(p)); return len(p), nil }

// DigestsFile names the file, beside a profile's key files, that records
// each file's SHA-256 and size. It is written before the vk, so every
// complete set made since has one; every load checks the files against it.
const DigestsFile = "digests.json"

const maxDigestsBytes = 1 << 16

// ErrMismatch is wrapped by the error of a key file whose bytes are not
// the ones its digests file records.
var ErrMismatch = errors.New("key file does not match its recorded digest")

// Digests is the content of DigestsFile.
type Digests struct {
	Profile string `json:"profile"`
	Circuit string `json:"circuit"` // Keys.Digest
	// Files maps "r1cs", "pk" and "vk" to their digests.
	Files map[string]FileDigest `json:"files"`
}

// FileDigest is one file's SHA-256 (hex) and size.
type FileDigest struct {
	SHA256 string `json:"sha256"`
	Bytes  int64  `json:"bytes"`
}

func (d *Digests) file(name string) *FileDigest {
	if d == nil {
		return nil
	}
	f := d.Files[name]
	return &f
}

// check parses b into d and checks that it describes the keys of this
// profile and circuit.
func (d *Digests) check(b []byte, profile, circuit string) error {
	if err := json.Unmarshal(b, d); err != nil {
		return err
	}
	if d.Profile != profile || d.Circuit != circuit {
		return fmt.Errorf("it describes profile %q circuit %q, not %q %q", d.Profile, d.Circuit, profile, circuit)
	}
	for _, n := range []string{"r1cs", "pk", "vk"} {
		f, ok := d.Files[n]
		if !ok {
			return fmt.Errorf("no digest for %s", n)
		}
		if _, err := hex.DecodeString(f.SHA256); err != nil || len(f.SHA256) != 64 || f.Bytes <= 0 {
			return fmt.Errorf("%s: bad digest %q of %d bytes", n, f.SHA256, f.Bytes)
		}
	}
	if !strings.HasPrefix(d.Files["r1cs"].SHA256, circuit) {
		return fmt.Errorf("its r1cs SHA-256 %s does not start with the circuit digest %s", d.Files["r1cs"].SHA256, circuit)
	}
	return nil
}

// Quarantiner is a Store that can move a bad copy of a key aside.
type Quarantiner interface {
	// Quarantine moves key's local copy aside, renamed <name>.bad-<unix
	// seconds>, and returns where it went ("" if it was already gone).
	Quarantine(ctx context.Context, key string) (string, error)
	// Refetches reports whether Open fetches a quarantined key again from a
	// store behind the local copy.
	Refetches() bool
}

// DirStore is a Store in a local directory: the param cache of a worker.
type DirStore struct{ Root string }

// setupLocker is a store whose processes serialize their setups.
type setupLocker interface {
	lockSetup(ctx context.Context, profile string) (func(), error)
}

// lockSetup locks the directory's setups of profile (Root/.setup-lock-P).
func (d DirStore) lockSetup(ctx context.Context, profile string) (func(), error) {
	if err := os.MkdirAll(d.Root, 0o755); err != nil {
		return nil, err
	}
	return flock.Lock(ctx, filepath.Join(d.Root, ".setup-lock-"+profile))
}

// Open implements Store.
func (d DirStore) Open(_ context.Context, key string) (io.ReadCloser, error) {
	f, err := os.Open(filepath.Join(d.Root, filepath.FromSlash(key)))
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%s: %w", key, ErrNotFound)
	}
	return f, err
}

// Put implements Store with a temporary file renamed into place.
func (d DirStore) Put(_ context.Context, key string, write func(io.Writer) error) error {
	dst := filepath.Join(d.Root, filepath.FromSlash(key))
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(dst), ".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if err := write(f); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), dst)
}

// Quarantine implements Quarantiner.
func (d DirStore) Quarantine(_ context.Context, key string) (string, error) {
	src := filepath.Join(d.Root, filepath.FromSlash(key))
	dst := src + ".bad-" + strconv.FormatInt(time.Now().Unix(), 10)
	if err := os.Rename(src, dst); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return "", nil
		}
		return "", err
	}
	return dst, nil
}

// Refetches implements Quarantiner: a directory has nothing behind it.
func (DirStore) Refetches() bool { return false }

// DefaultDir is the local parameter cache: $C2FLOW_PARAMS, else the user
// cache directory.
func DefaultDir() string {
	if d := os.Getenv("C2FLOW_PARAMS"); d != "" {
		return d
	}
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "c2flow", "params")
	}
	return filepath.Join(os.TempDir(), "c2flow-params")
}
