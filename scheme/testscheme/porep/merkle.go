package porep

import (
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
)

// Tree is a binary Merkle tree over field elements with Poseidon2 nodes.
type Tree interface {
	Root() fr.Element
	Leaf(i uint64) fr.Element
	// Open returns the siblings from the leaf level up to the root's children.
	Open(i uint64) []fr.Element
}

// DenseTree keeps every level in memory: sealing of small profiles.
type DenseTree struct {
	levels [][]fr.Element
}

// NewDenseTree builds the tree over leaves (a power of two in length).
func NewDenseTree(h *Hasher, leaves []fr.Element) *DenseTree {
	t := &DenseTree{levels: [][]fr.Element{leaves}}
	for cur := leaves; len(cur) > 1; {
		next := make([]fr.Element, len(cur)/2)
		for i := range next {
			next[i] = h.Compress(cur[2*i], cur[2*i+1])
		}
		t.levels = append(t.levels, next)
		cur = next
	}
	return t
}

func (t *DenseTree) Root() fr.Element         { return t.levels[len(t.levels)-1][0] }
func (t *DenseTree) Leaf(i uint64) fr.Element { return t.levels[0][i] }

func (t *DenseTree) Open(i uint64) []fr.Element {
	path := make([]fr.Element, len(t.levels)-1)
	for k := range path {
		path[k] = t.levels[k][i^1]
		i >>= 1
	}
	return path
}

// SparseTree is a tree of 2^depth leaves of which only a few are
// materialized; every subtree without a materialized leaf has a root drawn
// from the seed. Openings of materialized leaves are genuine openings of
// Root.
type SparseTree struct {
	h      *Hasher
	depth  int
	seed   [32]byte
	tag    string
	leaves map[uint64]fr.Element
	nodes  map[[2]uint64]fr.Element // (level, index) -> value, memoized
	touch  map[[2]uint64]bool       // subtrees holding a materialized leaf
}

// NewSparseTree returns a tree whose materialized leaves are given; tag
// separates the derived roots of different trees sharing a seed.
func NewSparseTree(h *Hasher, depth int, seed [32]byte, tag string, leaves map[uint64]fr.Element) *SparseTree {
	t := &SparseTree{h: h, depth: depth, seed: seed, tag: tag, leaves: leaves,
		nodes: map[[2]uint64]fr.Element{}, touch: map[[2]uint64]bool{}}
	for i := range leaves {
		for l := 0; l <= depth; l++ {
			t.touch[[2]uint64{uint64(l), i >> l}] = true
		}
	}
	return t
}

func (t *SparseTree) node(level int, idx uint64) fr.Element {
	key := [2]uint64{uint64(level), idx}
	if v, ok := t.nodes[key]; ok {
		return v
	}
	var v fr.Element
	switch {
	case !t.touch[key]:
		v = DeriveElement(t.seed, "c2flow/sparse/"+t.tag, uint64(level), idx)
	case level == 0:
		v = t.leaves[idx]
	default:
		v = t.h.Compress(t.node(level-1, 2*idx), t.node(level-1, 2*idx+1))
	}
	t.nodes[key] = v
	return v
}

func (t *SparseTree) Root() fr.Element         { return t.node(t.depth, 0) }
func (t *SparseTree) Leaf(i uint64) fr.Element { return t.node(0, i) }

func (t *SparseTree) Open(i uint64) []fr.Element {
	path := make([]fr.Element, t.depth)
	for k := range path {
		path[k] = t.node(k, i^1)
		i >>= 1
	}
	return path
}

// RootFromPath recomputes the root from a leaf, its index and its path.
func (h *Hasher) RootFromPath(leaf fr.Element, index uint64, path []fr.Element) fr.Element {
	cur := leaf
	for _, sib := range path {
		if index&1 == 0 {
			cur = h.Compress(cur, sib)
		} else {
			cur = h.Compress(sib, cur)
		}
		index >>= 1
	}
	return cur
}
