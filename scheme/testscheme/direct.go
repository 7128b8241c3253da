package testscheme

import (
	"context"

	"github.com/c2flow/c2flow/gpu"
	"github.com/c2flow/c2flow/params"
	"github.com/c2flow/c2flow/porep"
	"github.com/c2flow/c2flow/prover"
	"github.com/c2flow/c2flow/scheme"
)

// ProveSector is scheme.ProveDirect over a test-scheme C1 with p over
// keys, the C2 decoded. The C1 must have been checked (porep.C1.Verify).
func ProveSector(ctx context.Context, p *prover.Prover, keys *params.Keys, slots *gpu.Slots, c1 *porep.C1, progress func(scheme.PartitionTimes)) (*C2, []scheme.PartitionTimes, error) {
	b, times, err := scheme.ProveDirect(ctx, &Circuit{pr: p, keys: keys}, &Sector{C1: c1}, slots, progress)
	if err != nil {
		return nil, nil, err
	}
	c2, err := UnmarshalC2(b)
	if err != nil {
		return nil, nil, err
	}
	return c2, times, nil
}
