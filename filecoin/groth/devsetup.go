package groth

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/c2flow/c2flow/filecoin/r1cs"
	"github.com/c2flow/c2flow/internal/atomicfile"
	"github.com/c2flow/c2flow/internal/flock"
)

// DevFiles is a development setup's pair of files in a setup cache.
type DevFiles struct {
	Params, VK string
}

// DevSetup returns the DEVELOPMENT setup of the recorded shape whose
// digest is digest, in Filecoin's format, from cache:
// cache.Dir/<digest>/dev.params and dev.vk, made by [Generate] with
// crypto/rand when absent (about a minute for the 2KiB PoRep circuit on two
// cores, see BenchmarkDevSetup in filecoin/snark). Processes share the cache
// under a lock per digest, so one setup serves them all. made reports
// whether this call made it; log (may be nil) gets a WARN before and after.
// Its toxic waste was in this process's memory: the keys prove nothing on
// chain.
func DevSetup(ctx context.Context, cache r1cs.SetupCache, shape *r1cs.Shape, digest string, log *slog.Logger) (f DevFiles, made bool, err error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if len(digest) < 16 || filepath.Base(digest) != digest {
		return DevFiles{}, false, fmt.Errorf("development setup: invalid circuit digest %q", digest)
	}
	dir := filepath.Join(cache.Dir, digest)
	f = DevFiles{Params: filepath.Join(dir, "dev.params"), VK: filepath.Join(dir, "dev.vk")}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return DevFiles{}, false, fmt.Errorf("development setup cache: %w", err)
	}
	unlock, err := flock.Lock(ctx, filepath.Join(cache.Dir, ".lock-"+digest[:16]))
	if err != nil {
		return DevFiles{}, false, fmt.Errorf("development setup cache %s: %w", dir, err)
	}
	defer unlock()
	// The vk is written last: with it present, both files are whole.
	if _, err := os.Stat(f.VK); err == nil {
		return f, false, nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return DevFiles{}, false, fmt.Errorf("development setup cache: %w", err)
	}
	log = log.With("circuit", digest[:16], "constraints", shape.NumConstraints(), "cache", dir)
	log.Warn("generating a SINGLE-PARTY DEVELOPMENT SETUP (bellperson's generate_random_parameters), whose keys must never secure real sectors")
	t0 := time.Now()
	p, err := Generate(shape, rand.Reader)
	if err != nil {
		return DevFiles{}, false, fmt.Errorf("development setup %s: %w", digest[:16], err)
	}
	tGen := time.Since(t0)
	if err := atomicfile.Write(f.Params, func(w io.Writer) error { _, err := p.WriteTo(w); return err }); err != nil {
		return DevFiles{}, false, fmt.Errorf("development setup cache: %w", err)
	}
	if err := atomicfile.Write(f.VK, func(w io.Writer) error { _, err := p.VK.WriteTo(w); return err }); err != nil {
		return DevFiles{}, false, fmt.Errorf("development setup cache: %w", err)
	}
	log.Warn("DEVELOPMENT SETUP made", "generate_s", tGen.Seconds(), "total_s", time.Since(t0).Seconds(), "params", f.Params)
	return f, true, nil
}
