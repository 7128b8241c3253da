package snark

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/debug"
	"time"

	"github.com/c2flow/c2flow/filecoin/groth"
	"github.com/c2flow/c2flow/filecoin/r1cs"
	"github.com/c2flow/c2flow/internal/atomicfile"
	"github.com/c2flow/c2flow/internal/flock"
)

// DefaultSetupCache is where development setups are cached by circuit
// digest by default: r1cs.DefaultSetupCache, machine-wide.
func DefaultSetupCache() r1cs.SetupCache { return r1cs.DefaultSetupCache() }

// devMarkerText is the development marker's content.
const devMarkerText = `DEVELOPMENT SETUP

The .params and .vk files in this directory come from a single-party
setup (c2flow filecoin/groth Generate, bellperson's
generate_random_parameters), whose toxic waste the machine that ran it
knew. Proofs made with them verify only under these .vk files and are
worthless on chain. Never use them for real sectors.
`

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
	base := sp.prefix + "dev" + digest[:16]
	files := Files{Params: filepath.Join(dir, base+".params"), VK: filepath.Join(dir, base+".vk")}
	jsonPath := filepath.Join(dir, ParametersJSON)
	entries, err := readParametersFile(jsonPath)
	if err != nil {
		return Files{}, fmt.Errorf("development setup: %w", err)
	}
	if devSetupDone(dir, files, entries, sp.sectorSize) {
		// Nothing new is made: the warning was given when it was (below).
		log.Info("development setup already in place", "params", files.Params)
		return files, nil
	}

	cached, made, err := groth.DevSetup(ctx, cache, shape, digest, log)
	if err != nil {
		return Files{}, fmt.Errorf("development setup of %s: %w", sp.name, err)
	}
	shape = nil
	for _, f := range []struct{ from, to string }{{cached.Params, files.Params}, {cached.VK, files.VK}} {
		if err := linkOrCopy(f.from, f.to); err != nil {
			return Files{}, fmt.Errorf("development setup of %s: %w", sp.name, err)
		}
	}
	debug.FreeOSMemory()
	if entries == nil {
		entries = map[string]groth.ParameterEntry{}
	}
	for _, path := range []string{files.Params, files.VK} {
		sums, err := sumFile(ctx, path)
		if err != nil {
			return Files{}, fmt.Errorf("development setup of %s: %w", sp.name, err)
		}
		entries[filepath.Base(path)] = groth.ParameterEntry{Digest: sums.filDig, SectorSize: sp.sectorSize}
	}
	b, err := json.MarshalIndent(entries, "", "  ")
	if err != nil {
		return Files{}, fmt.Errorf("development setup: %w", err)
	}
	if err := atomicfile.Write(jsonPath, func(w io.Writer) error { _, err := w.Write(append(b, '\n')); return err }); err != nil {
		return Files{}, fmt.Errorf("development setup: %w", err)
	}
	if err := atomicfile.Write(filepath.Join(dir, DevMarker), func(w io.Writer) error { _, err := io.WriteString(w, devMarkerText); return err }); err != nil {
		return Files{}, fmt.Errorf("development setup: %w", err)
	}
	log.Warn("DEVELOPMENT SETUP written: single-party keys, never for real sectors",
		"params", files.Params, "vk", files.VK, "generated", made, "s", time.Since(t0).Seconds())
	return files, nil
}

// devSetupDone reports whether dir holds files listed in entries with the
// sector size, and the development marker.
func devSetupDone(dir string, files Files, entries map[string]groth.ParameterEntry, size uint64) bool {
	for _, p := range []string{files.Params, files.VK, filepath.Join(dir, DevMarker)} {
		if _, err := os.Stat(p); err != nil {
			return false
		}
	}
	for _, p := range []string{files.Params, files.VK} {
		if e, ok := entries[filepath.Base(p)]; !ok || e.SectorSize != size {
			return false
		}
	}
	return true
}

// readParametersFile reads a parameters.json; an absent one is nil.
func readParametersFile(path string) (map[string]groth.ParameterEntry, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	m, err := groth.ParseParametersJSON(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return m, nil
}

// linkOrCopy puts from at to: a hard link, or a copy (through a temporary
// file) where the two are on different file systems.
func linkOrCopy(from, to string) error {
	os.Remove(to)
	if err := os.Link(from, to); err == nil {
		return nil
	}
	src, err := os.Open(from)
	if err != nil {
		return err
	}
	defer src.Close()
	return atomicfile.Write(to, func(w io.Writer) error { _, err := io.Copy(w, src); return err })
}

// Publisher is a Remote that keys can be published to (storage.Store).
type Publisher interface {
	Remote
	Head(ctx context.Context, key string) (string, error)
	UploadFile(ctx context.Context, key, src string) error
}

// EnsureKeys implements scheme.Scheme. Filecoin's real parameters are the
// operator's (Filecoin's published files, installed on the hosts or in
// their storage): without dev there is nothing to make, and a host that
// lacks them says so (scheme.ErrNoKeys) when it loads the circuit. With
// dev, a DEVELOPMENT setup of proof (2KiB and 8MiB; from the machine's
// setup cache when it has one) is written in Filecoin's format to the
// parameter directory and published to the Remote under RemotePrefix,
// where hosts without the files find them. notes is told what a user
// waits for.
func (s *Scheme) EnsureKeys(ctx context.Context, proof string, dev bool, notes io.Writer) error {
	return s.ensureKeys(ctx, proof, dev, notes)
}

// ensureKeys is EnsureKeys of a seal proof or an update profile.
func (s *keyring) ensureKeys(ctx context.Context, proof string, dev bool, notes io.Writer) error {
	if !dev {
		return nil
	}
	dir := s.params.dir()
	cache := DefaultSetupCache()
	fmt.Fprintf(notes, "   %s: making Filecoin-format DEVELOPMENT parameters (single-party setup, never for real sectors) (made once, about a minute for 2KiB on 2 cores, then cached in %s) ...", proof, cache.Dir)
	t := time.Now()
	files, err := DevSetup(ctx, proof, dir, cache, s.log)
	if err != nil {
		fmt.Fprintln(notes)
		return err
	}
	fmt.Fprintf(notes, " done in %v\n", time.Since(t).Round(time.Millisecond))
	if s.params.Remote == nil {
		return nil
	}
	pub, ok := s.params.Remote.(Publisher)
	if !ok {
		return fmt.Errorf("publish the %s development setup: the parameters' storage (%T) takes no uploads", proof, s.params.Remote)
	}
	// parameters.json lists every pair of dir: uploaded each time so that
	// it lists this one too.
	for _, path := range []string{files.Params, files.VK, filepath.Join(dir, DevMarker), filepath.Join(dir, ParametersJSON)} {
		key := RemotePrefix + filepath.Base(path)
		if _, err := pub.Head(ctx, key); err == nil && filepath.Base(path) != ParametersJSON {
			continue
		} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("publish %s: %w", key, err)
		}
		if err := pub.UploadFile(ctx, key, path); err != nil {
			return fmt.Errorf("publish %s: %w", key, err)
		}
	}
	return nil
}
