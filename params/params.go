// Package params compiles a profile's partition circuit and provides its
// Groth16 keys, from a Store (local directory, S3) or from a development
// setup the first time a circuit digest is seen.
//
// The setup is gnark's single-party groth16.Setup: its toxic waste is known
// to the machine that ran it. It is for development and tests only; a
// production deployment loads keys from a multi-party ceremony.
package params

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/consensys/gnark-crypto/ecc"
	"github.com/consensys/gnark/backend/groth16"
	groth16bls "github.com/consensys/gnark/backend/groth16/bls12-381"
	csbls "github.com/consensys/gnark/constraint/bls12-381"
	"github.com/consensys/gnark/frontend"
	"github.com/consensys/gnark/frontend/cs/r1cs"

	"github.com/c2flow/c2flow/porep"
	"github.com/c2flow/c2flow/porep/circuit"
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

// SynthBytes estimates a partition's synthesis memory: the wire vector and
// a, b, c (one element per constraint each), 32 bytes an element.
func SynthBytes(ccs *csbls.R1CS) int64 {
	wires := ccs.GetNbPublicVariables() + ccs.GetNbSecretVariables() + ccs.GetNbInternalVariables()
	return int64(wires+3*ccs.GetNbConstraints()) * 32
}

// Load returns the profile's keys (log may be nil): compiled here, keys read from the store
// when it has them for this circuit digest, else made by a development setup
// and written to the store so the next run reuses them.
func Load(ctx context.Context, store Store, p porep.Profile, log *slog.Logger) (*Keys, error) {
	k, err := load(ctx, store, p, log)
	if err == nil || !errors.Is(err, ErrNotFound) {
		return k, err
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
	if err := k.write(ctx, store); err != nil {
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
	k := &Keys{Profile: p, Digest: digest, CCS: ccs, PK: new(groth16bls.ProvingKey), VK: new(groth16bls.VerifyingKey)}
	if err := k.read(ctx, store); err != nil {
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

func (k *Keys) read(ctx context.Context, store Store) error {
	for _, f := range []struct {
		name string
		read func(io.Reader) error
		sum  *string
	}{
		{"vk", func(r io.Reader) error { _, err := k.VK.UnsafeReadFrom(r); return err }, &k.VKSHA256},
		{"pk", func(r io.Reader) error { _, err := k.PK.UnsafeReadFrom(r); return err }, &k.PKSHA256},
	} {
		rc, err := store.Open(ctx, k.Prefix()+f.name)
		if err != nil {
			return fmt.Errorf("open %s%s: %w", k.Prefix(), f.name, err)
		}
		h := sha256.New()
		err = f.read(io.TeeReader(rc, h))
		if err == nil { // the rest of the file, if the decoder left any
			_, err = io.Copy(h, rc)
		}
		*f.sum = hex.EncodeToString(h.Sum(nil))
		cerr := rc.Close()
		if err != nil {
			return fmt.Errorf("decode %s%s: %w", k.Prefix(), f.name, err)
		}
		if cerr != nil {
			return fmt.Errorf("read %s%s: %w", k.Prefix(), f.name, cerr)
		}
	}
	return nil
}

func (k *Keys) write(ctx context.Context, store Store) error {
	var none string
	for _, f := range []struct {
		name  string
		write func(io.Writer) error
		sum   *string
	}{
		// vk last: its presence marks a complete set.
		{"r1cs", func(w io.Writer) error { _, err := k.CCS.WriteTo(w); return err }, &none},
		{"pk", func(w io.Writer) error { _, err := k.PK.WriteRawTo(w); return err }, &k.PKSHA256},
		{"vk", func(w io.Writer) error { _, err := k.VK.WriteRawTo(w); return err }, &k.VKSHA256},
	} {
		write := func(w io.Writer) error {
			h := sha256.New()
			err := f.write(io.MultiWriter(w, h))
			*f.sum = hex.EncodeToString(h.Sum(nil))
			return err
		}
		if err := store.Put(ctx, k.Prefix()+f.name, write); err != nil {
			return fmt.Errorf("store %s%s: %w", k.Prefix(), f.name, err)
		}
	}
	return nil
}

// DirStore is a Store in a local directory: the param cache of a worker.
type DirStore struct{ Root string }

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
