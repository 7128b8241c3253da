package scheme

import (
	"context"
	"fmt"
	"runtime/debug"
	"time"

	"github.com/c2flow/c2flow/gpu"
)

// PartitionTimes are the step times of one partition in direct mode.
type PartitionTimes struct {
	Partition string
	Synth     time.Duration
	Queue     time.Duration // waiting for a device slot
	Device    time.Duration
	NTT, MSM  time.Duration // of Device
	Finalize  time.Duration
}

// ProveDirect is direct mode, the baseline the pipeline is measured
// against, for any scheme: one process, the sector's partitions one after
// another (synthesize, device step on slots, finalize, the partition
// verified), then the C2 assembled and verified whole. s must have been
// checked (Sector.Verify). progress, if set, gets each partition's times as
// it is done. The C2 is returned only if it verifies.
func ProveDirect(ctx context.Context, c Circuit, s Sector, slots *gpu.Slots, progress func(PartitionTimes)) ([]byte, []PartitionTimes, error) {
	pr := c.Prover()
	parts := s.Partitions()
	enc := make([][]byte, parts)
	times := make([]PartitionTimes, 0, parts)
	for k := range parts {
		sol, err := c.Synthesize(ctx, s, k)
		if err != nil {
			return nil, nil, fmt.Errorf("direct mode: synthesize partition %d: %w", k, err)
		}
		t := PartitionTimes{Partition: sol.Partition, Synth: sol.SynthTime}
		partial, err := pr.Start(ctx, slots, sol)
		if err != nil {
			return nil, nil, fmt.Errorf("direct mode: device step of %s: %w", t.Partition, err)
		}
		sol = nil
		t.Queue, t.Device, t.NTT, t.MSM = partial.QueueTime, partial.DeviceTime, partial.NTTTime, partial.MSMTime
		proof, fin, err := pr.Finalize(ctx, partial)
		if err != nil {
			return nil, nil, fmt.Errorf("direct mode: finalize %s: %w", t.Partition, err)
		}
		t.Finalize = fin
		if err := c.VerifyPartition(s, k, proof); err != nil {
			return nil, nil, fmt.Errorf("direct mode: %s does not verify: %w", t.Partition, err)
		}
		if enc[k], err = c.EncodePartition(proof); err != nil {
			return nil, nil, fmt.Errorf("direct mode: encode %s: %w", t.Partition, err)
		}
		times = append(times, t)
		if progress != nil {
			progress(t)
		}
		partial = nil
		debug.FreeOSMemory() // a 32GiB partition's witness is ~15 GiB: gone before the next
	}
	c2, err := c.Assemble(s, enc)
	if err != nil {
		return nil, nil, fmt.Errorf("direct mode: %w", err)
	}
	if err := c.VerifyC2(s, c2); err != nil {
		return nil, nil, fmt.Errorf("direct mode: the C2 does not verify: %w", err)
	}
	return c2, times, nil
}
