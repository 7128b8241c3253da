package prover_test

import (
	"context"
	"strings"
	"testing"

	"github.com/c2flow/c2flow/prover"
	"github.com/c2flow/c2flow/scheme/testscheme"
	"github.com/c2flow/c2flow/scheme/testscheme/porep/poreptest"
)

// A spilled witness proves exactly as the one in memory, and a damaged
// one is refused before any device work.
func TestSpilledSolutionProves(t *testing.T) {
	p := newProver(t, "2KiB")
	c1 := poreptest.Sector(t, "2KiB", 21).C1()
	ctx := context.Background()
	sol, err := p.Synthesize(ctx, c1, 0)
	if err != nil {
		t.Fatal(err)
	}
	data, err := sol.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	if n := (len(sol.W) + len(sol.A) + len(sol.B) + len(sol.C)) * 32; len(data) < n {
		t.Fatalf("spill of %d bytes for %d bytes of vectors", len(data), n)
	}
	back, err := prover.UnmarshalSolution(data)
	if err != nil {
		t.Fatal(err)
	}
	if back.Partition != sol.Partition || len(back.W) != len(sol.W) || back.SynthTime != sol.SynthTime {
		t.Fatalf("decoded %s (%d wires), want %s (%d)", back.Partition, len(back.W), sol.Partition, len(sol.W))
	}
	pt, err := p.Start(ctx, cpuSlots(t, 1), back)
	if err != nil {
		t.Fatal(err)
	}
	proof, _, err := p.Finalize(ctx, pt)
	if err != nil {
		t.Fatal(err)
	}
	if err := testscheme.Verify(p.Keys.VK, c1.Statement(), 0, proof); err != nil {
		t.Fatalf("proof from a spilled witness: %v", err)
	}
	for name, bad := range map[string][]byte{
		"flipped": func() []byte { b := append([]byte(nil), data...); b[len(b)/2] ^= 1; return b }(),
		"torn":    data[:len(data)-100],
		"empty":   nil,
	} {
		if _, err := prover.UnmarshalSolution(bad); err == nil || !strings.Contains(err.Error(), "spilled witness") {
			t.Errorf("%s spill: %v", name, err)
		}
	}
}
