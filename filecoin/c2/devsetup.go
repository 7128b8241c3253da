package c2

import (
	"bufio"
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

	csbls "github.com/consensys/gnark/constraint/bls12-381"

	"github.com/c2flow/c2flow/filecoin/groth"
	"github.com/c2flow/c2flow/filecoin/proofs"
	"github.com/c2flow/c2flow/filecoin/r1cs"
)

// DefaultSetupCache is where development setups' gnark keys are cached by
// default: r1cs.DefaultSetupCache, machine-wide.
func DefaultSetupCache() r1cs.SetupCache { return r1cs.DefaultSetupCache() }

// devMarkerText is the development marker's content.
const devMarkerText = `DEVELOPMENT SETUP

The .params and .vk files in this directory come from gnark's single-party
groth16.Setup (c2flow filecoin/c2 DevSetup), whose toxic waste the machine
that ran it knew. Proofs made with them verify only under these .vk files
and are worthless on chain. Never use them for real sectors.
`

// DevSetup writes into dir a DEVELOPMENT SETUP of proofName's circuit in
// Filecoin's format: a .params/.vk pair named as Filecoin names the
// proof's pair (PairPrefix + "<shape>-sha256_hasher-dev<circuit digest
// prefix>"), made by groth.FromGnark from gnark's groth16.Setup over the
// recorded circuit, their digests added to dir's parameters.json and the
// DevMarker file written, so that a Scheme over dir loads them (saying
// DEVELOPMENT SETUP in every log line and error). gnark's keys come from
// cache (made there by groth16.Setup when absent: 16.5 minutes for 2KiB on
// a 2-core machine; converting cached keys takes seconds); a zero cache is
// DefaultSetupCache(). Only 2KiB proofs, and 8MiB ones (a longer setup),
// are allowed. A dir that already holds the pair, listed with the marker,
// is left as it is. log (may be nil) gets a WARN with the time taken.
func DevSetup(ctx context.Context, proofName, dir string, cache r1cs.SetupCache, log *slog.Logger) (Files, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	info, err := proofs.ByName(proofName)
	if err != nil {
		return Files{}, fmt.Errorf("development setup: %w", err)
	}
	log = log.With("proof", info.Name, "parameters", "DEVELOPMENT SETUP", "dir", dir)
	switch info.SectorSize {
	case 2 << 10:
	case 8 << 20:
		log.Warn("a development setup of the 8MiB circuit (3.8M constraints) takes a long time where it is not cached: about half an hour and several GiB on a 2-core machine")
	default:
		return Files{}, fmt.Errorf("development setup of %s: only 2KiB and 8MiB proofs (a setup of a %d-byte sector's circuit would take hours to days)", info.Name, info.SectorSize)
	}
	if cache.Dir == "" {
		cache = DefaultSetupCache()
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return Files{}, fmt.Errorf("development setup: %w", err)
	}
	unlock, err := r1cs.LockFile(ctx, filepath.Join(dir, ".lock-devsetup"))
	if err != nil {
		return Files{}, fmt.Errorf("development setup in %s: %w", dir, err)
	}
	defer unlock()

	t0 := time.Now()
	shape, err := recordShape(info)
	if err != nil {
		return Files{}, fmt.Errorf("development setup of %s: recording the circuit: %w", info.Name, err)
	}
	digest, err := shape.Digest()
	if err != nil {
		return Files{}, fmt.Errorf("development setup of %s: %w", info.Name, err)
	}
	base := PairPrefix + info.TreeR.String() + "-sha256_hasher-dev" + digest[:16]
	files := Files{Params: filepath.Join(dir, base+".params"), VK: filepath.Join(dir, base+".vk")}
	jsonPath := filepath.Join(dir, ParametersJSON)
	entries, err := readParametersFile(jsonPath)
	if err != nil {
		return Files{}, fmt.Errorf("development setup: %w", err)
	}
	if devSetupDone(dir, files, entries, info.SectorSize) {
		log.Warn("DEVELOPMENT SETUP already in place", "params", files.Params)
		return files, nil
	}

	numVars, numConstraints := shape.NumInputs+shape.NumAux, shape.NumConstraints()
	pk, vk, cached, err := cache.Keys(ctx, digest, numVars, numConstraints, func() (*csbls.R1CS, error) { return shape.Gnark() }, log)
	if err != nil {
		return Files{}, fmt.Errorf("development setup of %s: %w", info.Name, err)
	}
	shape = nil
	p, err := groth.FromGnark(pk, vk)
	if err != nil {
		return Files{}, fmt.Errorf("development setup of %s: %w", info.Name, err)
	}
	pk = nil
	for _, f := range []struct {
		path string
		w    io.WriterTo
	}{{files.Params, p}, {files.VK, &p.VK}} {
		if err := writeFileAtomic(f.path, func(w io.Writer) error { _, err := f.w.WriteTo(w); return err }); err != nil {
			return Files{}, fmt.Errorf("development setup of %s: %w", info.Name, err)
		}
	}
	p = nil
	debug.FreeOSMemory()
	if entries == nil {
		entries = map[string]groth.ParameterEntry{}
	}
	for _, path := range []string{files.Params, files.VK} {
		sums, err := sumFile(ctx, path)
		if err != nil {
			return Files{}, fmt.Errorf("development setup of %s: %w", info.Name, err)
		}
		entries[filepath.Base(path)] = groth.ParameterEntry{Digest: sums.filDig, SectorSize: info.SectorSize}
	}
	b, err := json.MarshalIndent(entries, "", "  ")
	if err != nil {
		return Files{}, fmt.Errorf("development setup: %w", err)
	}
	if err := writeFileAtomic(jsonPath, func(w io.Writer) error { _, err := w.Write(append(b, '\n')); return err }); err != nil {
		return Files{}, fmt.Errorf("development setup: %w", err)
	}
	if err := writeFileAtomic(filepath.Join(dir, DevMarker), func(w io.Writer) error { _, err := io.WriteString(w, devMarkerText); return err }); err != nil {
		return Files{}, fmt.Errorf("development setup: %w", err)
	}
	log.Warn("DEVELOPMENT SETUP written: single-party keys, never for real sectors",
		"params", files.Params, "vk", files.VK, "gnark_keys_cached", cached, "s", time.Since(t0).Seconds())
	return files, nil
}

// DevSetupCached reports whether cache holds the gnark keys of proofName's
// circuit, so that DevSetup converts them in seconds instead of running a
// setup. It records the circuit (about a second for 2KiB).
func DevSetupCached(proofName string, cache r1cs.SetupCache) (bool, error) {
	info, err := proofs.ByName(proofName)
	if err != nil {
		return false, err
	}
	shape, err := recordShape(info)
	if err != nil {
		return false, fmt.Errorf("recording the %s circuit: %w", info.Name, err)
	}
	digest, err := shape.Digest()
	if err != nil {
		return false, err
	}
	return cache.Has(digest), nil
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

// writeFileAtomic writes path through a temporary file renamed into
// place: the file is whole or absent.
func writeFileAtomic(path string, write func(io.Writer) error) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	bw := bufio.NewWriterSize(f, 1<<20)
	if err := write(bw); err != nil {
		f.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := bw.Flush(); err != nil {
		f.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return os.Rename(f.Name(), path)
}
