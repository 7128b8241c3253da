package activities

import (
	"context"
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
	// Check reads a sector's C1 and verifies it natively; a bad C1 is a
	// non-retryable job.ErrBadC1.
	Check(ctx context.Context, ref job.SectorRef) (job.ValidateOutput, error)
	// PartitionBytes is what a synthesized partition of the sector holds
	// (the budget's share, asked before synthesis).
	PartitionBytes(ctx context.Context, ref job.SectorRef) (int64, error)
	// Synthesize solves partition k of the sector into its witness.
	Synthesize(ctx context.Context, ref job.SectorRef, k int) (Solved, error)
	// Device runs the device phase of s on one of slots, waiting for a slot
	// in order; onFreed is called once s's big vectors are freed (the
	// moment the budget may admit the next synthesis). s is consumed.
	Device(ctx context.Context, s Solved, slots *gpu.Slots, order gpu.Order, onFreed func()) (Proving, error)
	// Finish completes the partition's proof on the CPU and verifies it: an
	// invalid proof is a job.ErrInvalidProof and never leaves the host. It
	// returns the proof as it crosses Temporal.
	Finish(ctx context.Context, p Proving) ([]byte, time.Duration, error)
	// Store verifies a sector's partition proofs as one C2 and stores it
	// conditionally; Lookup says whether a stored C2 can be trusted.
	Store(ctx context.Context, in job.StoreInput) (job.StoreOutput, error)
	Lookup(ctx context.Context, ref job.SectorRef) (job.LookupOutput, error)
	// Spill serializes a witness for a device host; Unspill reads it back
	// there, checking it is partition k of the sector.
	Spill(s Solved) ([]byte, error)
	Unspill(ctx context.Context, ref job.SectorRef, k int, data []byte) (Solved, error)
}

// Solved is a synthesized partition in a host's memory.
type Solved interface {
	// Partition names it in logs: "<sector>/<k>".
	Partition() string
	// Bytes is the memory it holds until the device phase frees it.
	Bytes() int64
	// SynthTime is how long its synthesis took.
	SynthTime() time.Duration
}

// Proving is a partition after its device phase, before Finish.
type Proving interface {
	Partition() string
	// Report is the device phase's account: device, times.
	Report() DeviceReport
}

// DeviceReport is what a device phase reports.
type DeviceReport struct {
	Device string
	Start  time.Time     // when the device was acquired
	Queue  time.Duration // waiting for a device slot
	Busy   time.Duration // on the device
}
