package snark

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/debug"
	"time"

	"github.com/c2flow/c2flow/filecoin/groth"
	"github.com/c2flow/c2flow/filecoin/paramfiles"
	"github.com/c2flow/c2flow/filecoin/r1cs"
	"github.com/c2flow/c2flow/internal/atomicfile"
	"github.com/c2flow/c2flow/internal/flock"
	"github.com/c2flow/c2flow/internal/mapped"
	"github.com/c2flow/c2flow/prover/packed"
)

// recordDirectAbove is the size past which a circuit is recorded straight
// into its system (a Recorder, after a Counter sized it), never as a
// Shape: a 32GiB PoRep partition's Shape is about 9 GB beside its 5.9 GB
// system.
const recordDirectAbove = 1 << 24

// stampsOf keeps, under a cache directory, what was checked of files
// (their digests) against their stamps.
func stampsOf(dir string) mapped.Stamps { return mapped.Stamps{Dir: filepath.Join(dir, "stamps")} }

// systemCached returns sp's recorded constraint system, mapped from dir:
// recorded and saved there first if no process has (processes sharing
// dir wait for the one recording). A file there that fails its checks is
// recorded again. sp must be a circuit whose system is its shape's (not
// a PoSt's: sp.system nil).
func systemCached(ctx context.Context, dir string, sp *spec, log *slog.Logger) (*r1cs.MappedSystem, error) {
	path := filepath.Join(dir, sp.shapeName+".sys")
	stamps := stampsOf(dir)
	if ms, err := r1cs.MapSystem(ctx, path, stamps); err == nil {
		return ms, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("%s circuit: %w", sp.name, err)
	}
	unlock, err := flock.Lock(ctx, filepath.Join(dir, ".lock-"+sp.shapeName+".sys"))
	if err != nil {
		return nil, fmt.Errorf("%s circuit: %w", sp.name, err)
	}
	defer unlock()
	ms, err := r1cs.MapSystem(ctx, path, stamps)
	if err == nil {
		return ms, nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		log.Warn("recorded circuit unusable: recording it again", "file", path, "err", err)
	}
	t0 := time.Now()
	sys, digest, err := recordSystem(dir, sp)
	if err != nil {
		return nil, fmt.Errorf("%s circuit: %w", sp.name, err)
	}
	if err := r1cs.SaveSystem(path, sys, sp.numInputs, digest); err != nil {
		return nil, fmt.Errorf("%s circuit: %w", sp.name, err)
	}
	log.Info("circuit recorded and saved, to be mapped by every process", "proof", sp.name, "file", path,
		"system_bytes", sys.Bytes(), "s", time.Since(t0).Seconds())
	sys = nil
	debug.FreeOSMemory()
	return r1cs.MapSystem(ctx, path, stamps)
}

// recordSystem records sp's system in memory and names it by its shape's
// digest: through the shape cache in dir where the circuit is small
// (a development setup records the shape anyway), else straight into the
// system, whose digest is computed from it.
func recordSystem(dir string, sp *spec) (*packed.System, string, error) {
	if !sp.knownOK || sp.known.Constraints <= recordDirectAbove {
		shape, digest, err := recordCached(dir, sp)
		if err != nil {
			return nil, "", err
		}
		sys, err := shape.System()
		return sys, digest, err
	}
	cnt := r1cs.NewCounter()
	if err := sp.synth(cnt); err != nil {
		return nil, "", fmt.Errorf("counting: %w", err)
	}
	if err := cnt.Err(); err != nil {
		return nil, "", fmt.Errorf("counting: %w", err)
	}
	rec := r1cs.NewRecorder(cnt.Stats())
	if err := sp.synth(rec); err != nil {
		return nil, "", fmt.Errorf("recording: %w", err)
	}
	rec.AppendInputConstraints()
	sys, err := rec.Build()
	if err != nil {
		return nil, "", err
	}
	digest, err := r1cs.SystemDigest(sys, sp.numInputs)
	return sys, digest, err
}

// keyFile returns the proving key of the pair loc (whose digests are
// pSums and vSums, whose verifying key is vk) for the circuit named digest
// of density d, mapped from dir/keys: converted from the .params file and
// saved there first if no process has (processes sharing dir wait for
// the one converting). A key file there that fails its checks, or was
// made from other files, is converted again.
func keyFile(ctx context.Context, dir string, loc *paramfiles.Located, pSums, vSums paramfiles.Sums, vk *groth.VerifyingKey,
	digest string, density func() (*groth.Density, error), log *slog.Logger) (*groth.MappedKey, error) {
	kdir := filepath.Join(dir, "keys")
	path := filepath.Join(kdir, pSums.SHA256[:32]+"-"+digest[:16]+".gkey")
	stamps := stampsOf(dir)
	open := func() (*groth.MappedKey, error) {
		k, err := groth.MapKeyFile(ctx, path, vk, stamps)
		if err != nil {
			return nil, err
		}
		if m := k.Meta; m.Params != pSums.SHA256 || m.VK != vSums.SHA256 || m.Circuit != digest {
			k.Close()
			return nil, fmt.Errorf("key file %s was made from params %.16s, vk %.16s, circuit %.16s; want %.16s, %.16s, %.16s: %w",
				path, m.Params, m.VK, m.Circuit, pSums.SHA256, vSums.SHA256, digest, mapped.ErrBadFile)
		}
		return k, nil
	}
	if k, err := open(); err == nil {
		return k, nil
	}
	if err := os.MkdirAll(kdir, 0o755); err != nil {
		return nil, fmt.Errorf("key file: %w", err)
	}
	unlock, err := flock.Lock(ctx, path+".lock")
	if err != nil {
		return nil, fmt.Errorf("key file: %w", err)
	}
	defer unlock()
	k, err := open()
	if err == nil {
		return k, nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		log.Warn("key file unusable: converting the parameters again", "file", path, "err", err)
	}
	t0 := time.Now()
	d, err := density()
	if err != nil {
		return nil, err
	}
	gp, err := groth.ReadParamsFile(loc.Params, groth.ReadOptions{})
	if err != nil {
		return nil, err
	}
	if !gp.VK.Equal(vk) {
		return nil, fmt.Errorf("%s and %s hold different verifying keys: not a pair: %w", loc.Params, loc.VK, paramfiles.ErrBadParams)
	}
	pk, _, err := gp.ToGnark(d)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", loc.Params, err)
	}
	gp, d = nil, nil
	if err := groth.WriteKeyFile(path, pk, groth.KeyMeta{Params: pSums.SHA256, VK: vSums.SHA256, Circuit: digest}); err != nil {
		return nil, err
	}
	pk = nil
	debug.FreeOSMemory()
	log.Info("parameters converted to a key file, to be mapped by every process", "params", filepath.Base(loc.Params), "file", path, "s", time.Since(t0).Seconds())
	return open()
}

// densityOf is the density of a system of inputs inputs (a recorded one
// or a PoSt's repeated one): the wires A and B leave out, computed when a
// .params file is converted.
func densityOf(rs packed.Rows, inputs int) func() (*groth.Density, error) {
	return func() (*groth.Density, error) {
		return &groth.Density{NumConstraints: rs.Rows(), NumInputs: inputs, NumAux: rs.Wires() - inputs,
			InfinityA: packed.UnusedOf(rs, packed.A), InfinityB: packed.UnusedOf(rs, packed.B)}, nil
	}
}

// repeatedDigest is the digest of a PoSt circuit (its shape's), computed
// from its repeated system: once, then kept in dir under its block's
// digest and copy count, which a change of the circuit's code changes (a
// 32GiB window partition's rows are gigabytes to hash; its block's, a few
// megabytes).
func repeatedDigest(dir string, sp *spec, rows *packed.Repeated) (string, error) {
	block, copies, blockIn := rows.Block()
	bd, err := r1cs.SystemDigest(block, 1+blockIn)
	if err != nil {
		return "", err
	}
	type kept struct {
		Block  string `json:"block"`
		Copies int    `json:"copies"`
		Digest string `json:"digest"`
	}
	path := filepath.Join(dir, sp.shapeName+".digest.json")
	var k kept
	if b, err := os.ReadFile(path); err == nil && json.Unmarshal(b, &k) == nil && k.Block == bd && k.Copies == copies && len(k.Digest) == 64 {
		return k.Digest, nil
	}
	d, err := r1cs.SystemDigest(rows, sp.numInputs)
	if err != nil {
		return "", err
	}
	b, err := json.Marshal(kept{Block: bd, Copies: copies, Digest: d})
	if err == nil && os.MkdirAll(dir, 0o755) == nil {
		// Not kept, the next process computes it again.
		_ = atomicfile.WriteBytes(path, b)
	}
	return d, nil
}

// digestOf is sp's circuit digest, from what dir keeps of it: its mapped
// system's, or a PoSt circuit's repeated system's.
func digestOf(ctx context.Context, dir string, sp *spec, log *slog.Logger) (string, error) {
	if sp.system == nil {
		ms, err := systemCached(ctx, dir, sp, log)
		if err != nil {
			return "", err
		}
		defer ms.Close()
		return ms.Digest, nil
	}
	rows, err := sp.system()
	if err != nil {
		return "", err
	}
	return repeatedDigest(dir, sp, rows)
}
