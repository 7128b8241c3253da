package c2

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"runtime/debug"
	"sync"
	"time"

	"github.com/c2flow/c2flow/filecoin/c1"
	"github.com/c2flow/c2flow/filecoin/circuit"
	"github.com/c2flow/c2flow/filecoin/groth"
	"github.com/c2flow/c2flow/filecoin/proofs"
	"github.com/c2flow/c2flow/filecoin/seal"
	"github.com/c2flow/c2flow/prover"
	"github.com/c2flow/c2flow/scheme"
)

// Scheme is Filecoin's StackedDrg PoRep: every seal proof filecoin/proofs
// supports (V1, V1_1 and synthetic, 2KiB to 64GiB). It is safe for
// concurrent use; a process holds one, so that each circuit's keys are
// loaded and each parameter file checked once.
type Scheme struct {
	params Params
	log    *slog.Logger

	mu    sync.Mutex
	loads map[circuit.Shape]*loading
	vks   map[circuit.Shape]*keys // verifying keys loaded alone (Verifier)
	sums  sumCache
}

// loading is one circuit's load, shared by the callers that wait for it.
type loading struct {
	done chan struct{}
	k    *keys
	err  error
}

var _ scheme.Scheme = (*Scheme)(nil)

// New returns the scheme over the parameters p says where to find; log
// may be nil.
func New(p Params, log *slog.Logger) *Scheme {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Scheme{params: p, log: log.With("scheme", "filecoin"), loads: map[circuit.Shape]*loading{}, vks: map[circuit.Shape]*keys{}}
}

// Name implements scheme.Scheme.
func (s *Scheme) Name() string { return "filecoin" }

// Proofs implements scheme.Scheme: the supported registered seal proofs.
func (s *Scheme) Proofs() []string { return proofs.Names() }

// Owns implements scheme.Scheme: the names of the supported registered
// seal proofs (proofs.Names).
func (s *Scheme) Owns(proof string) bool {
	_, err := proofs.Parse(proof)
	return err == nil
}

// Recognize implements scheme.Scheme: a SealCommitPhase1Output whose
// registered_proof is a Filecoin seal proof, or a Commit2In wrapper
// (SectorNum, Phase1Out), as lotus, Curio and lotus-bench write them.
func (s *Scheme) Recognize(h scheme.Head) bool {
	if p, ok := h.Strings["registered_proof"]; ok {
		return s.Owns(p)
	}
	return h.Has("Phase1Out")
}

// MaxC1Bytes implements scheme.Scheme: c1.MaxInputSize, the bound the
// decoder applies to either form (twice the longest compact C1 of the
// proof, 4/3 of that for a Commit2In wrapper).
func (s *Scheme) MaxC1Bytes(proof string) (int64, error) {
	p, err := proofs.Parse(proof)
	if err != nil {
		return 0, err
	}
	return c1.MaxInputSize(p)
}

// Decode implements scheme.Scheme: a strict decode of either form
// (c1.Decode), the declared proof required where id names one, and the C1
// bound to id's sector: a Commit2In SectorNum must be id.SectorID, and the
// C1's replica_id must be the one id's prover and sector ids derive with
// the C1's ticket, comm_d and proof (seal.SectorPublic.ReplicaID). Errors
// name the JSON path or field at fault.
func (s *Scheme) Decode(raw []byte, id scheme.Ident) (scheme.Sector, error) {
	return s.DecodeSector(raw, id)
}

// DecodeSector is Decode returning the concrete sector.
func (s *Scheme) DecodeSector(raw []byte, id scheme.Ident) (*Sector, error) {
	var opts []c1.Option
	if id.Profile != "" {
		p, err := proofs.Parse(id.Profile)
		if err != nil {
			return nil, fmt.Errorf("filecoin C1: declared proof: %w", err)
		}
		opts = append(opts, c1.WithProof(p))
	}
	if id.ProverID == "" {
		return nil, errors.New("filecoin C1: no prover id: a C1 is bound to its sector by the replica id its prover and sector ids derive")
	}
	proverID, err := seal.ParseHex32(id.ProverID)
	if err != nil {
		return nil, fmt.Errorf("filecoin C1: prover id: %w", err)
	}
	a, err := c1.DecodeBytes(raw, opts...)
	if err != nil {
		if id.Profile != "" && errors.Is(err, c1.ErrProofMismatch) {
			return nil, fmt.Errorf("filecoin C1: not of the declared proof %s: %w", id.Profile, err)
		}
		return nil, fmt.Errorf("filecoin C1: %w", err)
	}
	if n, ok, err := WrappedSectorID(a); err != nil {
		return nil, fmt.Errorf("filecoin C1: %w", err)
	} else if ok && n != id.SectorID {
		return nil, fmt.Errorf("filecoin C1: Commit2In SectorNum is %d, the sector's id is %d", n, id.SectorID)
	}
	c := a.C1
	pub := PublicOf(c, proverID, id.SectorID)
	want, err := pub.ReplicaID()
	if err != nil {
		return nil, fmt.Errorf("filecoin C1: %w", err)
	}
	if want != c.ReplicaID {
		return nil, fmt.Errorf("filecoin C1: replica_id %x is not sector %d's of prover %x (with the C1's ticket, comm_d and %s it is %x): %w",
			c.ReplicaID, id.SectorID, proverID, c.RegisteredProof, want, seal.ErrReplicaID)
	}
	return NewSector(c, &pub)
}

// PartitionBytes implements scheme.Scheme: Counts.Bytes of the proof's
// known counts (CountsOf), else of the loaded circuit's.
func (s *Scheme) PartitionBytes(ctx context.Context, proof string) (int64, error) {
	if n, err := CountsOf(proof); err == nil {
		return n.Bytes(), nil
	}
	c, err := s.Load(ctx, proof)
	if err != nil {
		return 0, err
	}
	return c.PartitionBytes(), nil
}

// Circuit implements scheme.Scheme (see Load).
func (s *Scheme) Circuit(ctx context.Context, proof string) (scheme.Circuit, error) {
	c, err := s.Load(ctx, proof)
	if err != nil {
		return nil, err
	}
	return c, nil
}

// Load returns proof's circuit with its keys: loaded on first use (its
// parameter pair located, downloaded if need be, checked against
// parameters.json, read and converted for the split prover) and kept.
// Proofs of one circuit shape (V1, V1_1 and synthetic of a sector size)
// share one load, and concurrent callers wait for the one in progress. A
// failed load is not kept: the next call tries again. Missing parameters
// wrap scheme.ErrNoKeys.
func (s *Scheme) Load(ctx context.Context, proof string) (*Circuit, error) {
	info, err := proofs.ByName(proof)
	if err != nil {
		return nil, fmt.Errorf("filecoin circuit: %w", err)
	}
	shape := circuit.ShapeOf(info)
	for {
		s.mu.Lock()
		l, ok := s.loads[shape]
		if !ok {
			l = &loading{done: make(chan struct{})}
			s.loads[shape] = l
		}
		s.mu.Unlock()
		if !ok {
			l.k, l.err = s.load(ctx, &info)
			if l.err != nil {
				s.mu.Lock()
				delete(s.loads, shape)
				s.mu.Unlock()
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
		return &Circuit{Verifier{info: info, k: l.k}}, nil
	}
}

// Verifier implements scheme.Scheme: the loaded circuit's keys where
// this process has loaded them (a prover), else the proof's verifying key
// alone, located like the pair (downloaded if need be: the .vk only),
// checked against parameters.json and kept. A host that only stores and
// looks up C2s so never reads, downloads or converts a .params file
// (~47 GiB for 32GiB sectors).
func (s *Scheme) Verifier(ctx context.Context, proof string) (scheme.Verifier, error) {
	v, err := s.LoadVerifier(ctx, proof)
	if err != nil {
		return nil, err
	}
	return v, nil
}

// LoadVerifier is Verifier's concrete result (see Verifier).
func (s *Scheme) LoadVerifier(ctx context.Context, proof string) (*Verifier, error) {
	info, err := proofs.ByName(proof)
	if err != nil {
		return nil, fmt.Errorf("filecoin verifier: %w", err)
	}
	shape := circuit.ShapeOf(info)
	s.mu.Lock()
	k := s.vks[shape]
	if l, ok := s.loads[shape]; ok {
		select {
		case <-l.done:
			if l.err == nil {
				k = l.k
			}
		default: // loading: the verifying key alone is quicker
		}
	}
	s.mu.Unlock()
	if k == nil {
		if k, err = s.loadVK(ctx, &info); err != nil {
			return nil, err
		}
		s.mu.Lock()
		s.vks[shape] = k
		s.mu.Unlock()
	}
	return &Verifier{info: info, k: k}, nil
}

// readVK reads the verifying key at path, which must have one IC point per
// circuit input. The header's IC count is compared first: a key of
// another circuit (or one claiming 2^20 points) is refused unread.
func readVK(path string, numInputs int) (*groth.VerifyingKey, error) {
	vk, err := groth.ReadVerifyingKeyFileFor(path, numInputs)
	var ic *groth.ICCountError
	if errors.As(err, &ic) {
		return nil, fmt.Errorf("%s has %d IC points, the circuit has %d inputs: a key of another circuit: %w", path, ic.Got, numInputs, ErrBadParams)
	}
	if err != nil {
		return nil, err
	}
	return vk, nil
}

// loadVK locates, checks and reads info's verifying key alone.
func (s *Scheme) loadVK(ctx context.Context, info *proofs.SealProofInfo) (*keys, error) {
	cshape := circuit.ShapeOf(*info)
	loc, err := s.locate(ctx, info, cshape.NumInputs(), true)
	if err != nil {
		return nil, err
	}
	k := &keys{shape: cshape, files: loc.Files, dev: loc.dev, paramsDigest: loc.wantParams, vkDigest: loc.wantVK}
	sums, err := s.sums.of(ctx, loc.VK)
	if err != nil {
		return nil, k.wrap(fmt.Errorf("%s verifying key: %w", info.Name, err))
	}
	if loc.wantVK != "" && sums.filDig != loc.wantVK {
		return nil, k.wrap(fmt.Errorf("%s verifying key: %s: digest %s, %s says %s: %w (delete the file to fetch it again)",
			info.Name, loc.VK, sums.filDig, ParametersJSON, loc.wantVK, ErrBadParams))
	}
	vk, err := readVK(loc.VK, cshape.NumInputs())
	if err != nil {
		return nil, k.wrap(fmt.Errorf("%s verifying key: %w", info.Name, err))
	}
	k.vk, k.pvk = vk, vk.Prepare()
	k.digests = scheme.Digests{VK: sums.sha256}
	log := s.log.With("proof", info.Name, "circuit", cshape.String())
	if k.dev {
		log = log.With("parameters", "DEVELOPMENT SETUP")
	}
	log.Info("Filecoin verifying key loaded alone, for C2 verification", "vk", filepath.Base(loc.VK), "checked_against_parameters_json", loc.wantVK != "")
	return k, nil
}

// load locates, checks and reads info's parameters.
func (s *Scheme) load(ctx context.Context, info *proofs.SealProofInfo) (*keys, error) {
	t0 := time.Now()
	cshape := circuit.ShapeOf(*info)
	log := s.log.With("proof", info.Name, "circuit", cshape.String())
	loc, err := s.locate(ctx, info, cshape.NumInputs(), false)
	if err != nil {
		return nil, err
	}
	k := &keys{shape: cshape, files: loc.Files, dev: loc.dev, paramsDigest: loc.wantParams, vkDigest: loc.wantVK}
	if k.dev {
		log = log.With("parameters", "DEVELOPMENT SETUP")
		log.Warn("loading a DEVELOPMENT SETUP of Filecoin's parameters: its proofs verify only under its own .vk and are worthless on chain",
			"params", loc.Params, "vk", loc.VK)
	}
	pSums, vSums, err := s.checkSums(ctx, loc)
	if err != nil {
		return nil, k.wrap(fmt.Errorf("%s parameters: %w", info.Name, err))
	}
	tSums := time.Since(t0)
	vk, err := readVK(loc.VK, cshape.NumInputs())
	if err != nil {
		return nil, k.wrap(fmt.Errorf("%s parameters: %w", info.Name, err))
	}

	// The circuit's shape gives the densities that place bellperson's
	// points (it dropped those at infinity).
	t1 := time.Now()
	shape, digest, err := RecordShape(s.params.shapeDir(), *info)
	if err != nil {
		return nil, k.wrap(fmt.Errorf("%s circuit: %w", info.Name, err))
	}
	if shape.NumInputs != cshape.NumInputs() {
		return nil, k.wrap(fmt.Errorf("%s circuit: cached shape %s in %s has %d inputs, the circuit %d",
			info.Name, digest, s.params.shapeDir(), shape.NumInputs, cshape.NumInputs()))
	}
	d, err := groth.DensityOf(shape)
	if err != nil {
		return nil, k.wrap(fmt.Errorf("%s circuit: %w", info.Name, err))
	}
	k.counts = Counts{Inputs: shape.NumInputs, Aux: shape.NumAux, Constraints: shape.NumConstraints()}
	k.digest = digest
	shape = nil
	tShape := time.Since(t1)
	if known, ok := knownCounts[info.SectorSize]; ok && known != k.counts {
		log.Warn("the recorded circuit's counts differ from the known ones: budgets reserve by the known", "recorded", k.counts, "known", known)
	}

	t1 = time.Now()
	gp, err := groth.ReadParamsFile(loc.Params, groth.ReadOptions{})
	if err != nil {
		return nil, k.wrap(fmt.Errorf("%s parameters: %w", info.Name, err))
	}
	if !gp.VK.Equal(vk) {
		return nil, k.wrap(fmt.Errorf("%s parameters: %s and %s hold different verifying keys: not a pair: %w", info.Name, loc.Params, loc.VK, ErrBadParams))
	}
	pk, gvk, err := gp.ToGnark(d)
	if err != nil {
		return nil, k.wrap(fmt.Errorf("%s parameters: %s: %w", info.Name, loc.Params, err))
	}
	gp, d = nil, nil
	debug.FreeOSMemory()
	k.vk, k.pvk, k.gvk = vk, vk.Prepare(), gvk
	k.digests = scheme.Digests{VK: vSums.sha256, PK: pSums.sha256, Circuit: digest}
	k.prover, err = prover.New(&prover.Keys{Digest: digest[:16], NbPublic: k.counts.Inputs, PK: pk, VK: gvk}, log)
	if err != nil {
		return nil, k.wrap(fmt.Errorf("%s prover: %w", info.Name, err))
	}
	k.prover.EarlyG2 = s.params.EarlyG2
	log.Info("Filecoin parameters loaded", "params", filepath.Base(loc.Params), "constraints", k.counts.Constraints,
		"inputs", k.counts.Inputs, "aux", k.counts.Aux, "shape", digest[:16], "digests_s", tSums.Seconds(),
		"shape_s", tShape.Seconds(), "read_s", time.Since(t1).Seconds(), "checked_against_parameters_json", loc.wantVK != "")
	return k, nil
}
