package sdr

import (
	"golang.org/x/crypto/blake2b"

	"testing"

	"github.com/c2flow/c2flow/filecoin/proofs"
)

func porepIDByte(b byte) proofs.PoRepID {
	var id proofs.PoRepID
	id[0] = b
	return id
}

// TestBucketGraph ports drgraph.rs graph_bucket: parents of nodes 0 and 1
// are all zero, parents are deterministic, never self-referencing, and the
// immediate predecessor is the last DRG parent in API 1.0.0 and the first
// one from 1.1.0 on.
func TestBucketGraph(t *testing.T) {
	for _, c := range []struct {
		id proofs.PoRepID
		v  proofs.APIVersion
	}{{porepIDByte(0), proofs.APIVersion1_0_0}, {porepIDByte(5), proofs.APIVersion1_1_0}, {porepIDByte(5), proofs.APIVersion1_2_0}} {
		for _, size := range []uint64{4, 16, 256, 2048} {
			g, err := NewGraph(size, c.id, c.v)
			if err != nil {
				t.Fatal(err)
			}
			for n := range uint64(2) {
				p := []uint32{9, 9, 9, 9, 9, 9}
				if err := g.BaseParents(n, p); err != nil {
					t.Fatal(err)
				}
				if !equalU32(p, make([]uint32, BaseDegree)) {
					t.Errorf("size %d node %d: parents %v, want zeros", size, n, p)
				}
			}
			for n := uint64(2); n < size; n++ {
				var p1, p2 [BaseDegree]uint32
				_ = g.BaseParents(n, p1[:])
				_ = g.BaseParents(n, p2[:])
				if p1 != p2 {
					t.Fatalf("node %d: parents not deterministic", n)
				}
				for _, p := range p1 {
					if uint64(p) >= n {
						t.Fatalf("v%v size %d node %d: parent %d not before the node (%v)", c.v, size, n, p, p1)
					}
				}
				pred := p1[0]
				if c.v == proofs.APIVersion1_0_0 {
					pred = p1[BaseDegree-1]
				}
				if uint64(pred) != n-1 {
					t.Fatalf("v%v node %d: predecessor slot holds %d (%v)", c.v, n, pred, p1)
				}
			}
		}
	}
}

// TestV1_0ParentOrder checks that API 1.0.0 and 1.1.0 sample the same DRG
// parents for the same porep_id, in a rotated order.
func TestV1_0ParentOrder(t *testing.T) {
	g0, _ := NewGraph(1<<10, porepIDByte(3), proofs.APIVersion1_0_0)
	g1, _ := NewGraph(1<<10, porepIDByte(3), proofs.APIVersion1_1_0)
	for n := uint64(2); n < 1<<10; n++ {
		var a, b [BaseDegree]uint32
		_ = g0.BaseParents(n, a[:])
		_ = g1.BaseParents(n, b[:])
		want := [BaseDegree]uint32{b[1], b[2], b[3], b[4], b[5], b[0]}
		if a != want {
			t.Fatalf("node %d: v1.0 parents %v, v1.1 parents %v", n, a, b)
		}
	}
}

// TestExpanderPathology ports graph.rs test_graph_distribution_pathology:
// legacy (1.0.0) graphs of 32GiB and 64GiB never pick an expander parent in
// the upper half of the sector within the first 1000 nodes; later versions
// do.
func TestExpanderPathology(t *testing.T) {
	const n32, n64 = 1 << 30, 1 << 31
	for _, c := range []struct {
		id    proofs.PoRepID
		nodes uint64
		v     proofs.APIVersion
	}{
		{porepIDByte(3), n32, proofs.APIVersion1_0_0}, {porepIDByte(4), n64, proofs.APIVersion1_0_0},
		{porepIDByte(8), n32, proofs.APIVersion1_1_0}, {porepIDByte(9), n64, proofs.APIVersion1_1_0},
		{porepIDByte(8), n32, proofs.APIVersion1_2_0}, {porepIDByte(9), n64, proofs.APIVersion1_2_0},
	} {
		g, err := NewGraph(c.nodes, c.id, c.v)
		if err != nil {
			t.Fatal(err)
		}
		pathological := c.v == proofs.APIVersion1_0_0
		found := false
		for i := uint64(0); i < 1000 && !found; i++ {
			var p [ExpDegree]uint32
			_ = g.ExpParents(i, p[:])
			for _, x := range p {
				if uint64(x) >= c.nodes/2 {
					found = true
				}
			}
		}
		if found == pathological {
			t.Errorf("porep id %d, %d nodes, api %v: large parent found = %v", c.id[0], c.nodes, c.v, found)
		}
	}
}

// TestHighParentBits ports graph.rs test_high_parent_bits: a 64GiB graph
// (API 1.2.0) has an expander parent >= 2^29 among its first 3 nodes.
func TestHighParentBits(t *testing.T) {
	g, _ := NewGraph(1<<31, proofs.NewPoRepID(5, 0), proofs.APIVersion1_2_0)
	for v := range uint64(3) {
		var p [ExpDegree]uint32
		_ = g.ExpParents(v, p[:])
		for _, x := range p {
			if x >= 1<<29 {
				return
			}
		}
	}
	t.Error("no expander parent >= 2^29 among the first 3 nodes")
}

// TestExpParentHistogram ports graph.rs test_exp_parent_histogram: for a
// 64GiB graph, expander parents of 10000 evenly spread nodes fall evenly
// (within 40%) into 32 bins.
func TestExpParentHistogram(t *testing.T) {
	const (
		nNodes   = 1 << 31
		nSamples = 10000
		nBins    = 32
		perBin   = nSamples * ExpDegree / nBins
	)
	maxAllowed := int(1.4*float32(perBin)) - 1
	minAllowed := int(0.6*float32(perBin)) + 1
	g, _ := NewGraph(nNodes, proofs.NewPoRepID(5, 0), proofs.APIVersion1_2_0)
	var hist [nBins]int
	for s := range uint64(nSamples) {
		var p [ExpDegree]uint32
		_ = g.ExpParents(s*nNodes/nSamples, p[:])
		for _, x := range p {
			hist[x/(nNodes/nBins)]++
		}
	}
	for i, h := range hist {
		if h < minAllowed || h > maxAllowed {
			t.Errorf("bin %d: %d parents, want [%d, %d]", i, h, minAllowed, maxAllowed)
		}
	}
}

func TestGraphErrors(t *testing.T) {
	if _, err := NewGraph(0, proofs.PoRepID{}, proofs.APIVersion1_1_0); err == nil {
		t.Error("NewGraph(0 nodes): no error")
	}
	if _, err := NewGraph(1<<32, proofs.PoRepID{}, proofs.APIVersion1_1_0); err == nil {
		t.Error("NewGraph(2^32 nodes): no error")
	}
	if _, err := NewGraph(64, proofs.PoRepID{}, proofs.APIVersion(9)); err == nil {
		t.Error("NewGraph(bad version): no error")
	}
	if _, err := NewGraphForSectorSize(100, proofs.PoRepID{}, proofs.APIVersion1_1_0); err == nil {
		t.Error("NewGraphForSectorSize(100): no error")
	}
	g, _ := NewGraph(64, proofs.PoRepID{}, proofs.APIVersion1_1_0)
	if err := g.Parents(64, make([]uint32, Degree)); err == nil {
		t.Error("Parents(node out of range): no error")
	}
	if err := g.Parents(3, make([]uint32, Degree-1)); err == nil {
		t.Error("Parents(short slice): no error")
	}
	if err := g.BaseParents(3, make([]uint32, BaseDegree-1)); err == nil {
		t.Error("BaseParents(short slice): no error")
	}
	if err := g.ExpParents(64, make([]uint32, ExpDegree)); err == nil {
		t.Error("ExpParents(node out of range): no error")
	}
}

// TestGraphIdentifier checks the identifier against graph.rs / params.rs
// test_public_params_identifier (32GiB: size 1073741824).
func TestGraphIdentifier(t *testing.T) {
	g, _ := NewGraph(1<<30, proofs.PoRepID{1}, proofs.APIVersion1_1_0)
	// params.rs test_public_params_identifier embeds this graph identifier.
	const want = "stacked_graph::StackedGraph{expansion_degree: 8 base_graph: drgraph::BucketGraph{size: 1073741824; degree: 6; hasher: poseidon_hasher} }"
	if g.Identifier() != want {
		t.Errorf("identifier %q, want %q", g.Identifier(), want)
	}
}

// TestFeistel ports feistel.rs test_feistel_power_of_4 and
// test_feistel_on_arbitrary_set (keys [1, 2, 3, 4]) and checks the
// tabulated round function against the direct one.
func TestFeistel(t *testing.T) {
	keys := [4]uint64{1, 2, 3, 4}
	encodeDecode := func(n uint64) (ok bool) {
		p := feistelPrecompute(n)
		ok = true
		for i := range n {
			e := feistelEncode(i, &keys, p)
			if feistelDecode(e, &keys, p) != i || e >= n {
				ok = false
			}
		}
		return ok
	}
	for n := uint64(4); n <= 256; n *= 4 {
		if !encodeDecode(n) {
			t.Errorf("n = %d: encode/decode is not a permutation", n)
		}
	}
	badNs := []uint64{5, 6, 8, 12, 17}
	for _, n := range badNs {
		if encodeDecode(n) {
			t.Errorf("n = %d: expected encode alone to leave the range", n)
		}
		p := feistelPrecompute(n)
		for i := range n {
			e := feistelPermute(n, i, &keys, p)
			if e >= n || feistelInvertPermute(n, e, &keys, p) != i {
				t.Errorf("n = %d: permute(%d) = %d does not invert", n, i, e)
			}
		}
	}
	// graph.rs test_shuffle: n = 2^10 nodes, degree 8, is a permutation.
	n := uint64(1<<10) * ExpDegree
	p := feistelPrecompute(n)
	seen := make([]bool, n)
	tab := newFeistelTable(&keys, p)
	for i := range n {
		e := feistelPermute(n, i, &keys, p)
		if seen[e] {
			t.Fatalf("shuffle: %d hit twice", e)
		}
		seen[e] = true
		if te := tab.permute(n, i); te != e {
			t.Fatalf("table permute(%d) = %d, direct %d", i, te, e)
		}
	}
}

func TestFeistelRoundMatchesBlake2b(t *testing.T) {
	for _, c := range [][3]uint64{{0, 0, 1<<64 - 1}, {1, 2, 0xffff}, {0x0123456789abcdef, 0xfedcba9876543210, 1<<64 - 1}} {
		var data [16]byte
		for i := range 8 {
			data[i] = byte(c[0] >> (56 - 8*i))
			data[8+i] = byte(c[1] >> (56 - 8*i))
		}
		d := blake2b.Sum512(data[:])
		var want uint64
		for i := range 8 {
			want = want<<8 | uint64(d[i])
		}
		want &= c[2]
		if got := feistelRound(c[0], c[1], c[2]); got != want {
			t.Errorf("feistelRound(%#x, %#x) = %#x, want %#x", c[0], c[1], got, want)
		}
	}
}
