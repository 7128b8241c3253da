package snark

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/debug"
	"time"

	"github.com/c2flow/c2flow/filecoin/groth"
	"github.com/c2flow/c2flow/filecoin/paramfiles"
	"github.com/c2flow/c2flow/filecoin/r1cs"
	"github.com/c2flow/c2flow/internal/flock"
)

// DefaultSetupCache is where development setups are cached by circuit
// digest by default: r1cs.DefaultSetupCache, machine-wide.
func DefaultSetupCache() r1cs.SetupCache { return r1cs.DefaultSetupCache() }

// DevSetup writes into dir a DEVELOPMENT SETUP of proofName's circuit (a
// registered seal proof, or an update profile: UpdateProfile) in
// Filecoin's format: a .params/.vk pair named as Filecoin names the
// proof's pair up to its identifier, then "dev" and the circuit digest's
// prefix (PairPrefix + "<shape>-sha256_hasher-dev<digest>" for a seal
// proof), their digests added to dir's parameters.json and the
// DevMarker file written, so that a Scheme over dir loads them (saying
// DEVELOPMENT SETUP in every log line and error). The pair comes from
// cache by circuit digest (groth.DevSetup: generated there when absent,
// about a minute for 2KiB on two cores; a zero cache is
// DefaultSetupCache()) and is hard-linked into dir, or copied across file
// systems. Only 2KiB and 8MiB proofs are allowed. A dir that already holds
// the pair, listed with the marker, is left as it is. log (may be nil)
// gets a WARN with the time taken.
func DevSetup(ctx context.Context, proofName, dir string, cache r1cs.SetupCache, log *slog.Logger) (Files, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	sp, err := specOf(proofName)
	if err != nil {
		return Files{}, fmt.Errorf("development setup: %w", err)
	}
	log = log.With("proof", sp.name, "parameters", "DEVELOPMENT SETUP", "dir", dir)
	switch sp.sectorSize {
	case 2 << 10, 8 << 20:
	default:
		return Files{}, fmt.Errorf("development setup of %s: only 2KiB and 8MiB proofs (a setup of a %d-byte sector's circuit needs tens to hundreds of GiB)", sp.name, sp.sectorSize)
	}
	if cache.Dir == "" {
		cache = DefaultSetupCache()
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return Files{}, fmt.Errorf("development setup: %w", err)
	}
	unlock, err := flock.Lock(ctx, filepath.Join(dir, ".lock-devsetup"))
	if err != nil {
		return Files{}, fmt.Errorf("development setup in %s: %w", dir, err)
	}
	defer unlock()

	t0 := time.Now()
	shape, err := sp.record()
	if err != nil {
		return Files{}, fmt.Errorf("development setup of %s: recording the circuit: %w", sp.name, err)
	}
	digest, err := shape.Digest()
	if err != nil {
		return Files{}, fmt.Errorf("development setup of %s: %w", sp.name, err)
	}
	files := paramfiles.DevPair(dir, paramfiles.DevBase(sp.prefix, digest))
	done, err := paramfiles.DevInstalled(dir, files, sp.sectorSize)
	if err != nil {
		return Files{}, fmt.Errorf("development setup of %s in %s: %w", sp.name, dir, err)
	}
	if done {
		// Nothing new is made: the warning was given when it was (below).
		log.Info("development setup already in place", "params", files.Params)
		return files, nil
	}

	cached, made, err := groth.DevSetup(ctx, cache, shape, digest, log)
	if err != nil {
		return Files{}, fmt.Errorf("development setup of %s: %w", sp.name, err)
	}
	shape = nil
	if err := paramfiles.InstallDev(ctx, dir, Files{Params: cached.Params, VK: cached.VK}, files, sp.sectorSize); err != nil {
		return Files{}, fmt.Errorf("development setup of %s: %w", sp.name, err)
	}
	debug.FreeOSMemory()
	log.Warn("DEVELOPMENT SETUP written: single-party keys, never for real sectors",
		"params", files.Params, "vk", files.VK, "generated", made, "s", time.Since(t0).Seconds())
	return files, nil
}

// ensureKeys is EnsureKeys of a seal proof or an update profile.
func (s *keyring) ensureKeys(ctx context.Context, proof string, dev bool, notes io.Writer) error {
	if !dev {
		return nil
	}
	cache := DefaultSetupCache()
	fmt.Fprintf(notes, "   %s: making Filecoin-format DEVELOPMENT parameters (single-party setup, never for real sectors) (made once, about a minute for 2KiB on 2 cores, then cached in %s) ...", proof, cache.Dir)
	t := time.Now()
	files, err := DevSetup(ctx, proof, s.params.dir(), cache, s.log)
	if err != nil {
		fmt.Fprintln(notes)
		return err
	}
	fmt.Fprintf(notes, " done in %v\n", time.Since(t).Round(time.Millisecond))
	if err := s.store.PublishDev(ctx, files); err != nil {
		return fmt.Errorf("publish the %s development setup: %w", proof, err)
	}
	return nil
}
