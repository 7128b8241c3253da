package sdr

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"fmt"

	"github.com/c2flow/c2flow/filecoin/proofs"
)

// Labeling (storage-proofs-porep stacked/vanilla/create_label/single.rs and
// labeling_proof.rs). A label is
//
//	SHA-256(replica_id || layer (u32 BE) || node (u64 BE) || 20 zero bytes ||
//	        37 parent labels)
//
// with the top two bits of the last byte cleared. The 37 parent labels are
// the node's parents repeated cyclically: in layer 1 the 6 DRG parents
// (labels of the same layer), in later layers the 6 DRG parents (same layer)
// followed by the 8 expander parents (previous layer). Node 0 hashes no
// parents at all.

// TotalParents is the number of parent labels hashed into a label
// (TOTAL_PARENTS), as the registry (filecoin/proofs) defines it.
const TotalParents = proofs.TotalParents

// labelPrefixSize is the size of the fixed label-hash prefix.
const labelPrefixSize = 64

func putLabelPrefix(buf []byte, replicaID *[32]byte, layer uint32, node uint64) {
	copy(buf[:32], replicaID[:])
	binary.BigEndian.PutUint32(buf[32:], layer)
	binary.BigEndian.PutUint64(buf[36:], node)
	clear(buf[44:labelPrefixSize])
}

// LabelHash hashes exactly the given parent labels, in order, after the
// prefix for (replicaID, layer, node), and trims the result to 254 bits. It
// is LabelingProof::create_label: a vanilla labeling proof carries the
// TotalParents already-repeated parent labels, so its label is
// LabelHash(replicaID, proof.layer, proof.node, proof.parents).
func LabelHash(replicaID [32]byte, layer uint32, node uint64, parents [][32]byte) [32]byte {
	h := sha256.New()
	var prefix [labelPrefixSize]byte
	putLabelPrefix(prefix[:], &replicaID, layer, node)
	h.Write(prefix[:])
	for i := range parents {
		h.Write(parents[i][:])
	}
	var out [32]byte
	h.Sum(out[:0])
	trim254(&out)
	return out
}

// RepeatParents expands a node's parent labels (6 in layer 1, 6+8 in later
// layers) cyclically to the TotalParents labels that are hashed.
func RepeatParents(parents [][32]byte) [][32]byte {
	if len(parents) == 0 {
		return nil
	}
	out := make([][32]byte, TotalParents)
	for i := range out {
		out[i] = parents[i%len(parents)]
	}
	return out
}

// NodeLabel computes one node's label from its parents' labels, as
// create_label (layer 1) and create_label_exp (layer > 1) do: base holds the
// labels of the node's 6 DRG parents in the current layer, exp the labels of
// its 8 expander parents in the previous layer (must be empty when layer is
// 1, and have 8 entries otherwise). For node 0 no parent labels are hashed
// and base/exp are ignored. layer starts at 1.
func NodeLabel(replicaID [32]byte, layer uint32, node uint64, base, exp [][32]byte) ([32]byte, error) {
	var zero [32]byte
	if layer == 0 {
		return zero, fmt.Errorf("sdr node label: layer 0 (layers start at 1)")
	}
	if node == 0 {
		return LabelHash(replicaID, layer, 0, nil), nil
	}
	if len(base) != BaseDegree {
		return zero, fmt.Errorf("sdr node label: node %d layer %d: %d base parent labels, want %d", node, layer, len(base), BaseDegree)
	}
	want := ExpDegree
	if layer == 1 {
		want = 0
	}
	if len(exp) != want {
		return zero, fmt.Errorf("sdr node label: node %d layer %d: %d expander parent labels, want %d", node, layer, len(exp), want)
	}
	all := make([][32]byte, 0, Degree)
	all = append(all, base...)
	all = append(all, exp...)
	return LabelHash(replicaID, layer, node, RepeatParents(all)), nil
}

// labelLayer computes one full layer of labels into cur (nodes*32 bytes).
// prev is the previous layer's labels (nil for layer 1).
func (g *Graph) labelLayer(ctx context.Context, pc *ParentCache, replicaID *[32]byte, layer uint32, cur, prev []byte) error {
	var buf [labelPrefixSize + TotalParents*NodeSize]byte
	putLabelPrefix(buf[:], replicaID, layer, 0)
	nParents := BaseDegree
	if prev != nil {
		nParents = Degree
	}
	for node := range g.nodes {
		if node&0xffff == 0 {
			if err := ctx.Err(); err != nil {
				return fmt.Errorf("sdr label layer %d: %w", layer, err)
			}
		}
		binary.BigEndian.PutUint64(buf[36:], node)
		var sum [32]byte
		if node == 0 {
			sum = sha256.Sum256(buf[:labelPrefixSize])
		} else {
			ps := pc.Parents(node)
			// Fill the first nParents slots, then repeat them cyclically.
			for i := range nParents {
				src := cur
				if i >= BaseDegree {
					src = prev
				}
				p := uint64(ps[i]) * NodeSize
				copy(buf[labelPrefixSize+i*NodeSize:], src[p:p+NodeSize])
			}
			for i := nParents; i < TotalParents; i++ {
				off := labelPrefixSize + i*NodeSize
				copy(buf[off:off+NodeSize], buf[off-nParents*NodeSize:])
			}
			sum = sha256.Sum256(buf[:])
		}
		trim254(&sum)
		copy(cur[node*NodeSize:], sum[:])
	}
	return nil
}

// GenerateLabels labels a sector for layers 1..layers, calling emit once per
// layer, in order, with that layer's labels (Nodes()*32 bytes, node i at
// [32i, 32i+32)). The slice passed to emit is reused once emit returns;
// copy what must be kept. pc may be nil, in which case the parent cache is
// built in memory (56 bytes per node). Two layers are held in memory
// (64 bytes per node): meant for small sectors (2KiB, 8MiB, 512MiB).
func (g *Graph) GenerateLabels(ctx context.Context, replicaID [32]byte, layers int, pc *ParentCache, emit func(layer int, labels []byte) error) error {
	if layers < 1 {
		return fmt.Errorf("sdr generate labels: %d layers (need at least 1)", layers)
	}
	if pc == nil {
		var err error
		if pc, err = g.BuildParentCache(ctx, 0); err != nil {
			return fmt.Errorf("sdr generate labels: %w", err)
		}
	} else if pc.Nodes() != g.nodes {
		return fmt.Errorf("sdr generate labels: parent cache has %d nodes, graph %d", pc.Nodes(), g.nodes)
	}
	cur := make([]byte, g.nodes*NodeSize)
	var prev []byte
	for layer := 1; layer <= layers; layer++ {
		if err := g.labelLayer(ctx, pc, &replicaID, uint32(layer), cur, prev); err != nil {
			return err
		}
		if err := emit(layer, cur); err != nil {
			return fmt.Errorf("sdr generate labels: layer %d: %w", layer, err)
		}
		if prev == nil {
			prev = make([]byte, len(cur))
		}
		cur, prev = prev, cur
	}
	return nil
}

// Labels returns the labels of every layer (layers[i] is layer i+1,
// Nodes()*32 bytes each). See GenerateLabels.
func (g *Graph) Labels(ctx context.Context, replicaID [32]byte, layers int, pc *ParentCache) ([][]byte, error) {
	out := make([][]byte, 0, max(layers, 0))
	err := g.GenerateLabels(ctx, replicaID, layers, pc, func(_ int, labels []byte) error {
		out = append(out, append([]byte(nil), labels...))
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
