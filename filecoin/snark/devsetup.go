package snark

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
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
// systems. A circuit whose setup would not fit this machine's memory
// (SetupBytes) is refused, naming both. A dir that already holds
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
	if err := setupFits(sp, memTotal()); err != nil {
		return Files{}, err
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
	// The circuit's digest names its setup: from the system this box
	// recorded once (a setup in place costs no recording), the shape
	// recorded only to make a setup.
	digest, err := digestOf(ctx, DefaultShapeDir(), sp, log)
	if err != nil {
		return Files{}, fmt.Errorf("development setup of %s: recording the circuit: %w", sp.name, err)
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

	shape, err := sp.record()
	if err != nil {
		return Files{}, fmt.Errorf("development setup of %s: recording the circuit: %w", sp.name, err)
	}
	if d, err := shape.Digest(); err != nil || d != digest {
		return Files{}, fmt.Errorf("development setup of %s: the recorded shape's digest %.16s, the circuit's %.16s (%v)", sp.name, d, digest, err)
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

// SetupBytesPerConstraint bounds what a development setup holds per
// constraint: the recorded shape (about 70 B), the system (about 45 B),
// the proving key's points (A, B in G1 and G2, C/L and H: about 500 B
// per aux and per domain element) and gnark's setup vectors over the
// domain. 1 KiB each is above all of it.
const SetupBytesPerConstraint = 1 << 10

// SetupBytes estimates the memory a development setup of proof's circuit
// needs, from its known counts: 32GiB WinningPoSt 0.4 GB, 512MiB PoRep
// 4.5 GB, 32GiB PoRep 133 GB.
func SetupBytes(proof string) (int64, error) {
	sp, err := specOf(proof)
	if err != nil {
		return 0, err
	}
	return sp.setupBytes()
}

func (sp *spec) setupBytes() (int64, error) {
	if !sp.knownOK {
		return 0, fmt.Errorf("development setup of %s: no known circuit counts to size its setup by", sp.name)
	}
	return int64(sp.known.Constraints) * SetupBytesPerConstraint, nil
}

// setupFits refuses a setup whose estimate is over 80% of total, the
// machine's memory (0: unknown, not checked).
func setupFits(sp *spec, total int64) error {
	need, err := sp.setupBytes()
	if err != nil {
		return err
	}
	if total > 0 && need > total/5*4 {
		return fmt.Errorf("development setup of %s: its %d constraints need about %.1f GB, over 80%% of this machine's %.1f GB", sp.name, sp.known.Constraints, float64(need)/1e9, float64(total)/1e9)
	}
	return nil
}

// memTotal is the machine's memory in bytes (0 where /proc/meminfo says
// nothing).
func memTotal() int64 {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(l, "MemTotal:"); ok {
			var kb int64
			if _, err := fmt.Sscanf(strings.TrimSpace(rest), "%d kB", &kb); err == nil {
				return kb << 10
			}
		}
	}
	return 0
}
