// Package schemetest gives tests test-scheme sectors proved directly and
// stored as the pipeline stores its inputs.
package schemetest

import (
	"bytes"
	"context"
	"fmt"

	"github.com/c2flow/c2flow/gpu"
	"github.com/c2flow/c2flow/job"
	"github.com/c2flow/c2flow/prover"
	"github.com/c2flow/c2flow/scheme"
	"github.com/c2flow/c2flow/scheme/testscheme"
	"github.com/c2flow/c2flow/scheme/testscheme/params"
	"github.com/c2flow/c2flow/scheme/testscheme/porep"
	"github.com/c2flow/c2flow/storage"
)

// ProveSector is scheme.ProveDirect over a test-scheme C1 with p over
// keys, the C2 decoded. The C1 must have been checked (porep.C1.Verify).
func ProveSector(ctx context.Context, p *prover.Prover, keys *params.Keys, slots *gpu.Slots, c1 *porep.C1, progress func(scheme.PartitionTimes)) (*testscheme.C2, []scheme.PartitionTimes, error) {
	b, times, err := scheme.ProveDirect(ctx, testscheme.NewCircuit(p, keys), &testscheme.Sector{C1: c1}, slots, progress)
	if err != nil {
		return nil, nil, err
	}
	c2, err := testscheme.UnmarshalC2(b)
	if err != nil {
		return nil, nil, err
	}
	return c2, times, nil
}

// PutC1 encodes a C1 and stores it under its sector identity, which it
// returns.
func PutC1(ctx context.Context, store *storage.Store, c1 *porep.C1) (job.Ref, error) {
	var b bytes.Buffer
	if err := c1.Encode(&b); err != nil {
		return job.Ref{}, fmt.Errorf("encode C1 of sector %d: %w", c1.SectorID, err)
	}
	ref := job.NewRef(c1.ProverID, c1.SectorID, b.Bytes())
	ref.Proof = c1.Profile.Name
	return ref, store.PutC1(ctx, ref, b.Bytes())
}
