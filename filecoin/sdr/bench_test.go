package sdr

import (
	"context"
	"io"
	"testing"

	"github.com/c2flow/c2flow/filecoin/proofs"
)

func BenchmarkParentCache8MiB(b *testing.B) {
	g := proofGraph(b, proofs.StackedDrg8MiBV1_1)
	b.SetBytes(int64(g.ParentCacheSize()))
	for b.Loop() {
		if err := g.WriteParentCache(context.Background(), io.Discard, 0); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkLabels8MiB(b *testing.B) {
	g := proofGraph(b, proofs.StackedDrg8MiBV1_1)
	pc, err := g.BuildParentCache(context.Background(), 0)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(2 * g.SectorSize()))
	for b.Loop() {
		err := g.GenerateLabels(context.Background(), [32]byte{1}, 2, pc, func(int, []byte) error { return nil })
		if err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParentsSingleNode32GiB(b *testing.B) {
	g := proofGraph(b, proofs.StackedDrg32GiBV1_1)
	var p [Degree]uint32
	n := uint64(0)
	for b.Loop() {
		n = (n + 7919) % g.Nodes()
		if err := g.Parents(n, p[:]); err != nil {
			b.Fatal(err)
		}
	}
}
