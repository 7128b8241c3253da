package testscheme

import (
	"context"
	"fmt"
	"time"

	"github.com/c2flow/c2flow/gpu"
	"github.com/c2flow/c2flow/params"
	"github.com/c2flow/c2flow/porep"
	"github.com/c2flow/c2flow/prover"
)

// PartitionTimes are the phase times of one partition.
type PartitionTimes struct {
	Partition string
	Synth     time.Duration
	Queue     time.Duration
	Device    time.Duration
	Finalize  time.Duration
}

// ProveSector is direct mode, the baseline the pipeline is measured
// against: one process, partitions one after another, synthesize -> Start
// -> Finish -> verify, with p over keys. The C1 must have been checked
// (porep.C1.Verify).
func ProveSector(ctx context.Context, p *prover.Prover, keys *params.Keys, slots *gpu.Slots, c1 *porep.C1, progress func(PartitionTimes)) (*C2, []PartitionTimes, error) {
	out := &C2{Profile: c1.Profile.Name}
	var times []PartitionTimes
	for k := range c1.Partitions {
		sol, err := Synthesize(ctx, keys, c1, k)
		if err != nil {
			return nil, nil, err
		}
		t := PartitionTimes{Partition: sol.Partition, Synth: sol.SynthTime}
		pt, err := p.Start(ctx, slots, sol)
		if err != nil {
			return nil, nil, err
		}
		t.Queue, t.Device = pt.QueueTime, pt.DeviceTime
		proof, fin, err := p.Finish(ctx, pt)
		if err != nil {
			return nil, nil, err
		}
		t.Finalize = fin
		if err := Verify(p.Keys.VK, c1.Statement(), k, proof); err != nil {
			return nil, nil, fmt.Errorf("sector %d: %w", c1.SectorID, err)
		}
		out.Proofs = append(out.Proofs, proof)
		times = append(times, t)
		if progress != nil {
			progress(t)
		}
	}
	return out, times, nil
}
