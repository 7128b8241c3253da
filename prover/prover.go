// Package prover proves synthesized partitions (a scheme makes the
// Solution; the prover knows no scheme, only Keys) with a
// Groth16 prover split in two, after SupraSeal/cuzk's prove_start and
// prove_finish:
//
//   - Start, the device phase, holds one device slot: H from a, b, c by
//     NTTs (a, b, c are freed as soon as H exists), then the G1 MSMs
//     (A, B in G1, K, H). None of it depends on the proof's randomness.
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
	"time"

	"github.com/consensys/gnark-crypto/ecc"
	curve "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	groth16bls "github.com/consensys/gnark/backend/groth16/bls12-381"

	"github.com/c2flow/c2flow/gpu"
)

// Keys is what the prover needs of a circuit's Groth16 setup: gnark's
// proving and verifying keys and the count of public variables (ONE
// included), the leading values of a solution's wire vector. A scheme
// builds them from its own key files; the prover knows no scheme.
type Keys struct {
	PK       *groth16bls.ProvingKey
	VK       *groth16bls.VerifyingKey
	NbPublic int
	// Digest names the keys in logs and errors (a prefix of their digest).
	Digest string
}

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
}

// New returns a prover over keys; log may be nil.
func New(keys *Keys, log *slog.Logger) (*Prover, error) {
	if keys == nil || keys.PK == nil || keys.VK == nil || keys.NbPublic < 1 {
		return nil, errors.New("prover: keys without a proving key, a verifying key or public inputs")
	}
	if len(keys.PK.CommitmentKeys) != 0 {
		return nil, errors.New("prover: circuits with BSB22 commitments are not supported by the split prover")
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Prover{Keys: keys, Log: log}, nil
}

// Solution is a synthesized partition: the wire vector and the a, b, c
// evaluation vectors. It is the big memory of the pipeline.
type Solution struct {
	Partition string // "<sector>/<k>", the id in log lines
	W         []fr.Element
	A, B, C   []fr.Element
	SynthTime time.Duration
}

// Bytes is the memory the solution holds.
func (s *Solution) Bytes() int64 {
	return int64(cap(s.W)+cap(s.A)+cap(s.B)+cap(s.C)) * fr.Bytes
}

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

	ar, bs1, krs, h curve.G1Jac
	wireB           []fr.Element
	g2              chan g2Result // set when the G2 MSM started early
	g2done          *g2Result     // the G2 MSM's result once known
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

// Bytes is the memory the partial holds (the filtered B wires).
func (pt *Partial) Bytes() int64 { return int64(cap(pt.wireB)) * fr.Bytes }

// Quotient is a solution after the device phase's first step: H, and the
// wires the MSMs need. The solution's a, b and c are gone: the moment a
// memory budget may admit the next synthesis.
type Quotient struct {
	partition   string
	wire, wireB []fr.Element
	h           []fr.Element
	g2          chan g2Result
	nttTime     time.Duration
}

// Bytes is the memory the quotient holds (the wires and H).
func (q *Quotient) Bytes() int64 {
	return int64(cap(q.wire)+cap(q.wireB)+cap(q.h)) * fr.Bytes
}

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
// holds): H = (A*B - C)/Z by NTTs. It consumes sol: a, b and c are freed
// when it returns, and the solution must not be reused. An error of the
// device is a gpu.Fault.
func (p *Prover) Quotient(ctx context.Context, dev gpu.Held, sol *Solution) (*Quotient, error) {
	pk := p.Keys.PK
	if sol.A == nil {
		return nil, fmt.Errorf("device phase %s: solution already consumed", sol.Partition)
	}
	q := &Quotient{partition: sol.Partition, wire: sol.W}
	q.wireB = filter(sol.W, pk.InfinityB, pk.NbInfinityB)
	if p.EarlyG2 {
		q.g2 = make(chan g2Result, 1)
		go func() { q.g2 <- p.g2MSM(q.wireB) }()
	}
	p.Log.Info("GPU_START", "partition", sol.Partition, "device", dev.Name(), "bytes", sol.Bytes(), "queue_ms", dev.Queue.Milliseconds())
	t0 := time.Now()
	h, err := computeH(ctx, dev, sol, pk)
	if err != nil {
		return nil, gpu.Faulted(dev, fmt.Errorf("device phase %s: H: %w", sol.Partition, err))
	}
	sol.W = nil // the quotient holds the wires now
	q.h, q.nttTime = h, time.Since(t0)
	return q, nil
}

// MSM is the device phase's second step, on dev: the four G1 MSMs
// without the proof's randomness. It consumes q. An error of the device
// is a gpu.Fault.
func (p *Prover) MSM(ctx context.Context, dev gpu.Held, q *Quotient) (*Partial, error) {
	pk := p.Keys.PK
	pt := &Partial{Partition: q.partition, Device: dev.Name(), QueueTime: dev.Queue, DeviceStart: dev.Start,
		NTTTime: q.nttTime, wireB: q.wireB, g2: q.g2}
	t1 := time.Now()
	wire := q.wire
	wireA := filter(wire, pk.InfinityA, pk.NbInfinityA)
	sizeH := int(pk.Domain.Cardinality - 1) // deg(H) = n-2
	nbPublic := p.Keys.NbPublic
	for _, m := range []struct {
		dst     *curve.G1Jac
		points  []curve.G1Affine
		scalars []fr.Element
	}{
		{&pt.ar, pk.G1.A, wireA},
		{&pt.bs1, pk.G1.B, pt.wireB},
		{&pt.krs, pk.G1.K, wire[nbPublic:]},
		{&pt.h, pk.G1.Z, q.h[:sizeH]},
	} {
		var err error
		if *m.dst, err = dev.MSMG1(ctx, m.points, m.scalars); err != nil {
			return nil, gpu.Faulted(dev, fmt.Errorf("device phase %s: %w", q.partition, err))
		}
	}
	q.wire, q.h, q.wireB = nil, nil, nil // the partial keeps only the filtered B wires
	pt.MSMTime = time.Since(t1)
	pt.DeviceTime = time.Since(dev.Start)
	p.Log.Info("GPU_END", "partition", pt.Partition, "device", dev.Name(), "bytes", pt.Bytes(),
		"ntt_ms", pt.NTTTime.Milliseconds(), "msm_ms", pt.MSMTime.Milliseconds(), "gpu_ms", pt.DeviceTime.Milliseconds())
	return pt, nil
}

// computeH is gnark's computeH on a device: H = (A*B - C)/Z on the coset,
// brought back by an inverse coset NTT. It reuses a's buffer for H and
// drops a, b, c from the solution.
func computeH(ctx context.Context, dev gpu.Backend, sol *Solution, pk *groth16bls.ProvingKey) ([]fr.Element, error) {
	d := &pk.Domain
	n := int(d.Cardinality)
	pad := func(v []fr.Element) []fr.Element {
		if cap(v) >= n {
			v = v[:n]
			clear(v[len(sol.A):])
			return v
		}
		out := make([]fr.Element, n)
		copy(out, v)
		return out
	}
	a, b, c := pad(sol.A), pad(sol.B), pad(sol.C)
	sol.A, sol.B, sol.C = nil, nil, nil
	for _, v := range [][]fr.Element{a, b, c} {
		if err := dev.INTT(ctx, d, v, false); err != nil {
			return nil, err
		}
		if err := dev.NTT(ctx, d, v, true); err != nil {
			return nil, err
		}
	}
	var den, one fr.Element
	one.SetOne()
	den.Exp(d.FrMultiplicativeGen, big.NewInt(int64(d.Cardinality)))
	den.Sub(&den, &one).Inverse(&den)
	parallel(n, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			a[i].Mul(&a[i], &b[i]).Sub(&a[i], &c[i]).Mul(&a[i], &den)
		}
	})
	b, c = nil, nil
	if err := dev.INTT(ctx, d, a, true); err != nil {
		return nil, err
	}
	return a, nil
}

func (p *Prover) g2MSM(wireB []fr.Element) g2Result {
	t0 := time.Now()
	var bs curve.G2Jac
	_, err := bs.MultiExp(p.Keys.PK.G2.B, wireB, ecc.MultiExpConfig{NbTasks: runtime.NumCPU()})
	return g2Result{bs: bs, dur: time.Since(t0), err: err}
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
		g2 = p.g2MSM(pt.wireB)
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

// filter drops the wires whose proving-key point is at infinity, as gnark's
// prover does before each MSM.
func filter(wire []fr.Element, inf []bool, nbInf uint64) []fr.Element {
	out := make([]fr.Element, len(wire)-int(nbInf))
	for i, j := 0, 0; j < len(out); i++ {
		if inf[i] {
			continue
		}
		out[j] = wire[i]
		j++
	}
	return out
}

func parallel(n int, f func(lo, hi int)) {
	k := runtime.NumCPU()
	if n < 1<<12 || k == 1 {
		f(0, n)
		return
	}
	done := make(chan struct{}, k)
	chunk := (n + k - 1) / k
	for lo := 0; lo < n; lo += chunk {
		go func(lo int) { f(lo, min(lo+chunk, n)); done <- struct{}{} }(lo)
	}
	for lo := 0; lo < n; lo += chunk {
		<-done
	}
}
