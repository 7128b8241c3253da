package snark

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync"
	"time"

	"github.com/c2flow/c2flow/filecoin/groth"
	"github.com/c2flow/c2flow/filecoin/paramfiles"
	"github.com/c2flow/c2flow/filecoin/r1cs"
	"github.com/c2flow/c2flow/prover"
	"github.com/c2flow/c2flow/prover/packed"
	"github.com/c2flow/c2flow/scheme"
)

// keyring finds, checks and loads the parameters of Filecoin's circuits
// (seal and update proofs alike), each circuit's once per process: the
// seal scheme and the update scheme of one process share one.
type keyring struct {
	params Params
	log    *slog.Logger

	mu    sync.Mutex
	loads map[string]*loading
	vks   map[string]*keys // verifying keys loaded alone (Verifier)
	store *paramfiles.Store

	// systems are the circuits' systems this process mapped, by spec key.
	sysMu   sync.Mutex
	systems map[string]*r1cs.MappedSystem
}

// loading is one circuit's load, shared by the callers that wait for it.
type loading struct {
	done chan struct{}
	k    *keys
	err  error
}

func newKeyring(p Params, log *slog.Logger) *keyring {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	log = log.With("scheme", "filecoin")
	return &keyring{params: p, log: log, loads: map[string]*loading{}, vks: map[string]*keys{}, store: p.store(log),
		systems: map[string]*r1cs.MappedSystem{}}
}

// circuit returns sp's keys: loaded on first use (the parameter pair
// located, downloaded if need be, checked against parameters.json, read
// and converted for the split prover) and kept. Proofs of one circuit
// share one load, and concurrent callers wait for the one in progress. A
// failed load is not kept: the next call tries again. Missing parameters
// wrap scheme.ErrNoKeys.
func (r *keyring) circuit(ctx context.Context, sp *spec) (*keys, error) {
	for {
		r.mu.Lock()
		l, ok := r.loads[sp.key]
		if !ok {
			l = &loading{done: make(chan struct{})}
			r.loads[sp.key] = l
		}
		r.mu.Unlock()
		if !ok {
			l.k, l.err = r.load(ctx, sp)
			if l.err != nil {
				r.mu.Lock()
				delete(r.loads, sp.key)
				r.mu.Unlock()
			}
			close(l.done)
		}
		select {
		case <-l.done:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		if l.err != nil {
			// Another caller's canceled load is not this caller's failure.
			if ok && ctx.Err() == nil && (errors.Is(l.err, context.Canceled) || errors.Is(l.err, context.DeadlineExceeded)) {
				continue
			}
			return nil, l.err
		}
		return l.k, nil
	}
}

// verifier returns sp's verifying key: the loaded circuit's where this
// process has loaded it (a prover), else the .vk alone, located like the
// pair (downloaded if need be: the .vk only), checked against
// parameters.json and kept. A host that only stores and looks up proofs
// so never reads, downloads or converts a .params file (~47 GiB for
// 32GiB sectors).
func (r *keyring) verifier(ctx context.Context, sp *spec) (*keys, error) {
	r.mu.Lock()
	k := r.vks[sp.key]
	if l, ok := r.loads[sp.key]; ok {
		select {
		case <-l.done:
			if l.err == nil {
				k = l.k
			}
		default: // loading: the verifying key alone is quicker
		}
	}
	r.mu.Unlock()
	if k != nil {
		return k, nil
	}
	k, err := r.loadVK(ctx, sp)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	r.vks[sp.key] = k
	r.mu.Unlock()
	return k, nil
}

// readVK reads the verifying key at path, which must have one IC point per
// circuit input. The header's IC count is compared first: a key of
// another circuit (or one claiming 2^20 points) is refused unread.
func readVK(path string, numInputs int) (*groth.VerifyingKey, error) {
	vk, err := groth.ReadVerifyingKeyFileFor(path, numInputs)
	var ic *groth.ICCountError
	if errors.As(err, &ic) {
		return nil, fmt.Errorf("%s has %d IC points, the circuit has %d inputs: a key of another circuit: %w", path, ic.Got, numInputs, paramfiles.ErrBadParams)
	}
	if err != nil {
		return nil, err
	}
	return vk, nil
}

// loadVK locates, checks and reads sp's verifying key alone.
func (r *keyring) loadVK(ctx context.Context, sp *spec) (*keys, error) {
	loc, err := r.locate(ctx, sp, true)
	if err != nil {
		return nil, err
	}
	k := keysOf(sp, loc)
	sums, err := r.store.Check(ctx, loc.VK, loc.WantVK)
	if err != nil {
		return nil, k.wrap(fmt.Errorf("%s verifying key: %w", sp.name, err))
	}
	vk, err := readVK(loc.VK, sp.numInputs)
	if err != nil {
		return nil, k.wrap(fmt.Errorf("%s verifying key: %w", sp.name, err))
	}
	k.vk, k.pvk = vk, vk.Prepare()
	k.digests = scheme.Digests{VK: sums.SHA256}
	log := r.log.With("proof", sp.name, "circuit", sp.key)
	if k.dev {
		log = log.With("parameters", "DEVELOPMENT SETUP")
	}
	log.Info("Filecoin verifying key loaded alone, for proof verification", "vk", filepath.Base(loc.VK), "checked_against_parameters_json", loc.WantVK != "")
	return k, nil
}

// keysOf are sp's keys before they are read: their files as located.
func keysOf(sp *spec, loc *paramfiles.Located) *keys {
	return &keys{key: sp.key, files: loc.Files, dev: loc.Dev, paramsDigest: loc.WantParams, vkDigest: loc.WantVK}
}

// load locates, checks and reads sp's parameters.
func (r *keyring) load(ctx context.Context, sp *spec) (*keys, error) {
	t0 := time.Now()
	log := r.log.With("proof", sp.name, "circuit", sp.key)
	loc, err := r.locate(ctx, sp, false)
	if err != nil {
		return nil, err
	}
	k := keysOf(sp, loc)
	if k.dev {
		log = log.With("parameters", "DEVELOPMENT SETUP")
		log.Warn("loading a DEVELOPMENT SETUP of Filecoin's parameters: its proofs verify only under its own .vk and are worthless on chain",
			"params", loc.Params, "vk", loc.VK)
	}
	pSums, vSums, err := r.store.CheckPair(ctx, loc)
	if err != nil {
		return nil, k.wrap(fmt.Errorf("%s parameters: %w", sp.name, err))
	}
	tSums := time.Since(t0)
	vk, err := readVK(loc.VK, sp.numInputs)
	if err != nil {
		return nil, k.wrap(fmt.Errorf("%s parameters: %w", sp.name, err))
	}

	// The circuit: its recorded system (mapped), digest and counts, and
	// the densities that place bellperson's points (it dropped those at
	// infinity), computed only to convert a .params file.
	t1 := time.Now()
	c, err := r.circuitOf(ctx, sp)
	if err != nil {
		return nil, k.wrap(fmt.Errorf("%s circuit: %w", sp.name, err))
	}
	k.counts, k.digest = c.counts, c.digest
	tShape := time.Since(t1)
	if sp.knownOK && sp.known != k.counts {
		log.Warn("the recorded circuit's counts differ from the known ones: budgets reserve by the known", "recorded", k.counts, "known", sp.known)
	}

	t1 = time.Now()
	mk, err := keyFile(ctx, r.params.shapeDir(), loc, pSums, vSums, vk, c.digest, c.density, log)
	if err != nil {
		return nil, k.wrap(fmt.Errorf("%s parameters: %w", sp.name, err))
	}
	gvk, err := vk.Gnark()
	if err != nil {
		mk.Close()
		return nil, k.wrap(fmt.Errorf("%s verifying key: %w", sp.name, err))
	}
	k.vk, k.pvk, k.gvk = vk, vk.Prepare(), gvk
	k.digests = scheme.Digests{VK: vSums.SHA256, PK: pSums.SHA256, Circuit: c.digest}
	k.mapped = mk
	digest, sys, pk := c.digest, c.sys, mk.PK
	k.prover, err = prover.New(&prover.Keys{Digest: digest[:16], NbPublic: k.counts.Inputs, PK: pk, VK: gvk, System: sys}, log)
	if err != nil {
		return nil, k.wrap(fmt.Errorf("%s prover: %w", sp.name, err))
	}
	k.prover.EarlyG2 = r.params.EarlyG2
	log.Info("Filecoin parameters loaded", "params", filepath.Base(loc.Params), "constraints", k.counts.Constraints,
		"inputs", k.counts.Inputs, "aux", k.counts.Aux, "shape", digest[:16], "digests_s", tSums.Seconds(),
		"circuit_s", tShape.Seconds(), "system_bytes", sys.Bytes(), "key_bytes", mk.FileBytes(), "key_s", time.Since(t1).Seconds(),
		"checked_against_parameters_json", loc.WantVK != "")
	return k, nil
}

// partitionBytes is what one synthesized partition of sp holds
// (Counts.Bytes): by its known counts, else by the loaded circuit's.
func (r *keyring) partitionBytes(ctx context.Context, sp *spec) (int64, error) {
	if sp.knownOK {
		return sp.known.Bytes(), nil
	}
	k, err := r.circuit(ctx, sp)
	if err != nil {
		return 0, err
	}
	return k.counts.Bytes(), nil
}

// recorded is what loading keys needs of a recorded circuit.
type recorded struct {
	digest  string
	counts  Counts
	sys     packed.Evaluator
	density func() (*groth.Density, error)
}

// circuitOf returns sp's recorded circuit: its system mapped from the
// shape directory (recorded there once per box), or, for a PoSt circuit
// (a system of one sector's constraints repeated), its shape's digest and
// density and the repeated system. A process maps each circuit once.
func (r *keyring) circuitOf(ctx context.Context, sp *spec) (*recorded, error) {
	if sp.system != nil {
		rows, err := sp.system()
		if err != nil {
			return nil, err
		}
		digest, err := repeatedDigest(r.params.shapeDir(), sp, rows)
		if err != nil {
			return nil, err
		}
		return &recorded{digest: digest, sys: rows, density: densityOf(rows, sp.numInputs),
			counts: Counts{Inputs: sp.numInputs, Aux: rows.Wires() - sp.numInputs, Constraints: rows.Rows()}}, nil
	}
	r.sysMu.Lock()
	defer r.sysMu.Unlock()
	ms := r.systems[sp.key]
	if ms == nil {
		var err error
		if ms, err = systemCached(ctx, r.params.shapeDir(), sp, r.log); err != nil {
			return nil, err
		}
		if ms.Inputs != sp.numInputs {
			ms.Close()
			return nil, fmt.Errorf("recorded system of %s has %d inputs, the circuit %d", ms.Digest[:16], ms.Inputs, sp.numInputs)
		}
		r.systems[sp.key] = ms
	}
	return &recorded{digest: ms.Digest, sys: ms.System, density: densityOf(ms.System, ms.Inputs),
		counts: Counts{Inputs: ms.Inputs, Aux: ms.Wires() - ms.Inputs, Constraints: ms.Rows()}}, nil
}

// mappedSystem is sp's system as this process mapped it, if it did.
func (r *keyring) mappedSystem(sp *spec) (*r1cs.MappedSystem, bool) {
	r.sysMu.Lock()
	defer r.sysMu.Unlock()
	ms, ok := r.systems[sp.key]
	return ms, ok
}
