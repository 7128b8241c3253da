package activities

import (
	"context"
	"io"
	"time"

	"github.com/c2flow/c2flow/gpu"
	"github.com/c2flow/c2flow/job"
)

// Phases does a partition's work on a host. The Host around it keeps what
// every implementation shares: the witness table, the memory budget, the
// spill, witness expiry, heartbeats, pause hooks, stats and metrics. Two
// implementations: ProverPhases (real proofs, through the proof schemes)
// and the simulation's (package sim: modelled time on modelled devices),
// so a simulation runs this package's scheduling code, not a copy of it.
type Phases interface {
	// Validate reads a sector's C1 and verifies it natively; a bad C1 is a
	// non-retryable job.ErrBadC1.
	Validate(ctx context.Context, ref job.Ref) (job.ValidateOutput, error)
	// PartitionBytes is what a synthesized partition of the sector holds
	// (the budget's share, asked before synthesis).
	PartitionBytes(ctx context.Context, ref job.Ref) (int64, error)
	// Synthesize solves partition k of the sector into its witness.
	Synthesize(ctx context.Context, ref job.Ref, k int) (Solution, error)
	// Quotient is the device phase's first step (H by NTTs) of s on dev, a
	// device slot the host holds (it acquires slots in one place,
	// gpu.Slots.Run). s is consumed; its big vectors are freed when
	// Quotient returns, the moment the budget may admit the next
	// synthesis. An error of the device is a gpu.Fault.
	Quotient(ctx context.Context, s Solution, dev gpu.Held) (Quotient, error)
	// MSM is the device phase's second step (the G1 MSMs), on the same
	// device.
	MSM(ctx context.Context, r Quotient, dev gpu.Held) (Partial, error)
	// Finalize completes the partition's proof on the CPU and verifies it: an
	// invalid proof is a job.ErrInvalidProof and never leaves the host. It
	// returns the proof as it crosses Temporal.
	Finalize(ctx context.Context, p Partial) ([]byte, time.Duration, error)
	// Store verifies a sector's partition proofs as one C2 and stores it
	// conditionally; Lookup says whether a stored C2 can be trusted.
	Store(ctx context.Context, in job.StoreInput) (job.StoreOutput, error)
	Lookup(ctx context.Context, ref job.Ref) (job.LookupOutput, error)
	// DropInput deletes the stored input of a job whose deadline passed
	// unproved: no one can use its proof (a PoSt's epoch is over), and a
	// retry brings its input again.
	DropInput(ctx context.Context, ref job.Ref) error
	// SpillBytes is the size of s's spill; Spill streams it to w for a
	// device host. Unspill reads it back there from r, checking it is
	// partition k of the sector's job; a damaged, truncated or foreign
	// spill wraps prover.ErrBadSpill.
	SpillBytes(s Solution) int64
	Spill(s Solution, w io.Writer) error
	Unspill(ctx context.Context, ref job.Ref, k int, r io.Reader) (Solution, error)
}

// A partition's stages carry the prover's names (prover.Solution,
// prover.Quotient, prover.Partial): synthesis makes a Solution, the
// device phase's first step a Quotient and its second a Partial, which
// Finalize turns into the partition's proof.

// Solution is a synthesized partition in a host's memory (its witness).
type Solution interface {
	// Partition names it in logs: "<sector>/<k>".
	Partition() string
	// Bytes is the memory it holds until the device phase frees it.
	Bytes() int64
	// SynthTime is how long its synthesis took.
	SynthTime() time.Duration
}

// Quotient is a partition between the device phase's two steps (H by
// NTTs, then the MSMs).
type Quotient interface {
	Partition() string
}

// Partial is a partition after its device phase, before Finalize.
type Partial interface {
	Partition() string
}
