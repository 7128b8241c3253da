package r1cs

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"syscall"
	"time"

	groth16bls "github.com/consensys/gnark/backend/groth16/bls12-381"
	csbls "github.com/consensys/gnark/constraint/bls12-381"
)

// SetupCache is an on-disk cache of DEVELOPMENT Groth16 setups (gnark's
// single-party groth16.Setup, whose toxic waste the machine that ran it
// knows) of recorded shapes, by shape digest: Dir/<digest>/pk.dump (the
// proving key's raw dump) and Dir/<digest>/vk. The 2KiB Filecoin circuit's
// setup takes over 16 minutes on a small machine; reading it back takes
// seconds. Processes share the cache under a file lock (Dir/.lock-<digest
// prefix>), so one setup serves every process that needs it.
type SetupCache struct {
	Dir string
}

// DefaultSetupCache is the machine-wide cache of development setups:
// $C2FLOW_SETUP_CACHE, else <user cache dir>/c2flow/setups. It is keyed by
// shape digest, not kept under a checkout's parameter cache (C2FLOW_PARAMS),
// so a fresh clone's tests and demos reuse a setup this machine already
// made instead of spending a quarter of an hour on it again.
func DefaultSetupCache() SetupCache {
	if d := os.Getenv("C2FLOW_SETUP_CACHE"); d != "" {
		return SetupCache{Dir: d}
	}
	if d, err := os.UserCacheDir(); err == nil {
		return SetupCache{Dir: filepath.Join(d, "c2flow", "setups")}
	}
	return SetupCache{Dir: filepath.Join(os.TempDir(), "c2flow-setups")}
}

// ErrSetupMismatch is returned (wrapped) when cached keys do not fit the
// circuit they are cached for.
var ErrSetupMismatch = errors.New("cached development setup does not fit the circuit")

// Keys returns the development setup of the shape whose digest is digest:
// read from the cache, else made by groth16.Setup over ccs() (called only
// then) and written to the cache. numVars (inputs and aux) and
// numConstraints check the cached keys against the circuit. cached reports
// whether the keys were read. log (may be nil) gets a WARN before a setup
// runs and when it is done, with the time taken.
func (c SetupCache) Keys(ctx context.Context, digest string, numVars, numConstraints int, ccs func() (*csbls.R1CS, error), log *slog.Logger) (pk *groth16bls.ProvingKey, vk *groth16bls.VerifyingKey, cached bool, err error) {
	if !validDigest(digest) {
		return nil, nil, false, fmt.Errorf("development setup cache: invalid digest %q", digest)
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	dir := filepath.Join(c.Dir, digest)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, nil, false, fmt.Errorf("development setup cache: %w", err)
	}
	unlock, err := LockFile(ctx, filepath.Join(c.Dir, ".lock-"+digest[:16]))
	if err != nil {
		return nil, nil, false, fmt.Errorf("development setup cache %s: %w", dir, err)
	}
	defer unlock()

	pkFile, vkFile := filepath.Join(dir, "pk.dump"), filepath.Join(dir, "vk")
	pk, vk = new(groth16bls.ProvingKey), new(groth16bls.VerifyingKey)
	// The vk is written last: with it present, both files are complete.
	err = readCacheFile(vkFile, func(r io.Reader) error { _, err := vk.ReadFrom(r); return err })
	if err == nil {
		err = readCacheFile(pkFile, pk.ReadDump)
	}
	switch {
	case err == nil:
		if int(pk.Domain.Cardinality) < numConstraints || len(pk.InfinityA) != numVars {
			return nil, nil, false, fmt.Errorf("development setup cache %s: domain of %d for %d constraints, %d variables for %d (delete the directory to redo the setup): %w",
				dir, pk.Domain.Cardinality, numConstraints, len(pk.InfinityA), numVars, ErrSetupMismatch)
		}
		return pk, vk, true, nil
	case !errors.Is(err, fs.ErrNotExist):
		return nil, nil, false, fmt.Errorf("development setup cache: reading %s (delete the directory to redo the setup): %w", dir, err)
	}
	r1cs, err := ccs()
	if err != nil {
		return nil, nil, false, fmt.Errorf("development setup %s: %w", digest[:16], err)
	}
	log = log.With("circuit", digest[:16], "constraints", numConstraints, "cache", dir)
	log.Warn("running groth16.Setup: a SINGLE-PARTY DEVELOPMENT SETUP, whose keys must never secure real sectors (minutes to hours)")
	t0 := time.Now()
	if err := groth16bls.Setup(r1cs, pk, vk); err != nil {
		return nil, nil, false, fmt.Errorf("development setup %s: groth16 setup: %w", digest[:16], err)
	}
	log.Warn("DEVELOPMENT SETUP made", "setup_s", time.Since(t0).Seconds())
	if err := writeAtomic(pkFile, bufferedWrite(pk.WriteDump)); err != nil {
		return nil, nil, false, fmt.Errorf("development setup cache: writing %s: %w", pkFile, err)
	}
	if err := writeAtomic(vkFile, bufferedWrite(func(w io.Writer) error { _, err := vk.WriteTo(w); return err })); err != nil {
		return nil, nil, false, fmt.Errorf("development setup cache: writing %s: %w", vkFile, err)
	}
	return pk, vk, false, nil
}

// Has reports whether the cache holds a complete setup of the shape whose
// digest is digest (its vk, written last, is there).
func (c SetupCache) Has(digest string) bool {
	if !validDigest(digest) {
		return false
	}
	_, err := os.Stat(filepath.Join(c.Dir, digest, "vk"))
	return err == nil
}

// LockFile takes an exclusive flock on path (created if need be), polling
// so that ctx can end the wait; the returned func releases it. Processes
// sharing an on-disk cache serialize on it.
func LockFile(ctx context.Context, path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() { syscall.Flock(int(f.Fd()), syscall.LOCK_UN); f.Close() }, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			f.Close()
			return nil, fmt.Errorf("locking %s: %w", path, err)
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, fmt.Errorf("waiting for %s: %w", path, ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func readCacheFile(name string, read func(io.Reader) error) error {
	f, err := os.Open(name)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := read(bufio.NewReaderSize(f, 1<<20)); err != nil {
		return fmt.Errorf("reading %s: %w", name, err)
	}
	return nil
}

func bufferedWrite(write func(io.Writer) error) func(io.Writer) error {
	return func(w io.Writer) error {
		bw := bufio.NewWriterSize(w, 1<<20)
		if err := write(bw); err != nil {
			return err
		}
		return bw.Flush()
	}
}
