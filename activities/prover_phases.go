package activities

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"go.temporal.io/sdk/temporal"

	"github.com/c2flow/c2flow/gpu"
	"github.com/c2flow/c2flow/job"
	"github.com/c2flow/c2flow/prover"
	"github.com/c2flow/c2flow/scheme"
	"github.com/c2flow/c2flow/storage"
)

// ProverPhases are the real phases: C1s and C2s in the artifact store,
// circuits and keys from the proof schemes, the split Groth16 prover on
// the host's devices. A sector's scheme is the one owning its declared
// proof; nothing here knows which scheme it runs.
type ProverPhases struct {
	Artifacts *storage.Store
	Schemes   scheme.Set
	Log       *slog.Logger
	// FaultyFinalize corrupts every proof before its verification (tests
	// of the no-invalid-proof guarantee; see Hooks).
	FaultyFinalize bool
	// SynthesisOnly is a host that only synthesizes (worker --roles
	// synth): where a scheme synthesizes without proving keys
	// (scheme.Synthesizer), none is loaded here.
	SynthesisOnly bool
	// Sectors, if set, keeps decoded sectors across the phases.
	Sectors *SectorCache
	// Circuits, if set, is told what every circuit holds (its keys, its
	// recorded system, a device phase's expansion) as this host loads it
	// (the budget holds them).
	Circuits interface {
		HoldCircuit(name string, c CircuitBytes) error
	}

	mu      sync.Mutex
	counted map[*prover.Keys]bool
}

// countKeys tells Circuits about a circuit the first time this host uses
// it.
func (p *ProverPhases) countKeys(proof string, c scheme.Circuit) error {
	if p.Circuits == nil {
		return nil
	}
	pr := c.Prover()
	k := pr.Keys
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.counted[k] {
		return nil
	}
	if p.counted == nil {
		p.counted = map[*prover.Keys]bool{}
	}
	p.counted[k] = true
	return p.Circuits.HoldCircuit(proof, CircuitBytes{Keys: k.Bytes(), System: k.SystemBytes(), Lane: pr.LaneBytes(false), LaneOnDevice: pr.LaneBytes(true)})
}

var _ Phases = (*ProverPhases)(nil)

func badC1(ref job.Ref, err error) error {
	return temporal.NewNonRetryableApplicationError(fmt.Sprintf("%s: bad C1: %v", ref, err), job.ErrBadC1, err)
}

func isAppError(err error, typ string) bool {
	var ae *temporal.ApplicationError
	return errors.As(err, &ae) && ae.Type() == typ
}

// sector reads, checks and decodes a sector's C1. The bytes must be the
// ones the sector's identity pins (an object replaced after submission is
// a BadC1, never proved) and name the sector's prover and number. A
// missing object or an unreachable store is a retryable storage error
// naming the key: a wrong configuration is not bad input.
func (p *ProverPhases) sector(ctx context.Context, ref job.Ref) (scheme.Sector, error) {
	if p.Sectors == nil {
		s, _, err := p.decode(ctx, ref)
		return s, err
	}
	return p.Sectors.Get(ctx, ref.Identity(), func() (scheme.Sector, int64, error) { return p.decode(ctx, ref) })
}

// decode is sector without the cache (scheme.Set.LoadSector, the
// gateway's load path too); it returns the input's size too.
func (p *ProverPhases) decode(ctx context.Context, ref job.Ref) (scheme.Sector, int64, error) {
	s, n, err := p.Schemes.LoadSector(ctx, p.Artifacts, ref)
	if errors.Is(err, scheme.ErrBadInput) {
		return nil, 0, badC1(ref, err)
	}
	if err != nil {
		return nil, 0, fmt.Errorf("%s: %w", ref, err)
	}
	return s, n, nil
}

// circuit returns the circuit of a sector's proof; missing keys are a
// non-retryable NoKeys (an operator's fix).
func (p *ProverPhases) circuit(ctx context.Context, s scheme.Sector) (scheme.Circuit, error) {
	return p.circuitOf(ctx, s.Proof())
}

// circuitOf returns proof's circuit, its keys counted on this host.
func (p *ProverPhases) circuitOf(ctx context.Context, proof string) (scheme.Circuit, error) {
	sc, err := p.Schemes.For(proof)
	if err != nil {
		return nil, err
	}
	c, err := sc.Circuit(ctx, proof)
	if err != nil {
		return nil, noKeys(err)
	}
	if err := p.countKeys(proof, c); err != nil {
		return nil, err
	}
	return c, nil
}

// noKeys makes missing keys a non-retryable NoKeys: an operator's fix.
func noKeys(err error) error {
	if errors.Is(err, scheme.ErrNoKeys) {
		// The message is the kind alone: the error prints its cause after it.
		return temporal.NewNonRetryableApplicationError("no proving keys on this host", job.ErrNoKeys, err)
	}
	return err
}

func (p *ProverPhases) sectorCircuit(ctx context.Context, ref job.Ref) (scheme.Sector, scheme.Circuit, error) {
	s, err := p.sector(ctx, ref)
	if err != nil {
		return nil, nil, err
	}
	c, err := p.circuit(ctx, s)
	if err != nil {
		return nil, nil, err
	}
	return s, c, nil
}

// sectorVerifier reads and decodes ref's C1 and returns what verifies its
// C2s: the circuit where this host has loaded it, else the verifying key
// alone (a workflow-role host loads no proving key to store a C2).
func (p *ProverPhases) sectorVerifier(ctx context.Context, ref job.Ref) (scheme.Sector, scheme.Verifier, error) {
	s, err := p.sector(ctx, ref)
	if err != nil {
		return nil, nil, err
	}
	v, err := p.Schemes.VerifierOf(ctx, s)
	if err != nil {
		return nil, nil, noKeys(err)
	}
	return s, v, nil
}

// Validate implements Phases: strict decoding, then every vanilla proof.
func (p *ProverPhases) Validate(ctx context.Context, ref job.Ref) (job.ValidateOutput, error) {
	s, err := p.sector(ctx, ref)
	if err != nil {
		return job.ValidateOutput{}, err
	}
	if err := s.Verify(ctx); err != nil {
		if ctx.Err() != nil {
			return job.ValidateOutput{}, ctx.Err()
		}
		return job.ValidateOutput{}, badC1(ref, err)
	}
	return job.ValidateOutput{Proof: s.Proof(), Partitions: s.Partitions()}, nil
}

// solved is a real synthesized partition.
type solved struct {
	sector scheme.Sector
	circ   scheme.Circuit
	k      int
	sol    *prover.Solution
}

func (s *solved) Partition() string        { return s.sol.Partition }
func (s *solved) Bytes() int64             { return s.sol.Bytes() }
func (s *solved) SynthTime() time.Duration { return s.sol.SynthTime }

// proving is a real partition after its device phase.
type proving struct {
	sector scheme.Sector
	circ   scheme.Circuit
	k      int
	pt     *prover.Partial
}

func (p *proving) Partition() string { return p.pt.Partition }

// reduced is a real partition between the device phase's two steps.
type reduced struct {
	sector scheme.Sector
	circ   scheme.Circuit
	k      int
	q      *prover.Quotient
	name   string
}

func (r *reduced) Partition() string { return r.name }

// synthesis is what synthesizes proof's partitions on this host: on a
// synthesis-only host, the scheme's keyless synthesis where it has one
// (no proving key loaded); else its circuit, keys counted.
func (p *ProverPhases) synthesis(ctx context.Context, proof string) (scheme.Synthesis, error) {
	sc, err := p.Schemes.For(proof)
	if err != nil {
		return nil, err
	}
	if sy, ok := sc.(scheme.Synthesizer); ok && p.SynthesisOnly {
		s, err := sy.Synthesis(ctx, proof)
		if err != nil {
			return nil, noKeys(err)
		}
		return s, nil
	}
	return p.circuitOf(ctx, proof)
}

// PartitionBytes implements Phases: from the circuit of the proof the
// sector's identity names (its C1 is decoded only when the identity names
// none).
func (p *ProverPhases) PartitionBytes(ctx context.Context, ref job.Ref) (int64, error) {
	proof := ref.Proof
	if _, err := p.Schemes.For(proof); err != nil {
		s, err := p.sector(ctx, ref)
		if err != nil {
			return 0, err
		}
		proof = s.Proof()
	}
	syn, err := p.synthesis(ctx, proof)
	if err != nil {
		return 0, err
	}
	return syn.PartitionBytes(), nil
}

// Synthesize implements Phases.
func (p *ProverPhases) Synthesize(ctx context.Context, ref job.Ref, k int) (Solution, error) {
	s, err := p.sector(ctx, ref)
	if err != nil {
		return nil, err
	}
	syn, err := p.synthesis(ctx, s.Proof())
	if err != nil {
		return nil, err
	}
	if k < 0 || k >= s.Partitions() {
		return nil, badC1(ref, fmt.Errorf("partition %d of %d", k, s.Partitions()))
	}
	sol, err := syn.Synthesize(ctx, s, k)
	if err != nil {
		return nil, err
	}
	// The C1 names the sector; the identity's number names the partition,
	// and the identity the job.
	sol.Partition = prover.PartitionID(ref.ProverID, ref.SectorID, k)
	sol.Job = jobOf(ref, k)
	c, _ := syn.(scheme.Circuit) // nil where synthesized without keys: spilled, never proved here
	return &solved{sector: s, circ: c, k: k, sol: sol}, nil
}

// Quotient implements Phases.
func (p *ProverPhases) Quotient(ctx context.Context, s Solution, dev gpu.Held) (Quotient, error) {
	w, ok := s.(*solved)
	if !ok || w.circ == nil {
		return nil, fmt.Errorf("device phase: a %T is not a synthesized partition with its circuit", s)
	}
	name := w.sol.Partition
	q, err := w.circ.Prover().Quotient(ctx, dev, w.sol)
	if err != nil {
		return nil, err
	}
	return &reduced{sector: w.sector, circ: w.circ, k: w.k, q: q, name: name}, nil
}

// MSM implements Phases.
func (p *ProverPhases) MSM(ctx context.Context, r Quotient, dev gpu.Held) (Partial, error) {
	w, ok := r.(*reduced)
	if !ok {
		return nil, fmt.Errorf("device phase: a %T is not a quotient", r)
	}
	pt, err := w.circ.Prover().MSM(ctx, dev, w.q)
	if err != nil {
		return nil, err
	}
	return &proving{sector: w.sector, circ: w.circ, k: w.k, pt: pt}, nil
}

// Finalize implements Phases.
func (p *ProverPhases) Finalize(ctx context.Context, pr Partial) ([]byte, time.Duration, error) {
	w, ok := pr.(*proving)
	if !ok {
		return nil, 0, fmt.Errorf("finalize: a %T is not a device phase's result", pr)
	}
	proof, dur, err := w.circ.Prover().Finalize(ctx, w.pt)
	if err != nil {
		return nil, 0, err
	}
	if p.FaultyFinalize {
		proof.Krs.Double(&proof.Krs)
	}
	if err := w.circ.VerifyPartition(w.sector, w.k, proof); err != nil {
		return nil, 0, temporal.NewApplicationError(fmt.Sprintf("partition %s: %v", w.pt.Partition, err), job.ErrInvalidProof)
	}
	b, err := w.circ.EncodePartition(proof)
	if err != nil {
		return nil, 0, fmt.Errorf("partition %s: encode proof: %w", w.pt.Partition, err)
	}
	return b, dur, nil
}

// Store implements Phases: the partition proofs are assembled into the
// sector's C2, verified against the verifying key and stored
// conditionally. If a C2 is already stored (a retry after a lost response,
// a run whose C2 was found bad), the stored one is checked and kept, or
// replaced when it is corrupt or does not verify.
func (p *ProverPhases) Store(ctx context.Context, in job.StoreInput) (job.StoreOutput, error) {
	s, c, err := p.sectorVerifier(ctx, in.Ref)
	if err != nil {
		return job.StoreOutput{}, err
	}
	notStored := func(err error) error {
		return temporal.NewNonRetryableApplicationError(fmt.Sprintf("%s: %v: not stored", in.Ref, err), job.ErrInvalidProof, err)
	}
	data, err := c.Assemble(s, in.Proofs)
	if err != nil {
		return job.StoreOutput{}, notStored(err)
	}
	if err := c.VerifyC2(s, data); err != nil {
		return job.StoreOutput{}, notStored(err)
	}
	d := c.Digests()
	m := storage.Manifest{Ref: job.Ref{ProverID: in.ProverID, SectorID: in.SectorID, InputDigest: in.InputDigest, Proof: s.Proof()},
		Partitions: s.Partitions(), VKDigest: d.VK, PKDigest: d.PK, CircuitDigest: d.Circuit}
	for _, pt := range in.Partitions {
		m.PartitionMS = append(m.PartitionMS, storage.PartitionTime{Partition: pt.Partition, SynthMS: pt.SynthMS, QueueMS: pt.QueueMS, DeviceMS: pt.DeviceMS, FinalizeMS: pt.FinalizeMS})
	}
	// A stored C2 that is corrupt or does not verify is replaced in
	// place, conditional on its ETag; a good one is kept.
	_, created, replaced, err := p.Artifacts.PutC2(ctx, m, data, func(stored []byte) error { return c.VerifyC2(s, stored) })
	if replaced != nil {
		p.Log.Warn("replacing a stored C2 that is corrupt or does not verify", "sector", in.Ref.String(), "key", storage.C2Key(in.Ref), "reason", replaced)
	}
	if err != nil {
		return job.StoreOutput{}, fmt.Errorf("%s: store C2: %w", in.Ref, err)
	}
	return job.StoreOutput{C2Key: storage.C2Key(in.Ref), Created: created}, nil
}

// UrgentProof says whether proof's kind is urgent by its scheme's policy;
// known is false for a proof of no kind (the test scheme's).
func (p *ProverPhases) UrgentProof(proof string) (urgent, known bool) {
	kind, ok := p.Schemes.KindOf(proof)
	if !ok {
		return false, false
	}
	pol, ok := p.Schemes.Policy(kind)
	return ok && pol.Urgent(), ok
}

// DropInput implements Phases: the input of a job whose deadline passed is
// dropped, unless a proof of its identity is stored (proved by an earlier
// run, or by a joiner's): a stored proof is re-verified against its input
// each time it is returned, so the input stays as long as the proof does.
func (p *ProverPhases) DropInput(ctx context.Context, ref job.Ref) error {
	if _, err := p.Artifacts.Head(ctx, storage.C2Key(ref)); err == nil {
		p.Log.Info("lapsed job's input kept: a proof of its identity is stored", "sector", ref.String())
		return nil
	} else if !errors.Is(err, storage.ErrNotFound) {
		return fmt.Errorf("drop the input of lapsed job %s: look for its stored proof: %w", ref, err)
	}
	if err := p.Artifacts.Delete(ctx, storage.C1Key(ref)); err != nil && !errors.Is(err, storage.ErrNotFound) {
		return fmt.Errorf("drop the input of lapsed job %s: %w", ref, err)
	}
	return nil
}

// Lookup implements Phases: a stored C2 is trusted when its manifest names
// this identity and the proof's digest, and the proof verifies against the
// sector's C1 under the current keys. Anything else is reported with the
// reason, and the sector is proved again.
func (p *ProverPhases) Lookup(ctx context.Context, ref job.Ref) (job.LookupOutput, error) {
	out := job.LookupOutput{C2Key: storage.C2Key(ref)}
	if _, err := p.Artifacts.Head(ctx, storage.C2Key(ref)); errors.Is(err, storage.ErrNotFound) {
		return out, nil
	} else if err != nil {
		return out, err
	}
	out.Found = true
	s, err := p.sector(ctx, ref)
	if err != nil {
		if isAppError(err, job.ErrBadC1) {
			out.Reason = "its C1 cannot be checked: " + err.Error()
			return out, nil
		}
		return out, err
	}
	_, _, err = p.Schemes.StoredC2(ctx, p.Artifacts, ref, s)
	switch {
	case errors.Is(err, storage.ErrNotFound):
		out.Reason = "the C2's manifest is missing"
	case errors.Is(err, scheme.ErrBadStored):
		out.Reason = err.Error()
	case err != nil:
		return out, noKeys(err)
	default:
		out.Valid = true
	}
	return out, nil
}

// SpillBytes implements Phases.
func (p *ProverPhases) SpillBytes(s Solution) int64 {
	if w, ok := s.(*solved); ok {
		return w.sol.EncodedBytes()
	}
	return 0
}

// Spill implements Phases.
func (p *ProverPhases) Spill(s Solution, w io.Writer) error {
	sv, ok := s.(*solved)
	if !ok {
		return fmt.Errorf("spill: a %T is not a synthesized partition", s)
	}
	_, err := sv.sol.WriteTo(w)
	return err
}

// Unspill implements Phases: the spill is read against the circuit's
// size (a longer one is refused before its memory is taken) and must name
// this job's partition k.
func (p *ProverPhases) Unspill(ctx context.Context, ref job.Ref, k int, r io.Reader) (Solution, error) {
	s, c, err := p.sectorCircuit(ctx, ref)
	if err != nil {
		return nil, err
	}
	sol, err := prover.ReadSolution(r, c.Prover().Keys.Wires())
	if err != nil {
		return nil, err
	}
	if want := prover.PartitionID(ref.ProverID, ref.SectorID, k); sol.Partition != want || sol.Job != jobOf(ref, k) {
		return nil, fmt.Errorf("spilled witness is %s of job %s, not %s of %s: %w", sol.Partition, sol.Job, want, jobOf(ref, k), prover.ErrBadSpill)
	}
	return &solved{sector: s, circ: c, k: k, sol: sol}, nil
}

// jobOf names partition k of ref's job in a spill: its input's identity,
// so that the partition of another job of the same sector (another C1, a
// PoSt of other randomness) is refused.
func jobOf(ref job.Ref, k int) string {
	return ref.Identity() + "/" + strconv.Itoa(k)
}
