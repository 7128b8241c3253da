// Package job holds the types that cross Temporal between c2flow's
// workflows and activities: inputs, results, progress, task-queue and
// activity names, error types. It has no behaviour and no dependencies, so
// workflows (deterministic) and activities (side effects) share it without
// importing each other.
package job

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"time"
)

// Task queues. Workflows, C1 validation and C2 storage run on Workflow;
// synthesis on Synth (its slot supplier is the memory budget); the device
// phase and finalize of a partition on queues of the host that synthesized
// it, because the witness lives in that host's memory.
const (
	QueueWorkflow = "c2flow"
	QueueSynth    = "c2flow-synth"
	// QueueSynthUrgent is priority 1's synthesis queue: every synthesis
	// host polls it with a small reserve of its memory of its own, so a
	// WinningPoSt is never queued behind a budget full of PoRep.
	QueueSynthUrgent = "c2flow-synth-urgent"
	// QueueDevice is the device hosts' shared queue: device phases of
	// witnesses spilled by synthesis-only hosts.
	QueueDevice = "c2flow-device"
)

// DeviceQueue and FinalizeQueue are a host's own queues.
func DeviceQueue(host string) string   { return "c2flow-host-" + host + "-device" }
func FinalizeQueue(host string) string { return "c2flow-host-" + host + "-finalize" }

// ControlQueue is a host's queue for bookkeeping (releasing witnesses).
func ControlQueue(host string) string { return "c2flow-host-" + host + "-control" }

// Activity names: the workflows call activities by these names, and each
// is the method of Activities with the same name.
const (
	ActValidateC1  = "ValidateC1"
	ActSynthesize  = "Synthesize"
	ActDevicePhase = "DevicePhase"
	ActFinalize    = "Finalize"
	ActStoreC2     = "StoreC2"
	ActLookupC2    = "LookupC2"
	ActRelease     = "Release"
	// ActDropInput deletes a lapsed job's stored input (workflow queue).
	ActDropInput = "DropInput"
)

// Activities are the activities the workflows run, one method per name
// above (a worker registers each method under its name). activities.Host
// implements it, over real phases or the simulation's (sim.Phases).
type Activities interface {
	// ValidateC1 (workflow queue): strict decoding and native verification
	// of a sector's C1; a bad one is a non-retryable ErrBadC1.
	ValidateC1(context.Context, SectorInput) (ValidateOutput, error)
	// Synthesize (synthesis queue, slots = the host's memory budget): one
	// partition's witness, held on the host (or spilled).
	Synthesize(context.Context, SynthInput) (SynthOutput, error)
	// DevicePhase (the holding host's device queue): NTTs and G1 MSMs.
	DevicePhase(context.Context, HandleInput) (DeviceOutput, error)
	// Finalize (the holding host's finalize queue): B in G2, assembly,
	// verification of the partition proof.
	Finalize(context.Context, HandleInput) (FinalizeOutput, error)
	// StoreC2 (workflow queue): assemble, verify, store conditionally.
	StoreC2(context.Context, StoreInput) (StoreOutput, error)
	// LookupC2 (workflow queue): a sector's stored C2, checked.
	LookupC2(context.Context, Ref) (LookupOutput, error)
	// Release (the holding host's control queue): drop a witness.
	Release(context.Context, HandleInput) error
}

// Application error types.
const (
	// ErrBadC1 is non-retryable: the C1 is malformed or its proofs are wrong.
	ErrBadC1 = "BadC1"
	// ErrWitnessLost: the host holding a partition's witness does not have
	// it (restarted, expired); the workflow re-synthesizes.
	ErrWitnessLost = "WitnessLost"
	// ErrInvalidProof: a proof failed verification; it is never stored.
	ErrInvalidProof = "InvalidProof"
	// ErrNoKeys: the worker has no proving keys for the profile.
	ErrNoKeys = "NoKeys"
	// ErrDeadlinePassed is non-retryable: the job's deadline (a PoSt's
	// call's) passed, so its proof is worthless and no phase of it runs.
	ErrDeadlinePassed = "DeadlinePassed"
	// ErrBadPriority is non-retryable: a batch asked for priority 1 (the
	// urgent lanes) for a proof of a kind that is not urgent.
	ErrBadPriority = "BadPriority"
	// ErrHostLost: the activity was canceled on its worker, not by
	// Temporal (a starved host's heartbeat gave up, a shutdown): counted
	// on the host-loss budget, like a heartbeat timeout.
	ErrHostLost = "HostLost"
)

// Workflow names, signals and queries.
const (
	BatchWorkflowName  = "BatchWorkflow"
	SectorWorkflowName = "SectorWorkflow"
	SignalProgress     = "sector-progress"
	SignalCancel       = "cancel"
	// SignalDeadline carries a Deadline: a caller joining a running job
	// with a later deadline (or none) extends it; an earlier one changes
	// nothing.
	SignalDeadline = "deadline"
	QueryProgress  = "progress"
)

// Deadline is the SignalDeadline payload: zero is no deadline.
type Deadline struct {
	At time.Time `json:"at,omitempty"`
}

// LaterDeadline is the later of two deadlines, zero (none) being the
// latest: a job joined by callers is served until the last of them gives
// up.
func LaterDeadline(a, b time.Time) time.Time {
	if a.IsZero() || b.IsZero() {
		return time.Time{}
	}
	if b.After(a) {
		return b
	}
	return a
}

// SectorWorkflowID is the workflow ID of a sector's proof: one per sector
// identity (prover, sector number, C1 digest), whatever batch submits it.
func SectorWorkflowID(ref Ref) string { return SectorWorkflowIDOf(ref.Identity()) }

// SectorWorkflowIDOf is SectorWorkflowID by identity.
func SectorWorkflowIDOf(identity string) string { return "c2/" + identity }

// MemoProof is the memo field in which a job's workflow carries its
// proof name, so that status reports can count running jobs by kind: a
// memo needs no registration with Temporal, where a search attribute
// would break every start against a namespace that lacks it.
const MemoProof = "proof"

// SectorMemo is the memo of ref's sector workflow (nil where ref names no
// proof).
func SectorMemo(ref Ref) map[string]any {
	if ref.Proof == "" {
		return nil
	}
	return map[string]any{MemoProof: ref.Proof}
}

// BatchWorkflowID is the workflow ID of a batch.
func BatchWorkflowID(batchID string) string { return "c2batch/" + batchID }

func itoa(v uint64) string {
	if v == 0 {
		return "0"
	}
	var b [20]byte
	i := len(b)
	for v > 0 {
		i--
		b[i] = byte('0' + v%10)
		v /= 10
	}
	return string(b[i:])
}

// Timeouts of a sector's activities. Zero values take the defaults.
//
// The defaults are sized for C2 and SnapDeals partitions, whose witness
// costs minutes of CPU to make again (a 32GiB one): a host that stalls (a
// long GC pause, a page-fault storm, VM steal, SIGSTOP) keeps its work
// as long as it comes back within Heartbeat and HostQueue. The price is
// detection latency: Temporal learns that a host is really dead only by
// these timeouts, so its partitions are synthesized again elsewhere about
// 3 minutes after it died, not 20 s. Short, urgent proofs take
// UrgentTimeouts instead.
type Timeouts struct {
	Synth     time.Duration // start-to-close of a synthesis
	Device    time.Duration // start-to-close of a device phase
	Finalize  time.Duration // start-to-close of a finalize
	Heartbeat time.Duration // heartbeat timeout of long activities
	// HostQueue bounds how long a device phase or finalize may wait on a
	// host's own queue: a live host takes every task of its queues at once
	// (waiting for a device or CPU slot happens inside the activity), so
	// past it the host is presumed gone and the partition is synthesized
	// again elsewhere, on its host-loss budget.
	HostQueue time.Duration
	// FinalizeAttempts bounds a finalize's attempts on its host (0: 3). A
	// retry answers a lost completion with the proof already made, sparing
	// a synthesis; but after a dead host's heartbeat timeout the retry
	// waits HostQueue on that host's queue before the partition is
	// synthesized again. A proof cheap to synthesize again takes 1.
	FinalizeAttempts int32 `json:",omitempty"`
}

// Default timeouts (Timeouts.WithDefaults): a C2's. A stall shorter than
// DefaultHeartbeat loses nothing; a dead host is noticed after it.
const (
	DefaultHeartbeat = 3 * time.Minute
	DefaultHostQueue = 3 * time.Minute
)

// WithDefaults fills zero timeouts.
func (t Timeouts) WithDefaults() Timeouts {
	def := func(v *time.Duration, d time.Duration) {
		if *v == 0 {
			*v = d
		}
	}
	def(&t.Synth, time.Hour)
	def(&t.Device, time.Hour)
	def(&t.Finalize, time.Hour)
	def(&t.Heartbeat, DefaultHeartbeat)
	def(&t.HostQueue, DefaultHostQueue)
	if t.FinalizeAttempts == 0 {
		t.FinalizeAttempts = 3
	}
	return t
}

// UrgentTimeouts are the timeouts of a short proof that is worthless late
// (a WinningPoSt, due within its epoch): a host that stops heartbeating
// for 10 s, or leaves its own queue untaken for 10 s, is given up and the
// proof made again elsewhere (docs/failure-modes.md), and no phase
// may run for more than a couple of minutes. For such a batch (Priority 1
// or 2, one small partition) a lost witness costs seconds, a late proof
// the block. Not for an urgent C2: its witness still costs minutes to
// remake, so priority orders its queues and the defaults stay.
func UrgentTimeouts() Timeouts {
	return Timeouts{Synth: 2 * time.Minute, Device: time.Minute, Finalize: time.Minute,
		Heartbeat: 10 * time.Second, HostQueue: 10 * time.Second, FinalizeAttempts: 1}
}

// Ref is a job's identity: what it proves (its proof name) for whom (the
// prover), of what (the sector number; a PoSt job's first sector) and
// from which input (the SHA-256 of the input's canonical bytes, its
// scheme's encoding of the decoded input, what is stored). The same
// sector number of two provers, or one sector with another input, are
// different jobs with different workflows and proof objects; the same
// input in other bytes is the same job. InputDigest is pinned at
// submission; every activity that reads the input checks it. The JSON
// names are those of the first release ("c1_digest", "profile"), so
// running workflows' histories still decode.
type Ref struct {
	ProverID    string `json:"prover_id"` // hex of the 32-byte prover id
	SectorID    uint64 `json:"sector_id"`
	InputDigest string `json:"c1_digest"` // hex SHA-256 of the input's canonical bytes
	// Proof is the proof name the submitter declared (the registered
	// proof; not part of the identity): a worker checks the input
	// object's size against its bound before reading it, and the decoded
	// input must be of it.
	Proof string `json:"profile,omitempty"`
}

// NewRef returns the identity of prover's job of sector sectorID whose
// input's canonical bytes are c1.
func NewRef(prover [32]byte, sectorID uint64, c1 []byte) Ref {
	return Ref{ProverID: hex.EncodeToString(prover[:]), SectorID: sectorID, InputDigest: Digest(c1)}
}

// Digest is the hex SHA-256 of b: a C1's digest in its sector's identity.
func Digest(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// Identity is the sector's identity as one string:
// <prover hex>/<sector number>/<C1 digest hex>. Object keys and workflow
// IDs are built from it.
func (r Ref) Identity() string {
	return r.ProverID + "/" + itoa(r.SectorID) + "/" + r.InputDigest
}

// String names the sector for people: prover (shortened) and number.
func (r Ref) String() string {
	p := r.ProverID
	if len(p) > 12 {
		p = p[:12] + ".."
	}
	return "sector " + itoa(r.SectorID) + " of prover " + p
}

// BatchInput is a submission of sectors.
type BatchInput struct {
	BatchID     string `json:"batch_id"`
	Sectors     []Ref  `json:"sectors"`
	MaxInFlight int    `json:"max_in_flight"` // sectors proved at once (0: 8)
	// PartitionRetries is how many times a partition is synthesized before
	// its sector fails (0: 3).
	PartitionRetries int `json:"partition_retries"`
	// HostLossRetries bounds the syntheses lost to dead hosts (heartbeat
	// or host-queue timeouts), which do not count against
	// PartitionRetries (0: 20), so a fleet that keeps dying still ends.
	HostLossRetries int      `json:"host_loss_retries,omitempty"`
	Timeouts        Timeouts `json:"timeouts"`
	// ContinueAfter starts a new run (continue-as-new) after this many
	// sectors, bounding history size (0: 500).
	ContinueAfter int `json:"continue_after"`
	// Done carries results across continue-as-new.
	Done []SectorResult `json:"done,omitempty"`
	// Canceled carries a cancel received before continue-as-new.
	Canceled bool `json:"canceled,omitempty"`
	// Priority of every task of the batch: 1 (most urgent, e.g. sectors
	// near their deadline) to 5; 0 is the default, 3. Temporal's matching
	// serves higher priorities first on every queue.
	Priority int `json:"priority,omitempty"`
	// Submitted is when the batch was first submitted (set by its first
	// run, carried across continue-as-new): within a priority, older
	// submissions' sectors get devices first.
	Submitted time.Time `json:"submitted,omitempty"`
	// Deadline, where set (a PoSt call's), is when the batch's proofs
	// become worthless: no phase starts after it and its witnesses are
	// dropped at it (the batch's execution timeout is the same instant).
	Deadline time.Time `json:"deadline,omitempty"`
}

// PriorityUrgent is the one priority that is urgent: a WinningPoSt's,
// whose late proof is a lost block. It alone gets the urgent synthesis
// queue and reserve, a device's urgent lane and the urgent timeouts; the
// gateway gives it to WinningPoSt alone and submit refuses it. (gpu.Urgent
// mirrors it, since gpu imports nothing of the orchestration; activities
// checks at compile time that the two agree.)
const PriorityUrgent = 1

// SynthQueue is the synthesis queue of a batch priority: the urgent one
// for PriorityUrgent.
func SynthQueue(priority int) string {
	if TaskPriority(priority) == PriorityUrgent {
		return QueueSynthUrgent
	}
	return QueueSynth
}

// TaskPriority maps a batch priority to Temporal's priority key.
func TaskPriority(p int) int {
	if p < 1 || p > 5 {
		return 3
	}
	return p
}

// SectorInput is one sector's proving job.
type SectorInput struct {
	BatchID string `json:"batch_id"`
	// Order is the sector's claim on devices (and its batch's priority on
	// every queue).
	Order DeviceOrder `json:"order"`
	Ref
	PartitionRetries int      `json:"partition_retries"`
	HostLossRetries  int      `json:"host_loss_retries,omitempty"`
	Timeouts         Timeouts `json:"timeouts"`
	// Deadline is the batch's (BatchInput.Deadline): zero, none.
	Deadline time.Time `json:"deadline,omitempty"`
}

// DeviceOrder ranks a sector's partitions' claim on devices: the batch's
// priority, then the older submission, then the earlier sector of that
// submission (its index in the batch), so a batch completes sector by
// sector instead of ending with every sector 90% done.
type DeviceOrder struct {
	Priority  int       `json:"priority,omitempty"` // 1 (most urgent) to 5; 0: 3
	Submitted time.Time `json:"submitted,omitempty"`
	Seq       int       `json:"seq,omitempty"`
}

// WitnessLocation is where a synthesized partition's witness is: the host
// holding it in memory with its queues and handle, or the spill a device
// host loads it from.
type WitnessLocation struct {
	Host          string `json:"host"`
	DeviceQueue   string `json:"device_queue,omitempty"`
	FinalizeQueue string `json:"finalize_queue"`
	ControlQueue  string `json:"control_queue"`
	Handle        string `json:"handle"`
	// Spill is set when the witness was spilled for a device host
	// (DeviceQueue is then the shared QueueDevice).
	Spill string `json:"spill,omitempty"`
}

// HostWitness is the location of a witness held by host id under handle.
func HostWitness(id, handle string) WitnessLocation {
	return WitnessLocation{Host: id, DeviceQueue: DeviceQueue(id), FinalizeQueue: FinalizeQueue(id), ControlQueue: ControlQueue(id), Handle: handle}
}

// Sector statuses.
const (
	StatusPending  = "pending"
	StatusRunning  = "running"
	StatusProved   = "proved"
	StatusFailed   = "failed"
	StatusCanceled = "canceled"
	// StatusDuplicate: another workflow proved (or is proving) the sector.
	StatusDuplicate = "duplicate"
)

// SectorResult is the outcome of one sector, named by its identity (its
// Profile the proof the sector's C1 validated as).
type SectorResult struct {
	Ref
	Status     string            `json:"status"`
	Error      string            `json:"error,omitempty"`
	C2Key      string            `json:"c2_key,omitempty"`
	Partitions []PartitionResult `json:"partitions,omitempty"`
	// NumPartitions is set when a large batch's result leaves Partitions
	// out (see FullResultsMax).
	NumPartitions int       `json:"num_partitions,omitempty"`
	Started       time.Time `json:"started"`
	Finished      time.Time `json:"finished"`
}

// PartitionResult is one partition's outcome and phase times.
type PartitionResult struct {
	Partition  int    `json:"partition"`
	Host       string `json:"host"`
	DeviceHost string `json:"device_host,omitempty"` // when a spill moved the witness
	Device     string `json:"device"`
	SynthMS    int64  `json:"synth_ms"`
	QueueMS    int64  `json:"queue_ms"` // device phase: scheduled to started
	DeviceMS   int64  `json:"device_ms"`
	FinalizeMS int64  `json:"finalize_ms"`
	Syntheses  int    `json:"syntheses"` // 1 unless the witness was lost
	// Failures counts the partition's own failures (device error, invalid
	// proof, witness lost on a live host), bounded by PartitionRetries;
	// HostLosses the syntheses lost to dead hosts, bounded apart.
	Failures    int       `json:"failures,omitempty"`
	HostLosses  int       `json:"host_losses,omitempty"`
	Done        bool      `json:"done"`
	Error       string    `json:"error,omitempty"`
	DeviceStart time.Time `json:"device_start"` // device slot held from here (host clock)
	DeviceEnd   time.Time `json:"device_end"`
	FinalizedAt time.Time `json:"finalized_at"`
}

// FullResultsMax is the largest batch whose result carries every
// partition's result. Past it the batch keeps per-sector summaries only:
// 1,000 sectors x 10 partitions of detail would exceed Temporal's 2 MB
// payload limit and wedge the batch's final workflow task. The detail
// stays in each sector's workflow result (c2/<id>) and C2 manifest.
const FullResultsMax = 100

// BatchResult is the outcome of a batch.
type BatchResult struct {
	BatchID string         `json:"batch_id"`
	Sectors []SectorResult `json:"sectors"`
}

// Progress is what a sector reports to its batch and its query, named by
// the sector's identity.
type Progress struct {
	Ref
	Status           string `json:"status"`
	Partitions       int    `json:"partitions"`
	PartitionsDone   int    `json:"partitions_done"`
	PartitionsFailed int    `json:"partitions_failed"`
	Resyntheses      int    `json:"resyntheses"`
}

// BatchProgress answers the batch's progress query.
type BatchProgress struct {
	BatchID  string     `json:"batch_id"`
	Total    int        `json:"total"`
	Canceled bool       `json:"canceled"`
	Sectors  []Progress `json:"sectors"`
}

// Activity inputs and outputs.
type (
	ValidateOutput struct {
		Proof      string `json:"profile"`
		Partitions int    `json:"partitions"`
	}
	SynthInput struct {
		Ref
		Partition int `json:"partition"`
		// ClaimWithin is the schedule-to-start bound of the device phase
		// that will take the witness from the host's own queue
		// (Timeouts.HostQueue). A witness nobody claims well past it was
		// never reported (the synthesis's completion was lost, say while
		// Temporal's database was down) and the host drops it rather
		// than hold its budget until the witness TTL. Zero: no bound.
		ClaimWithin time.Duration `json:"claim_within,omitempty"`
		// Deadline is the job's (SectorInput.Deadline): a synthesis
		// refuses to start or to keep its witness past it, and the host
		// drops the witness at it. Zero: none.
		Deadline time.Time `json:"deadline,omitempty"`
	}
	SynthOutput struct {
		Witness WitnessLocation `json:"witness"`
		Bytes   int64           `json:"bytes"`
		SynthMS int64           `json:"synth_ms"`
	}
	// HandleInput names the witness a host activity works on; the device
	// phase also gets the sector (a spilled witness is checked against it)
	// and its order.
	HandleInput struct {
		Witness WitnessLocation `json:"witness"`
		Ref
		Order     DeviceOrder `json:"order,omitempty"`
		Partition int         `json:"partition,omitempty"`
		// Deadline is the job's: the device phase and finalize refuse to
		// run past it (zero: none).
		Deadline time.Time `json:"deadline,omitempty"`
	}
	DeviceOutput struct {
		// MovedTo is set when the witness moved to this device host
		// (spilled): its finalize runs there.
		MovedTo  *WitnessLocation `json:"moved_to,omitempty"`
		Device   string           `json:"device"`
		DeviceMS int64            `json:"device_ms"`
		QueueMS  int64            `json:"queue_ms"`
		Start    time.Time        `json:"start"`
		End      time.Time        `json:"end"`
	}
	FinalizeOutput struct {
		Proof      []byte `json:"proof"`
		FinalizeMS int64  `json:"finalize_ms"`
	}
	StoreInput struct {
		Ref                          // its Profile is the declared proof
		Proofs     [][]byte          `json:"proofs"`
		Partitions []PartitionResult `json:"partitions"`
	}
	StoreOutput struct {
		C2Key   string `json:"c2_key"`
		Created bool   `json:"created"`
	}
	// LookupOutput says whether a sector's C2 is stored and checked: its
	// manifest and proof digests agree, and the proof verifies against
	// the sector's C1. Found and not Valid: Reason says what is wrong.
	LookupOutput struct {
		Found  bool   `json:"found"`
		Valid  bool   `json:"valid"`
		Reason string `json:"reason,omitempty"`
		C2Key  string `json:"c2_key"`
	}
)
