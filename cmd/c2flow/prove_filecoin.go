package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"sort"
	"strings"
	"time"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	csbls "github.com/consensys/gnark/constraint/bls12-381"

	"github.com/c2flow/c2flow/filecoin/c1"
	"github.com/c2flow/c2flow/filecoin/circuit"
	"github.com/c2flow/c2flow/filecoin/groth"
	"github.com/c2flow/c2flow/filecoin/proofs"
	"github.com/c2flow/c2flow/filecoin/r1cs"
	"github.com/c2flow/c2flow/filecoin/seal"
	"github.com/c2flow/c2flow/gpu"
	"github.com/c2flow/c2flow/params"
	"github.com/c2flow/c2flow/prover"
)

// filecoinProveFlags are c2flow prove's flags for Filecoin C1 files.
type filecoinProveFlags struct {
	proverID, sectorID string
	vk, pkParams       string
	shapeCache         string
}

func (f *filecoinProveFlags) add(fs *flag.FlagSet) {
	fs.StringVar(&f.proverID, "prover-id", "", "Filecoin C1: the prover id (32 bytes hex) the replica id is checked against, with the sector id (--sector-id, else the Commit2In SectorNum, else the N of a file named N.c1.json); default: a sectors.json beside the file, else the file's own public data")
	fs.StringVar(&f.sectorID, "sector-id", "", "Filecoin C1: the sector id (with --prover-id)")
	fs.StringVar(&f.vk, "vk", "", "Filecoin C1: the seal proof's verifying key (.vk); with --pk-params, instead of a search of --params")
	fs.StringVar(&f.pkParams, "pk-params", "", "Filecoin C1: the seal proof's parameters (.params); with --vk, instead of a search of --params")
	fs.StringVar(&f.shapeCache, "shape-cache", "", "Filecoin C1: directory caching the recorded circuit shapes (default: <c2flow parameter cache>/filecoin-shapes)")
}

// filecoinParamsDir is the default Filecoin parameter directory, as
// filecoin-proofs finds it: $FIL_PROOFS_PARAMETER_CACHE, else
// /var/tmp/filecoin-proof-parameters (rust-fil-proofs
// storage-proofs-core/src/parameter_cache.rs).
func filecoinParamsDir() string {
	if d := os.Getenv("FIL_PROOFS_PARAMETER_CACHE"); d != "" {
		return d
	}
	return "/var/tmp/filecoin-proof-parameters"
}

// filecoinC1Start matches the start of a Filecoin C1: a
// SealCommitPhase1Output's registered_proof names a StackedDrg variant
// (c2flow's own C1 names a profile there), a Commit2In wrapper has
// Phase1Out.
var filecoinC1Start = regexp.MustCompile(`"registered_proof"\s*:\s*"StackedDrg|(?i:"phase1out")`)

// looksFilecoin reports whether the start of a JSON file is a Filecoin
// C1's (filecoinC1Start).
func looksFilecoin(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	b := make([]byte, 64<<10)
	n, _ := io.ReadFull(f, b)
	return filecoinC1Start.Match(b[:n])
}

// filecoinPairPrefix is the name of Filecoin's seal parameter files up to
// the tree shape: v28-stacked-proof-of-replication-merkletree-
// poseidon_hasher-<shape>-sha256_hasher-<id>.params and .vk
// (rust-fil-proofs parameters.json).
const filecoinPairPrefix = "v28-stacked-proof-of-replication-merkletree-poseidon_hasher-"

// paramsPair is a seal proof's .params and .vk.
type paramsPair struct {
	params, vk string
	key        *groth.VerifyingKey
}

// findParamsPair picks in dir the single .params/.vk pair of the proof's
// tree shape whose verifying key has numInputs IC points (the circuit's
// inputs, ONE included). Several fitting pairs (2KiB, 8MiB and 512MiB share
// the 8-0-0 shape and may share the count) are told apart by the
// sector_size of a parameters.json in dir. The error lists what was found.
func findParamsPair(dir string, info proofs.SealProofInfo, numInputs int) (*paramsPair, error) {
	want := filecoinPairPrefix + info.TreeR.String() + "-sha256_hasher-"
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("finding %s parameters: %w", info.Name, err)
	}
	var seen []string
	var fits []*paramsPair
	for _, e := range ents {
		name := e.Name()
		if !strings.HasSuffix(name, ".vk") {
			continue
		}
		if !strings.HasPrefix(name, want) {
			if strings.HasPrefix(name, filecoinPairPrefix) {
				seen = append(seen, name+" (another tree shape)")
			}
			continue
		}
		p := &paramsPair{vk: filepath.Join(dir, name), params: filepath.Join(dir, strings.TrimSuffix(name, ".vk")+".params")}
		if _, err := os.Stat(p.params); err != nil {
			seen = append(seen, name+" (no .params beside it)")
			continue
		}
		key, err := groth.ReadVerifyingKeyFile(p.vk)
		if err != nil {
			seen = append(seen, fmt.Sprintf("%s (unreadable: %v)", name, err))
			continue
		}
		if len(key.IC) != numInputs {
			seen = append(seen, fmt.Sprintf("%s (%d IC points, want %d)", name, len(key.IC), numInputs))
			continue
		}
		p.key = key
		seen = append(seen, name+" (fits)")
		fits = append(fits, p)
	}
	if len(fits) > 1 {
		fits = bySectorSize(dir, fits, info.SectorSize)
	}
	if len(fits) == 1 {
		return fits[0], nil
	}
	found := "nothing of Filecoin's seal parameters"
	if len(seen) > 0 {
		sort.Strings(seen)
		found = strings.Join(seen, "; ")
	}
	what := "no"
	if len(fits) > 1 {
		what = fmt.Sprintf("%d", len(fits))
	}
	return nil, fmt.Errorf("%s: %s .params/.vk pair for %s (%s<id>.params and .vk, %d IC points) where one is needed; found: %s (or give --vk and --pk-params)",
		dir, what, info.Name, want, numInputs, found)
}

// bySectorSize keeps the pairs whose .vk parameters.json in dir lists with
// the sector size; without a parameters.json it keeps them all.
func bySectorSize(dir string, pairs []*paramsPair, size uint64) []*paramsPair {
	b, err := os.ReadFile(filepath.Join(dir, "parameters.json"))
	if err != nil {
		return pairs
	}
	m, err := groth.ParseParametersJSON(b)
	if err != nil {
		return pairs
	}
	var out []*paramsPair
	for _, p := range pairs {
		if e, ok := m[filepath.Base(p.vk)]; ok && e.SectorSize == size {
			out = append(out, p)
		}
	}
	return out
}

// filecoinShape returns the R1CS of the blank circuit of info, per-input
// constraints appended (as bellperson's parameter generator records it),
// from the cache in dir or recorded and cached there, and its digest.
func filecoinShape(dir string, info proofs.SealProofInfo) (*r1cs.Shape, string, error) {
	cache := r1cs.ShapeCache{Dir: dir}
	return cache.GetOrRecord("stacked-"+info.Name, func() (*r1cs.Shape, error) {
		s := r1cs.NewShape()
		if err := circuit.Synthesize(s, circuit.ShapeOf(info), nil); err != nil {
			return nil, err
		}
		s.AppendInputConstraints()
		return s, s.Err()
	})
}

// publicCCS is a gnark R1CS holding only the circuit's public variables:
// the split prover reads nothing else of Keys.CCS (its input count, to
// split the wires for the private MSM) when it proves a solution made
// elsewhere, and the whole circuit in gnark's form would double the memory
// of a large sector's shape.
func publicCCS(numInputs int) *csbls.R1CS {
	cs := csbls.NewR1CS(0)
	for i := range numInputs {
		cs.AddPublicVariable(fmt.Sprintf("input_%d", i))
	}
	return cs
}

// proveFilecoin proves a Filecoin C1 file: native check of the vanilla
// proofs against the sector's public data first, then one Groth16 proof
// per partition under the proof's parameters, every proof verified with
// the .vk before the concatenated 192-byte proofs are written to out.
func proveFilecoin(ctx context.Context, in, out, paramsDir string, f *filecoinProveFlags, pf *proverFlags, stdout, logw io.Writer) error {
	t0 := time.Now()
	a, err := c1.DecodeFile(in)
	if err != nil {
		return fmt.Errorf("prove: %w", err)
	}
	c := a.C1
	info, err := proofs.Lookup(c.RegisteredProof)
	if err != nil {
		return fmt.Errorf("prove %s: %w", in, err)
	}
	if f.proverID == "" && f.sectorID != "" {
		return fmt.Errorf("prove: --sector-id needs --prover-id")
	}
	pub, source, err := publicFor(in, a, &c1CheckFlags{proverID: f.proverID, sectorID: f.sectorID})
	if err != nil {
		return fmt.Errorf("prove %s: public data (%s): %w", in, source, err)
	}
	replicaID, commD, commR, seed := c.ReplicaID, c.CommD, c.CommR, c.Seed
	if pub == nil {
		err = seal.VerifyCarried(ctx, c)
	} else {
		err = seal.Verify(ctx, c, *pub)
		if err == nil {
			if replicaID, err = pub.ReplicaID(); err != nil {
				return fmt.Errorf("prove %s: %w", in, err)
			}
			commD, commR, seed = pub.CommD, pub.CommR, pub.Seed
		}
	}
	if err != nil {
		return fmt.Errorf("prove %s: C1 does not verify (public data: %s); not proved: %w", in, source, err)
	}
	fmt.Fprintf(logw, "%s: %s C1 verified natively in %v (public data: %s)\n", in, info.Name, time.Since(t0).Round(time.Millisecond), source)

	cshape := circuit.ShapeOf(info)
	var pair *paramsPair
	switch {
	case f.vk != "" && f.pkParams != "":
		key, err := groth.ReadVerifyingKeyFile(f.vk)
		if err != nil {
			return fmt.Errorf("prove: --vk: %w", err)
		}
		if len(key.IC) != cshape.NumInputs() {
			return fmt.Errorf("prove: --vk %s has %d IC points, %s needs %d: a key of another proof", f.vk, len(key.IC), info.Name, cshape.NumInputs())
		}
		pair = &paramsPair{params: f.pkParams, vk: f.vk, key: key}
	case f.vk != "" || f.pkParams != "":
		return fmt.Errorf("prove: --vk and --pk-params go together")
	default:
		if pair, err = findParamsPair(paramsDir, info, cshape.NumInputs()); err != nil {
			return fmt.Errorf("prove: %w", err)
		}
	}

	// The circuit's shape gives the densities that place bellperson's
	// points (it dropped those at infinity).
	t1 := time.Now()
	cacheDir := f.shapeCache
	if cacheDir == "" {
		cacheDir = filepath.Join(params.DefaultDir(), "filecoin-shapes")
	}
	shape, digest, err := filecoinShape(cacheDir, info)
	if err != nil {
		return fmt.Errorf("prove: %w", err)
	}
	if shape.NumInputs != cshape.NumInputs() {
		return fmt.Errorf("prove: cached shape %s in %s has %d inputs, %s needs %d", digest, cacheDir, shape.NumInputs, info.Name, cshape.NumInputs())
	}
	d, err := groth.DensityOf(shape)
	if err != nil {
		return fmt.Errorf("prove: %w", err)
	}
	numInputs, numAux, numConstraints := shape.NumInputs, shape.NumAux, shape.NumConstraints()
	shape = nil
	tShape := time.Since(t1)

	t1 = time.Now()
	gp, err := groth.ReadParamsFile(pair.params, groth.ReadOptions{})
	if err != nil {
		return fmt.Errorf("prove: %w", err)
	}
	if !gp.VK.Equal(pair.key) {
		return fmt.Errorf("prove: %s and %s hold different verifying keys: not a pair", pair.params, pair.vk)
	}
	pk, gvk, err := gp.ToGnark(d)
	if err != nil {
		return fmt.Errorf("prove: %s: %w", pair.params, err)
	}
	gp = nil
	debug.FreeOSMemory()
	fmt.Fprintf(logw, "keys: %s (%d constraints, %d inputs, %d aux; shape %s in %v), read in %v\n",
		filepath.Base(pair.params), numConstraints, numInputs, numAux, digest[:16], tShape.Round(time.Millisecond), time.Since(t1).Round(time.Millisecond))

	log, err := pf.logger()
	if err != nil {
		return err
	}
	ids, err := gpu.ParseDevices(pf.cuda)
	if err != nil {
		return err
	}
	slots, err := gpu.NewBackendSlots(pf.backend, ids, pf.devices)
	if err != nil {
		return err
	}
	pr, err := prover.New(&params.Keys{Digest: digest[:16], CCS: publicCCS(numInputs), PK: pk, VK: gvk}, log)
	if err != nil {
		return err
	}
	pr.EarlyG2 = pf.earlyG2

	parts := len(c.VanillaProofs.Partitions)
	sectorID := uint64(0)
	if pub != nil {
		sectorID = pub.SectorID
	}
	tProve := time.Now()
	gproofs := make([]groth.Proof, parts)
	inputs := make([][]fr.Element, parts)
	for k := range parts {
		id := prover.PartitionID(sectorID, k)
		if inputs[k], err = circuit.PublicInputsOf(info, replicaID, commD, commR, seed, k); err != nil {
			return fmt.Errorf("prove %s: %w", id, err)
		}
		ts := time.Now()
		cs, w, err := circuit.FromC1(c, k)
		if err != nil {
			return fmt.Errorf("prove %s: %w", id, err)
		}
		wit := r1cs.NewWitness(r1cs.WitnessOptions{ABC: true, InputsHint: numInputs, AuxHint: numAux, ConstraintsHint: numConstraints})
		if err := circuit.Synthesize(wit, cs, w); err != nil {
			return fmt.Errorf("prove %s: synthesis: %w", id, err)
		}
		wit.AppendInputConstraints()
		if err := wit.Err(); err != nil {
			return fmt.Errorf("prove %s: synthesis: %w", id, err)
		}
		if len(wit.Inputs) != numInputs || len(wit.Aux) != numAux || len(wit.A) != numConstraints {
			return fmt.Errorf("prove %s: witness of %d inputs, %d aux, %d constraints; the circuit has %d, %d, %d",
				id, len(wit.Inputs), len(wit.Aux), len(wit.A), numInputs, numAux, numConstraints)
		}
		sol := &prover.Solution{Partition: id,
			W: append(append(make([]fr.Element, 0, numInputs+numAux), wit.Inputs...), wit.Aux...),
			A: wit.A, B: wit.B, C: wit.C, SynthTime: time.Since(ts)}
		wit = nil
		tSynth := sol.SynthTime
		td := time.Now()
		partial, err := pr.Start(ctx, slots, sol)
		if err != nil {
			return fmt.Errorf("prove %s: %w", id, err)
		}
		tDevice := time.Since(td)
		gproof, tFinish, err := pr.Finish(ctx, partial)
		if err != nil {
			return fmt.Errorf("prove %s: %w", id, err)
		}
		if gproofs[k], err = groth.ProofFromGnark(gproof); err != nil {
			return fmt.Errorf("prove %s: %w", id, err)
		}
		fmt.Fprintf(logw, "partition %s: synth %v, device %v (NTT %v, MSM %v), finalize %v\n", id,
			tSynth.Round(time.Millisecond), tDevice.Round(time.Millisecond), partial.NTTTime.Round(time.Millisecond),
			partial.MSMTime.Round(time.Millisecond), tFinish.Round(time.Millisecond))
		sol, partial = nil, nil
		debug.FreeOSMemory()
	}
	tv := time.Now()
	if err := pair.key.Prepare().VerifyPartitions(gproofs, inputs); err != nil {
		return fmt.Errorf("prove %s: the proofs do not verify with %s; nothing written: %w", in, pair.vk, err)
	}
	tVerify := time.Since(tv)
	b := groth.EncodeProofs(gproofs)
	if out == "" {
		out = trimSuffix(trimSuffix(in, ".json"), ".c1") + ".proof"
	}
	if err := writeAtomicFile(out, b); err != nil {
		return fmt.Errorf("prove: %w", err)
	}
	el := time.Since(tProve)
	fmt.Fprintf(stdout, "%s: %s, %d partitions proved in %v (%.2f s/partition), verified with %s in %v -> %s (%d bytes)\n",
		in, info.Name, parts, el.Round(time.Millisecond), el.Seconds()/float64(parts), filepath.Base(pair.vk),
		tVerify.Round(time.Millisecond), out, len(b))
	return nil
}

// writeAtomicFile writes b to path through a temporary file renamed into
// place: a proof file is complete or absent.
func writeAtomicFile(path string, b []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return os.Rename(tmp.Name(), path)
}
