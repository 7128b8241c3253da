// Package prover proves synthesized partitions (a scheme makes the
// Solution; the prover knows no scheme, only Keys) with a
// Groth16 prover split in two, after SupraSeal/cuzk's prove_start and
// prove_finish:
//
//   - Start, the device phase, holds one device slot: a, b, c evaluated
//     from the packed assignment and the circuit's recorded constraint
//     system (packed.System), H from them by NTTs, then the G1 MSMs (A, B
//     in G1, K, H) over the assignment expanded chunk by chunk. None of
//     it depends on the proof's randomness.
//   - Finalize, on the CPU with no slot held: the B-in-G2 MSM and the proof
//     assembly with fresh r, s from crypto/rand.
//
// A device is therefore free for the next partition while the CPU finishes
// the last. The arithmetic is gnark v0.14.0's BLS12-381 prover
// (backend/groth16/bls12-381/prove.go) rearranged; its proofs are gnark
// proofs and gnark's verifier checks them.
package prover

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/big"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/consensys/gnark-crypto/ecc"
	curve "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr/fft"
	groth16bls "github.com/consensys/gnark/backend/groth16/bls12-381"

	"github.com/c2flow/c2flow/gpu"
	"github.com/c2flow/c2flow/internal/yield"
	"github.com/c2flow/c2flow/prover/packed"
)

// Keys is what the prover needs of a circuit's Groth16 setup: gnark's
// proving and verifying keys, the count of public variables (ONE
// included), the leading values of a solution's wire vector, and the
// circuit's recorded constraint system, which evaluates a, b, c from a
// solution at the device. A scheme builds them from its own files; the
// prover knows no scheme.
type Keys struct {
	PK       *groth16bls.ProvingKey
	VK       *groth16bls.VerifyingKey
	NbPublic int
	System   packed.Evaluator
	// Digest names the keys in logs and errors (a prefix of their digest).
	Digest string
}

// SystemBytes is the memory the recorded constraint system holds: a host
// counts it beside the keys' points, once per circuit.
func (k *Keys) SystemBytes() int64 {
	if k == nil || k.System == nil {
		return 0
	}
	return k.System.Bytes()
}

// Wires is the length of the circuit's wire vector.
func (k *Keys) Wires() int { return len(k.PK.InfinityA) }

// Bytes is the memory the keys' points hold: G1 A, B, K and Z, G2 B (the
// affine points gnark holds, as many bytes as a .params file's
// uncompressed ones).
func (k *Keys) Bytes() int64 {
	if k == nil || k.PK == nil {
		return 0
	}
	pk := k.PK
	g1 := len(pk.G1.A) + len(pk.G1.B) + len(pk.G1.K) + len(pk.G1.Z)
	return int64(g1)*curve.SizeOfG1AffineUncompressed + int64(len(pk.G2.B))*curve.SizeOfG2AffineUncompressed
}

// Prover proves partitions of one circuit with its keys.
type Prover struct {
	Keys *Keys
	Log  *slog.Logger
	// EarlyG2 starts the B-in-G2 MSM on the CPU when the device phase
	// starts, overlapping it; Finalize then only assembles. On a host whose
	// CPU also runs the device phase (the CPU backend) the two compete.
	EarlyG2 bool
	// Chunk is the most scalars an MSM expands from the packed assignment
	// at once (0: DefaultChunk): the MSMs run chunk by chunk and add.
	Chunk int
}

// DefaultChunk is the default Prover.Chunk: 256 MiB of scalars, so a
// partition of up to 8M wires (the 2KiB to 512MiB PoRep circuits) runs
// each MSM whole, and a 32GiB one in 16 chunks.
const DefaultChunk = 1 << 23

func (p *Prover) chunk() int {
	if p.Chunk > 0 {
		return p.Chunk
	}
	return DefaultChunk
}

// LaneBytes is the host memory one device phase of this circuit holds
// beyond the packed assignment: the quotient's (on the host,
// gpu.HostQuotient: two domain-sized vectors, the second freed before
// the MSMs, the first become H; on a device that computes it, a
// gpu.Quotienter: H alone and a staging chunk) and the MSMs' scalars (a
// chunk, two where there are several (the next is expanded during the
// MSM), and the early G2 MSM's own): what a device lane reserves.
func (p *Prover) LaneBytes(onDevice bool) int64 {
	n := p.Keys.PK.Domain.Cardinality
	one := int64(min(p.chunk(), p.Keys.Wires())) * fr.Bytes
	chunk := one
	if p.Keys.Wires() > p.chunk() {
		chunk += one // double-buffered: the next chunk expanded during the MSM
	}
	if p.EarlyG2 {
		chunk += one
	}
	if onDevice {
		return gpu.DeviceQuotientHostBytes(n) + chunk
	}
	return gpu.HostQuotientBytes(n) + chunk
}

// New returns a prover over keys; log may be nil.
func New(keys *Keys, log *slog.Logger) (*Prover, error) {
	if keys == nil || keys.PK == nil || keys.VK == nil || keys.NbPublic < 1 {
		return nil, errors.New("prover: keys without a proving key, a verifying key or public inputs")
	}
	if len(keys.PK.CommitmentKeys) != 0 {
		return nil, errors.New("prover: circuits with BSB22 commitments are not supported by the split prover")
	}
	if keys.System == nil {
		return nil, errors.New("prover: keys without the circuit's recorded constraint system")
	}
	if w := keys.Wires(); keys.System.Wires() != w || uint64(keys.System.Rows()) > keys.PK.Domain.Cardinality {
		return nil, fmt.Errorf("prover: a constraint system of %d wires and %d rows, keys of %d wires and a domain of %d",
			keys.System.Wires(), keys.System.Rows(), w, keys.PK.Domain.Cardinality)
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Prover{Keys: keys, Log: log}, nil
}

// Solution is a synthesized partition as it waits for a device: its wire
// vector (ONE, the other public inputs, the aux values) packed. a, b and
// c are not kept: the device phase evaluates them from the circuit's
// recorded system (Keys.System).
type Solution struct {
	Partition string // "<prover>/<sector>/<k>", the id in log lines
	// Job names the job the partition belongs to (its input's identity):
	// a spilled solution is checked against it, so that another job's
	// partition of the same name is refused.
	Job       string
	W         *packed.Vector
	SynthTime time.Duration
}

// Bytes is the memory the solution holds.
func (s *Solution) Bytes() int64 { return s.W.Bytes() }

// PartitionID names partition k of prover's sector (prover: the hex of
// its 32-byte id) in logs and handles: two provers' sector 1 are two
// sectors, and a spilled witness is checked against the whole name.
func PartitionID(prover string, sectorID uint64, k int) string {
	return fmt.Sprintf("%s/%d/%d", prover, sectorID, k)
}

// Partial is the device phase's result: the G1 MSMs without the proof's
// randomness, and the wire values the B-in-G2 MSM needs.
type Partial struct {
	Partition   string
	Device      string
	DeviceTime  time.Duration // slot held
	QueueTime   time.Duration // waited for a slot
	DeviceStart time.Time     // slot acquired
	NTTTime     time.Duration
	MSMTime     time.Duration
	// BusyTime is what the device's own operations took of DeviceTime:
	// the NTTs and MSMs, less the host's evaluation of a, b, c inside the
	// quotient; the rest of the slot's hold is host work (expanding the
	// scalars, staging).
	BusyTime time.Duration

	ar, bs1, krs, h curve.G1Jac
	w               *packed.Vector // the assignment, for the B-in-G2 MSM
	g2              chan g2Result  // set when the G2 MSM started early
	g2done          *g2Result      // the G2 MSM's result once known
}

// G2Time is the B-in-G2 MSM's duration, known once Finalize has run.
func (pt *Partial) G2Time() time.Duration {
	if pt.g2done == nil {
		return 0
	}
	return pt.g2done.dur
}

type g2Result struct {
	bs  curve.G2Jac
	dur time.Duration
	err error
}

// Bytes is the memory the partial holds (the packed assignment, kept for
// the B-in-G2 MSM).
func (pt *Partial) Bytes() int64 { return pt.w.Bytes() }

// Quotient is a solution after the device phase's first step: H, and the
// packed assignment the MSMs expand.
type Quotient struct {
	partition string
	w         *packed.Vector
	h         []fr.Element
	g2        chan g2Result
	nttTime   time.Duration
	busy      time.Duration // the quotient's device operations, its evaluation left out
}

// Bytes is the memory the quotient holds (the assignment and H).
func (q *Quotient) Bytes() int64 { return q.w.Bytes() + int64(cap(q.h))*fr.Bytes }

// Start runs the device phase of a solution on a device from slots (Run
// acquires it: a slot is held for exactly this phase): Quotient, then MSM.
// It consumes sol. A host runs the two steps itself, to give the freed
// memory back between them.
func (p *Prover) Start(ctx context.Context, slots *gpu.Slots, sol *Solution) (*Partial, error) {
	var pt *Partial
	_, err := slots.Run(ctx, gpu.Order{}, func(dev gpu.Held) error {
		q, err := p.Quotient(ctx, dev, sol)
		if err != nil {
			return err
		}
		pt, err = p.MSM(ctx, dev, q)
		return err
	})
	if f := (*gpu.Fault)(nil); errors.As(err, &f) && ctx.Err() == nil {
		p.Log.Error("DEVICE_QUARANTINED", "device", f.Device, "partition", sol.Partition, "error", err)
	}
	if err != nil {
		return nil, fmt.Errorf("device phase %s: %w", sol.Partition, err)
	}
	return pt, nil
}

// Quotient is the device phase's first step, on dev (a slot the caller
// holds): a, b, c evaluated from the solution's assignment and the
// circuit's system, chunk by chunk as dev takes them, and H from them by
// NTTs. It consumes sol, which must not be reused. An error of the device
// is a gpu.Fault.
func (p *Prover) Quotient(ctx context.Context, dev gpu.Held, sol *Solution) (*Quotient, error) {
	if sol.W == nil {
		return nil, fmt.Errorf("device phase %s: solution already consumed", sol.Partition)
	}
	sys := p.Keys.System
	if sol.W.Len() != sys.Wires() {
		return nil, fmt.Errorf("device phase %s: an assignment of %d wires, the circuit has %d", sol.Partition, sol.W.Len(), sys.Wires())
	}
	q := &Quotient{partition: sol.Partition, w: sol.W}
	if p.EarlyG2 {
		q.g2 = make(chan g2Result, 1)
		// Not the phase's ctx: this G2 MSM runs beside the device phase,
		// and its yields would be subtracted from the phase's busy time
		// (yield.Waited counts per piece of work). It runs whole, as before.
		go func() { q.g2 <- p.g2MSM(context.Background(), q.w) }()
	}
	p.Log.Info("GPU_START", "partition", sol.Partition, "device", dev.Name(), "bytes", sol.Bytes(), "queue_ms", dev.Queue.Milliseconds())
	t0 := time.Now()
	var evalNs atomic.Int64
	y0 := yield.Waited(ctx)
	fill := func(which, lo int, dst []fr.Element) error {
		// Host work between device operations: a checkpoint where urgent
		// work on the host comes first (yield.Point).
		if err := yield.Point(ctx); err != nil {
			return err
		}
		t := time.Now()
		defer func() { evalNs.Add(int64(time.Since(t))) }()
		return sys.Eval(which, q.w, lo, dst)
	}
	h, err := gpu.Quotient(ctx, dev.Backend, &p.Keys.PK.Domain, fill)
	if err != nil {
		return nil, gpu.Faulted(dev, fmt.Errorf("device phase %s: H: %w", sol.Partition, err))
	}
	sol.W = nil // the quotient holds the assignment now
	q.h, q.nttTime = h, time.Since(t0)
	q.busy = q.nttTime - time.Duration(evalNs.Load()) - (yield.Waited(ctx) - y0)
	return q, nil
}

// MSM is the device phase's second step, on dev: the four G1 MSMs
// without the proof's randomness, the assignment's scalars expanded a
// chunk at a time. It consumes q. An error of the device is a gpu.Fault.
func (p *Prover) MSM(ctx context.Context, dev gpu.Held, q *Quotient) (*Partial, error) {
	pk := p.Keys.PK
	pt := &Partial{Partition: q.partition, Device: dev.Name(), QueueTime: dev.Queue, DeviceStart: dev.Start,
		NTTTime: q.nttTime, BusyTime: q.busy, w: q.w, g2: q.g2}
	msm := func(points []curve.G1Affine, scalars []fr.Element) (curve.G1Jac, error) {
		// The device is not busy while the phase yields to urgent work.
		t, y := time.Now(), yield.Waited(ctx)
		defer func() { pt.BusyTime += time.Since(t) - (yield.Waited(ctx) - y) }()
		return dev.MSMG1(ctx, points, scalars)
	}
	t1 := time.Now()
	sizeH := int(pk.Domain.Cardinality - 1) // deg(H) = n-2
	buf := make([]fr.Element, min(p.chunk(), q.w.Len()))
	var next []fr.Element
	if q.w.Len() > len(buf) {
		// More than one chunk: the next is expanded while the device
		// runs this one.
		next = make([]fr.Element, len(buf))
	}
	for _, m := range []struct {
		dst    *curve.G1Jac
		points []curve.G1Affine
		from   int
		skip   []bool
	}{
		{&pt.ar, pk.G1.A, 0, pk.InfinityA},
		{&pt.bs1, pk.G1.B, 0, pk.InfinityB},
		{&pt.krs, pk.G1.K, p.Keys.NbPublic, nil},
	} {
		var err error
		*m.dst, err = msmPackedBuffered(q.w, m.from, m.skip, m.points, buf, next, msm)
		if err != nil {
			return nil, gpu.Faulted(dev, fmt.Errorf("device phase %s: %w", q.partition, err))
		}
	}
	buf, next = nil, nil
	h, err := msm(pk.G1.Z, q.h[:sizeH])
	if err != nil {
		return nil, gpu.Faulted(dev, fmt.Errorf("device phase %s: %w", q.partition, err))
	}
	// The quotient came without its division by Z on the coset, a
	// constant: the MSM over it is scaled once (gpu.Quotient).
	pt.h.ScalarMultiplication(&h, zInverse(&pk.Domain))
	q.w, q.h = nil, nil // the partial keeps the assignment for the G2 MSM
	pt.MSMTime = time.Since(t1)
	pt.DeviceTime = time.Since(dev.Start)
	p.Log.Info("GPU_END", "partition", pt.Partition, "device", dev.Name(), "bytes", pt.Bytes(),
		"ntt_ms", pt.NTTTime.Milliseconds(), "msm_ms", pt.MSMTime.Milliseconds(), "gpu_ms", pt.DeviceTime.Milliseconds(),
		"slot_ms", pt.DeviceTime.Milliseconds(), "device_ms", pt.BusyTime.Milliseconds())
	return pt, nil
}

// zInverse is 1/Z on the coset of d: Z(gX) = g^n − 1 at every point.
func zInverse(d *fft.Domain) *big.Int {
	var den, one fr.Element
	one.SetOne()
	den.Exp(d.FrMultiplicativeGen, big.NewInt(int64(d.Cardinality)))
	den.Sub(&den, &one).Inverse(&den)
	return den.BigInt(new(big.Int))
}

// msmPacked is the MSM of points with the assignment's elements from
// index from on, those whose skip entry is set left out (their points are
// at infinity and not in the key), expanded into buf a chunk at a time:
// the chunks' MSMs are added. Every point must get a scalar and every
// element left a point.
func msmPacked[P, J any, PJ interface {
	*J
	AddAssign(*J) *J
}](w *packed.Vector, from int, skip []bool, points []P, buf []fr.Element, msm func([]P, []fr.Element) (J, error)) (J, error) {
	return msmPackedBuffered[P, J, PJ](w, from, skip, points, buf, nil, msm)
}

// msmPackedBuffered is msmPacked; with next (a second buffer as long as
// buf) each chunk's scalars are expanded on the host while the device
// runs the MSM of the chunk before (double buffering), so that the
// expansion does not hold the device slot idle.
func msmPackedBuffered[P, J any, PJ interface {
	*J
	AddAssign(*J) *J
}](w *packed.Vector, from int, skip []bool, points []P, buf, next []fr.Element, msm func([]P, []fr.Element) (J, error)) (J, error) {
	var acc J
	done := 0
	type expanded struct{ next, k int }
	expand := func(dst []fr.Element, from, done int) expanded {
		n, k := w.ExpandSkip(dst[:min(len(dst), len(points)-done)], from, skip)
		return expanded{n, k}
	}
	var ahead chan expanded
	cur := expanded{from, 0}
	if from < w.Len() && done < len(points) {
		cur = expand(buf, from, done)
	}
	for cur.k > 0 {
		if next != nil && done+cur.k < len(points) && cur.next < w.Len() {
			ahead = make(chan expanded, 1)
			go func(from, done int) { ahead <- expand(next, from, done) }(cur.next, done+cur.k)
		}
		part, err := msm(points[done:done+cur.k], buf[:cur.k])
		if err != nil {
			if ahead != nil {
				<-ahead
			}
			return acc, err
		}
		PJ(&acc).AddAssign(&part)
		done += cur.k
		from = cur.next
		switch {
		case ahead != nil:
			cur = <-ahead
			ahead = nil
			buf, next = next, buf
		case from < w.Len() && done < len(points):
			cur = expand(buf, from, done)
		default:
			cur = expanded{from, 0}
		}
	}
	if rest, _ := w.ExpandSkip(buf[:min(1, len(buf))], from, skip); done != len(points) || rest != w.Len() {
		return acc, fmt.Errorf("msm: %d of %d points given scalars, the assignment read to %d of %d", done, len(points), rest, w.Len())
	}
	return acc, nil
}

// g2MSM is the B-in-G2 MSM. Where ctx is work that yields to urgent work,
// it runs in chunks of about gpu.CPUYieldChunk points with a checkpoint
// between.
func (p *Prover) g2MSM(ctx context.Context, w *packed.Vector) g2Result {
	t0, y0 := time.Now(), yield.Waited(ctx)
	cfg := ecc.MultiExpConfig{NbTasks: runtime.NumCPU()}
	chunk := p.chunk()
	if yield.Yields(ctx) {
		chunk = gpu.YieldChunk(min(chunk, len(p.Keys.PK.G2.B)), gpu.CPUYieldChunk)
	}
	buf := make([]fr.Element, min(chunk, len(p.Keys.PK.G2.B)))
	first := true
	bs, err := msmPacked(w, 0, p.Keys.PK.InfinityB, p.Keys.PK.G2.B, buf, func(points []curve.G2Affine, scalars []fr.Element) (curve.G2Jac, error) {
		var r curve.G2Jac
		if !first {
			if err := yield.Point(ctx); err != nil {
				return r, err
			}
		}
		first = false
		_, err := r.MultiExp(points, scalars, cfg)
		return r, err
	})
	return g2Result{bs: bs, dur: time.Since(t0) - (yield.Waited(ctx) - y0), err: err}
}

// Finalize is the CPU finalize: the B-in-G2 MSM (unless it ran early) and the
// proof assembly with fresh r, s. It holds no device slot. It leaves the
// partial intact, so a failed Finalize can be retried, but two Finalize calls
// on one partial must not run at once.
func (p *Prover) Finalize(ctx context.Context, pt *Partial) (*groth16bls.Proof, time.Duration, error) {
	if err := ctx.Err(); err != nil {
		return nil, 0, err
	}
	pk := p.Keys.PK
	t0 := time.Now()
	var g2 g2Result
	switch {
	case pt.g2done != nil:
		g2 = *pt.g2done // a retried Finalize reuses the G2 MSM
	case pt.g2 != nil:
		select {
		case g2 = <-pt.g2:
		case <-ctx.Done():
			return nil, 0, ctx.Err()
		}
	default:
		if err := yield.Point(ctx); err != nil {
			return nil, 0, err
		}
		g2 = p.g2MSM(ctx, pt.w)
	}
	if g2.err == nil {
		pt.g2done = &g2
	}
	if g2.err != nil {
		return nil, 0, fmt.Errorf("finalize %s: msm g2: %w", pt.Partition, g2.err)
	}

	var r, s, kr fr.Element
	if _, err := r.SetRandom(); err != nil {
		return nil, 0, fmt.Errorf("finalize %s: random r: %w", pt.Partition, err)
	}
	if _, err := s.SetRandom(); err != nil {
		return nil, 0, fmt.Errorf("finalize %s: random s: %w", pt.Partition, err)
	}
	kr.Mul(&r, &s).Neg(&kr)
	var rb, sb big.Int
	r.BigInt(&rb)
	s.BigInt(&sb)
	deltas := curve.BatchScalarMultiplicationG1(&pk.G1.Delta, []fr.Element{r, s, kr})

	proof := &groth16bls.Proof{}
	ar := pt.ar
	ar.AddMixed(&pk.G1.Alpha)
	ar.AddMixed(&deltas[0])
	proof.Ar.FromJacobian(&ar)

	bs1 := pt.bs1
	bs1.AddMixed(&pk.G1.Beta)
	bs1.AddMixed(&deltas[1])

	bs := g2.bs
	var deltaS curve.G2Jac
	deltaS.FromAffine(&pk.G2.Delta)
	deltaS.ScalarMultiplication(&deltaS, &sb)
	bs.AddAssign(&deltaS)
	bs.AddMixed(&pk.G2.Beta)
	proof.Bs.FromJacobian(&bs)

	krs := pt.krs
	krs.AddMixed(&deltas[2])
	krs.AddAssign(&pt.h)
	var p1 curve.G1Jac
	p1.ScalarMultiplication(&ar, &sb)
	krs.AddAssign(&p1)
	p1.ScalarMultiplication(&bs1, &rb)
	krs.AddAssign(&p1)
	proof.Krs.FromJacobian(&krs)

	d := time.Since(t0)
	p.Log.Info("FINALIZE_END", "partition", pt.Partition, "g2_ms", g2.dur.Milliseconds(), "early_g2", pt.g2 != nil, "bytes", 0, "finalize_ms", d.Milliseconds())
	return proof, d, nil
}
