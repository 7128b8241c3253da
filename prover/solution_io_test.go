package prover_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"testing"
	"testing/iotest"

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
	sol.Job = "job-21"
	var buf bytes.Buffer
	n, err := sol.WriteTo(&buf)
	if err != nil {
		t.Fatal(err)
	}
	data := buf.Bytes()
	if n != int64(len(data)) || n != sol.EncodedBytes() {
		t.Fatalf("wrote %d bytes, have %d, EncodedBytes %d", n, len(data), sol.EncodedBytes())
	}
	// The test scheme's Poseidon2 wires are field elements, not bits: its
	// packed assignment costs its dense one plus two bits a wire, and a
	// spill no longer carries a, b, c (three times the wires).
	wires := p.Keys.Wires()
	if most := int64(wires)*32 + int64(wires)/4 + 1024; n > most {
		t.Fatalf("spill of %d bytes for %d wires: more than the dense wires and two bits each (%d)", n, wires, most)
	}
	t.Logf("spill of %d wires: %d bytes (%d of them field elements)", wires, n, sol.W.Others())
	back, err := prover.ReadSolution(iotest.OneByteReader(bytes.NewReader(data)), wires)
	if err != nil {
		t.Fatal(err)
	}
	if back.Partition != sol.Partition || back.Job != sol.Job || back.W.Len() != sol.W.Len() || back.SynthTime != sol.SynthTime {
		t.Fatalf("decoded %s of %s (%d wires), want %s of %s (%d)", back.Partition, back.Job, back.W.Len(), sol.Partition, sol.Job, sol.W.Len())
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
		"flipped in the bits":  func() []byte { b := bytes.Clone(data); b[len(b)/4] ^= 1; return b }(),
		"flipped in the field": func() []byte { b := bytes.Clone(data); b[len(b)-40] ^= 1; return b }(),
		"flipped checksum":     func() []byte { b := bytes.Clone(data); b[len(b)-1] ^= 1; return b }(),
		"torn":                 data[:len(data)-100],
		"trailing":             append(bytes.Clone(data), 0),
		"empty":                nil,
		"old format":           append([]byte("C2FWIT01"), data[8:]...),
	} {
		if _, err := prover.ReadSolution(bytes.NewReader(bad), wires); !errors.Is(err, prover.ErrBadSpill) {
			t.Errorf("%s spill: %v", name, err)
		}
	}
	if _, err := prover.ReadSolution(bytes.NewReader(data), wires-1); !errors.Is(err, prover.ErrBadSpill) {
		t.Errorf("a spill longer than the circuit: %v", err)
	}
	if _, err := prover.ReadSolution(bytes.NewReader(data), wires+1); !errors.Is(err, prover.ErrBadSpill) {
		t.Errorf("a spill shorter than the circuit: %v", err)
	}
	// A read that fails on the way is the store's trouble, not a bad
	// spill: it is retried, not synthesized again.
	broken := io.MultiReader(bytes.NewReader(data[:len(data)/2]), iotest.ErrReader(errors.New("connection reset")))
	if _, err := prover.ReadSolution(broken, wires); err == nil || errors.Is(err, prover.ErrBadSpill) {
		t.Errorf("a failed read: %v", err)
	}
}
