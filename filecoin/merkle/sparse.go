package merkle

import (
	"fmt"
	"slices"
)

// Sparse is a Merkle tree of one shape whose leaves are zero but for a
// few: a production-size replica's tree R (2^30 leaves at 32GiB) for
// PoSt tests and benchmarks, which open tree R alone. Only the nodes
// above a set leaf are hashed; every all-zero subtree of a height has one
// root, hashed once. It builds the same root and proofs as Build over
// the same leaves (TestSparseMatchesBuild).
type Sparse struct {
	hasher     Hasher
	shape      Shape
	leaves     uint64
	baseLeaves uint64
	height     int // of each base tree
	set        map[uint64]Node
	keys       []uint64 // set's, sorted
	zero       []Node   // zero[l]: the root of an all-zero subtree of height l
	memo       map[[2]uint64]Node
	subRoots   []Node
	root       Node
}

// NewSparse builds a sparse tree of shape over leaves leaves, all zero
// but set's (leaf index to value).
func NewSparse(h Hasher, shape Shape, leaves uint64, set map[uint64]Node) (*Sparse, error) {
	if err := shape.Validate(); err != nil {
		return nil, err
	}
	nb := uint64(shape.BaseTrees())
	if leaves == 0 || leaves%nb != 0 {
		return nil, fmt.Errorf("sparse %s tree of shape %s over %d leaves: not %d equal base trees: %w", h.Name(), shape, leaves, nb, ErrShape)
	}
	t := &Sparse{hasher: h, shape: shape, leaves: leaves, baseLeaves: leaves / nb, set: set, memo: map[[2]uint64]Node{}}
	for n := t.baseLeaves; n > 1; n /= uint64(shape.Base) {
		if n%uint64(shape.Base) != 0 {
			return nil, fmt.Errorf("sparse %s tree of shape %s: %d leaves per base tree is not a power of %d: %w", h.Name(), shape, t.baseLeaves, shape.Base, ErrShape)
		}
		t.height++
	}
	if t.height < 1 {
		return nil, fmt.Errorf("sparse %s tree of shape %s: %d leaves per base tree: %w", h.Name(), shape, t.baseLeaves, ErrShape)
	}
	for i := range set {
		if i >= leaves {
			return nil, fmt.Errorf("sparse tree: leaf %d of %d: out of range", i, leaves)
		}
		t.keys = append(t.keys, i)
	}
	slices.Sort(t.keys)
	t.zero = []Node{{}}
	for l := 1; l <= t.height; l++ {
		n, err := h.Node(slices.Repeat([]Node{t.zero[l-1]}, shape.Base))
		if err != nil {
			return nil, fmt.Errorf("sparse %s tree: zero subtree of height %d: %w", h.Name(), l, err)
		}
		t.zero = append(t.zero, n)
	}
	baseRoots, err := t.baseRoots(0, nb)
	if err != nil {
		return nil, err
	}
	if t.subRoots, t.root, err = compose(h, shape, baseRoots); err != nil {
		return nil, fmt.Errorf("sparse %s tree of shape %s: root: %w", h.Name(), shape, err)
	}
	return t, nil
}

// baseRoots are the roots of n base trees from the first.
func (t *Sparse) baseRoots(first, n uint64) ([]Node, error) {
	out := make([]Node, 0, n)
	for b := first; b < first+n; b++ {
		n, err := t.node(t.height, b)
		if err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	return out, nil
}

// node is the node at level l (0: the leaves) and index g across the
// whole tree's row at that level (base trees are consecutive).
func (t *Sparse) node(l int, g uint64) (Node, error) {
	span := uint64(1)
	for range l {
		span *= uint64(t.shape.Base)
	}
	lo := g * span
	if k, _ := slices.BinarySearch(t.keys, lo); k == len(t.keys) || t.keys[k] >= lo+span {
		return t.zero[l], nil // no set leaf below
	}
	if l == 0 {
		return t.set[g], nil
	}
	if n, ok := t.memo[[2]uint64{uint64(l), g}]; ok {
		return n, nil
	}
	children := make([]Node, t.shape.Base)
	for k := range children {
		c, err := t.node(l-1, g*uint64(t.shape.Base)+uint64(k))
		if err != nil {
			return Node{}, err
		}
		children[k] = c
	}
	n, err := t.hasher.Node(children)
	if err != nil {
		return Node{}, fmt.Errorf("sparse %s tree: node %d of level %d: %w", t.hasher.Name(), g, l, err)
	}
	t.memo[[2]uint64{uint64(l), g}] = n
	return n, nil
}

// Root returns the tree's root.
func (t *Sparse) Root() Node { return t.root }

// Leaves returns the number of leaves.
func (t *Sparse) Leaves() uint64 { return t.leaves }

// Prove returns the inclusion proof of leaf i, as Tree.Prove does. It is
// not safe for concurrent use (it memoizes the nodes it hashes).
func (t *Sparse) Prove(i uint64) (*Proof, error) {
	if i >= t.leaves {
		return nil, fmt.Errorf("prove leaf %d of a %d-leaf tree: out of range", i, t.leaves)
	}
	leaf, err := t.node(0, i)
	if err != nil {
		return nil, err
	}
	p := &Proof{Root: t.root, Leaf: leaf}
	arity := uint64(t.shape.Base)
	g := i
	for l := range t.height {
		first := g - g%arity
		group := make([]Node, arity)
		for k := range group {
			if group[k], err = t.node(l, first+uint64(k)); err != nil {
				return nil, err
			}
		}
		p.Base = append(p.Base, siblings(group, g%arity))
		g /= arity
	}
	return upper(p, t.shape, i/t.baseLeaves, t.baseRoots, t.subRoots)
}
