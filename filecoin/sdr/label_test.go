package sdr

import (
	"bytes"
	"context"
	"encoding/binary"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/c2flow/c2flow/filecoin/proofs"
)

// frFromU64sLE is the little-endian representation (Fr::to_repr) of the
// field element with the given 64-bit limbs (blstrs Scalar::from_u64s_le).
func frFromU64sLE(l [4]uint64) [32]byte {
	var b [32]byte
	for i, x := range l {
		binary.LittleEndian.PutUint64(b[8*i:], x)
	}
	return b
}

// TestLabelsUpstream checks the last label of the last of 11 layers against
// storage-proofs-porep/tests/stacked_vanilla.rs
// test_stacked_porep_generate_labels (same values in
// src/stacked/vanilla/create_label/multi.rs test_create_labels) at
// rust-fil-proofs 87348a749d80447d00c595af834a8ed73c09e4d9: replica_id
// [9; 32], sectors of 2048 and 4096 bytes, porep_id [0; 32] with API 1.0.0
// and [123; 32] with API 1.1.0 and 1.2.0.
func TestLabelsUpstream(t *testing.T) {
	var legacy, current proofs.PoRepID
	for i := range current {
		current[i] = 123
	}
	var replicaID [32]byte
	for i := range replicaID {
		replicaID[i] = 9
	}
	want2K_V1 := frFromU64sLE([4]uint64{0xd3faa96b9a0fba04, 0xea81a283d106485e, 0xe3d51b9afa5ac2b3, 0x0462f4f4f1a68d37})
	want4K_V1 := frFromU64sLE([4]uint64{0x7e191e52c4a8da86, 0x5ae8a1c9e6fac148, 0xce239f3b88a894b8, 0x234c00d1dc1d53be})
	want2K := frFromU64sLE([4]uint64{0xabb3f38bb70defcf, 0x777a2e4d7769119f, 0x3448959d495490bc, 0x06021188c7a71cb5})
	want4K := frFromU64sLE([4]uint64{0x22ab81cf68c4676d, 0x7a77a82fc7c9c189, 0xc6c03d32c1e42d23, 0x0f777c18cc2c55bd})
	for _, c := range []struct {
		sectorSize uint64
		id         proofs.PoRepID
		v          proofs.APIVersion
		want       [32]byte
	}{
		{2048, legacy, proofs.APIVersion1_0_0, want2K_V1},
		{4096, legacy, proofs.APIVersion1_0_0, want4K_V1},
		{2048, current, proofs.APIVersion1_1_0, want2K},
		{4096, current, proofs.APIVersion1_1_0, want4K},
		{2048, current, proofs.APIVersion1_2_0, want2K},
		{4096, current, proofs.APIVersion1_2_0, want4K},
	} {
		g, err := NewGraphForSectorSize(c.sectorSize, c.id, c.v)
		if err != nil {
			t.Fatal(err)
		}
		layers, err := g.Labels(context.Background(), replicaID, 11, nil)
		if err != nil {
			t.Fatal(err)
		}
		last := layers[10][(g.Nodes()-1)*NodeSize:]
		if !bytes.Equal(last, c.want[:]) {
			t.Errorf("%d bytes, api %v: last label %x, want %x", c.sectorSize, c.v, last, c.want)
		}
	}
}

// TestNodeLabel checks the per-node label functions (used to verify
// labeling proofs) against whole-sector labeling.
func TestNodeLabel(t *testing.T) {
	g, err := NewGraph(256, proofs.NewPoRepID(5, 0), proofs.APIVersion1_1_0)
	if err != nil {
		t.Fatal(err)
	}
	var replicaID [32]byte
	replicaID[0] = 42
	layers, err := g.Labels(context.Background(), replicaID, 3, nil)
	if err != nil {
		t.Fatal(err)
	}
	label := func(layer int, node uint32) [32]byte {
		return [32]byte(layers[layer-1][int(node)*NodeSize:])
	}
	for layer := 1; layer <= 3; layer++ {
		for _, node := range []uint64{0, 1, 2, 3, 100, 255} {
			var p [Degree]uint32
			if err := g.Parents(node, p[:]); err != nil {
				t.Fatal(err)
			}
			var base, exp [][32]byte
			for _, x := range p[:BaseDegree] {
				base = append(base, label(layer, x))
			}
			if layer > 1 {
				for _, x := range p[BaseDegree:] {
					exp = append(exp, label(layer-1, x))
				}
			}
			got, err := NodeLabel(replicaID, uint32(layer), node, base, exp)
			if err != nil {
				t.Fatal(err)
			}
			if got != label(layer, uint32(node)) {
				t.Errorf("layer %d node %d: NodeLabel %x, sector label %x", layer, node, got, label(layer, uint32(node)))
			}
			if node > 0 {
				// A labeling proof carries the repeated parents.
				all := append(append([][32]byte{}, base...), exp...)
				rep := RepeatParents(all)
				if len(rep) != TotalParents {
					t.Fatalf("RepeatParents: %d labels", len(rep))
				}
				if LabelHash(replicaID, uint32(layer), node, rep) != got {
					t.Errorf("layer %d node %d: LabelHash of repeated parents differs", layer, node)
				}
			}
			if got[31]&0xc0 != 0 {
				t.Errorf("layer %d node %d: label not trimmed to 254 bits", layer, node)
			}
		}
	}
	if _, err := NodeLabel(replicaID, 1, 5, make([][32]byte, 6), make([][32]byte, 8)); err == nil {
		t.Error("NodeLabel(layer 1 with expander parents): no error")
	}
	if _, err := NodeLabel(replicaID, 2, 5, make([][32]byte, 6), nil); err == nil {
		t.Error("NodeLabel(layer 2 without expander parents): no error")
	}
	if _, err := NodeLabel(replicaID, 0, 5, nil, nil); err == nil {
		t.Error("NodeLabel(layer 0): no error")
	}
}

// TestLabels8MiB times labeling an 8MiB sector (2^18 nodes, 2 layers), as
// a test sealer does, and checks it against per-node labels.
func TestLabels8MiB(t *testing.T) {
	g := proofGraph(t, proofs.StackedDrg8MiBV1_1)
	var replicaID [32]byte
	replicaID[3] = 7
	start := time.Now()
	pc, err := g.BuildParentCache(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	cacheTime := time.Since(start)
	layers, err := g.Labels(context.Background(), replicaID, 2, pc)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("8MiB: parent cache %v, 2 layers of labels %v", cacheTime, time.Since(start)-cacheTime)
	rng := rand.New(rand.NewPCG(1, 2))
	for range 20 {
		node := rng.Uint64N(g.Nodes()-1) + 1
		p := pc.Parents(node)
		var base, exp [][32]byte
		for _, x := range p[:BaseDegree] {
			base = append(base, [32]byte(layers[1][int(x)*NodeSize:]))
		}
		for _, x := range p[BaseDegree:] {
			exp = append(exp, [32]byte(layers[0][int(x)*NodeSize:]))
		}
		got, err := NodeLabel(replicaID, 2, node, base, exp)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got[:], layers[1][node*NodeSize:(node+1)*NodeSize]) {
			t.Fatalf("node %d: per-node label differs", node)
		}
	}
}

func TestGenerateLabelsErrors(t *testing.T) {
	g, _ := NewGraph(64, proofs.PoRepID{}, proofs.APIVersion1_1_0)
	other, _ := NewGraph(128, proofs.PoRepID{}, proofs.APIVersion1_1_0)
	pc, _ := other.BuildParentCache(context.Background(), 1)
	noop := func(int, []byte) error { return nil }
	if err := g.GenerateLabels(context.Background(), [32]byte{}, 0, nil, noop); err == nil {
		t.Error("0 layers: no error")
	}
	if err := g.GenerateLabels(context.Background(), [32]byte{}, 2, pc, noop); err == nil {
		t.Error("mismatched parent cache: no error")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := g.GenerateLabels(ctx, [32]byte{}, 2, nil, noop); err == nil {
		t.Error("cancelled context: no error")
	}
}
