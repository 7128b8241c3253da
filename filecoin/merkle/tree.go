package merkle

import (
	"fmt"
	"runtime"
	"sync"
)

// Tree is a complete Merkle tree of one shape, held in memory. It is
// immutable once built and safe for concurrent use.
type Tree struct {
	hasher     Hasher
	shape      Shape
	leaves     uint64
	baseLeaves uint64
	// bases[b][l] is row l of base tree b (row 0: its leaves; last: its
	// root).
	bases [][][]Node
	// subRoots are the roots of the Top sub trees (shape with Top > 0).
	subRoots []Node
	root     Node
}

// Build builds a tree of the given shape over leaves, stored as given
// (they are copied). The leaves are split into shape.BaseTrees() equal
// consecutive base trees, each over a power (at least the first) of
// shape.Base leaves. Sub base-tree roots hash into a sub-tree root, and Top
// sub-tree roots into the root, as merkletree builds compound trees. Rows
// are hashed in parallel over GOMAXPROCS goroutines.
func Build(h Hasher, shape Shape, leaves []Node) (*Tree, error) {
	if err := shape.Validate(); err != nil {
		return nil, err
	}
	for _, a := range []int{shape.Base, shape.Sub, shape.Top} {
		if a == 0 {
			continue
		}
		if err := h.CheckArity(a); err != nil {
			return nil, fmt.Errorf("build %s tree of shape %s: %w", h.Name(), shape, err)
		}
	}
	nb := shape.BaseTrees()
	if len(leaves) == 0 || len(leaves)%nb != 0 {
		return nil, fmt.Errorf("build %s tree of shape %s over %d leaves: not %d equal base trees: %w", h.Name(), shape, len(leaves), nb, ErrShape)
	}
	per := len(leaves) / nb
	height := 0
	for n := per; n > 1; n /= shape.Base {
		if n%shape.Base != 0 {
			height = -1
			break
		}
		height++
	}
	if height < 1 {
		return nil, fmt.Errorf("build %s tree of shape %s: %d leaves per base tree is not a positive power of %d: %w", h.Name(), shape, per, shape.Base, ErrShape)
	}

	t := &Tree{hasher: h, shape: shape, leaves: uint64(len(leaves)), baseLeaves: uint64(per), bases: make([][][]Node, nb)}
	for b := range t.bases {
		row := append([]Node(nil), leaves[b*per:(b+1)*per]...)
		rows := [][]Node{row}
		for len(row) > 1 {
			next, err := hashRow(h, shape.Base, row)
			if err != nil {
				return nil, fmt.Errorf("build %s tree of shape %s: base tree %d row %d: %w", h.Name(), shape, b, len(rows), err)
			}
			rows = append(rows, next)
			row = next
		}
		t.bases[b] = rows
	}
	baseRoots := make([]Node, nb)
	for b := range t.bases {
		baseRoots[b] = t.bases[b][len(t.bases[b])-1][0]
	}
	var err error
	if t.subRoots, t.root, err = compose(h, shape, baseRoots); err != nil {
		return nil, fmt.Errorf("build %s tree of shape %s: root: %w", h.Name(), shape, err)
	}
	return t, nil
}

// compose hashes a tree's base-tree roots into its root, as merkletree
// builds compound trees: Sub base roots into a sub-tree root, Top of those
// (subRoots, Top > 0 only) into the root.
func compose(h Hasher, shape Shape, baseRoots []Node) (subRoots []Node, root Node, err error) {
	switch {
	case shape.Sub == 0:
		return nil, baseRoots[0], nil
	case shape.Top == 0:
		root, err = h.Node(baseRoots)
		return nil, root, err
	}
	if subRoots, err = hashRow(h, shape.Sub, baseRoots); err != nil {
		return nil, Node{}, err
	}
	root, err = h.Node(subRoots)
	return subRoots, root, err
}

// upper completes p, whose base path ends at the root of base tree b,
// above it: its Kind, and the Sub and Top elements from the roots of b's
// group of Sub base trees (groupRoots, from its first) and subRoots.
func upper(p *Proof, shape Shape, b uint64, groupRoots func(first, n uint64) ([]Node, error), subRoots []Node) (*Proof, error) {
	if shape.Sub == 0 {
		p.Kind = KindSingle
		return p, nil
	}
	sub := uint64(shape.Sub)
	group := b / sub
	roots, err := groupRoots(group*sub, sub)
	if err != nil {
		return nil, err
	}
	p.Sub = []PathElement{siblings(roots, b%sub)}
	if shape.Top == 0 {
		p.Kind = KindSub
		return p, nil
	}
	p.Kind = KindTop
	p.Top = []PathElement{siblings(subRoots, group)}
	return p, nil
}

// hashRow hashes each group of arity consecutive nodes of row into one
// parent, in parallel when the row is large.
func hashRow(h Hasher, arity int, row []Node) ([]Node, error) {
	out := make([]Node, len(row)/arity)
	workers := runtime.GOMAXPROCS(0)
	if len(out) < 64 || workers < 2 {
		workers = 1
	}
	workers = min(workers, len(out))
	chunk := (len(out) + workers - 1) / workers
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		lo, hi := w*chunk, min((w+1)*chunk, len(out))
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := lo; i < hi; i++ {
				n, err := h.Node(row[i*arity : (i+1)*arity])
				if err != nil {
					errs[w] = fmt.Errorf("node %d: %w", i, err)
					return
				}
				out[i] = n
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Root returns the tree's root (comm_d, comm_r_last or comm_c).
func (t *Tree) Root() Node { return t.root }

// Leaves returns the number of leaves.
func (t *Tree) Leaves() uint64 { return t.leaves }

// Shape returns the tree's shape.
func (t *Tree) Shape() Shape { return t.shape }

// Leaf returns leaf i.
func (t *Tree) Leaf(i uint64) (Node, error) {
	if i >= t.leaves {
		return Node{}, fmt.Errorf("leaf %d of a %d-leaf tree: out of range", i, t.leaves)
	}
	return t.bases[i/t.baseLeaves][0][i%t.baseLeaves], nil
}

// Prove returns the inclusion proof of leaf i: its Kind follows the shape
// (Single without a sub layer, Sub with one, Top with a top layer), as
// storage-proofs-core's MerkleProof::try_from_proof produces.
func (t *Tree) Prove(i uint64) (*Proof, error) {
	if i >= t.leaves {
		return nil, fmt.Errorf("prove leaf %d of a %d-leaf tree: out of range", i, t.leaves)
	}
	b, j := i/t.baseLeaves, i%t.baseLeaves
	rows := t.bases[b]
	p := &Proof{Root: t.root, Leaf: rows[0][j]}
	arity := uint64(t.shape.Base)
	for _, row := range rows[:len(rows)-1] {
		idx := j % arity
		p.Base = append(p.Base, siblings(row[j-idx:j-idx+arity], idx))
		j /= arity
	}
	return upper(p, t.shape, b, func(first, n uint64) ([]Node, error) {
		roots := make([]Node, n)
		for k := range roots {
			r := t.bases[first+uint64(k)]
			roots[k] = r[len(r)-1][0]
		}
		return roots, nil
	}, t.subRoots)
}

// siblings returns the path element for position idx among group.
func siblings(group []Node, idx uint64) PathElement {
	e := PathElement{Hashes: make([]Node, 0, len(group)-1), Index: idx}
	for k := range group {
		if uint64(k) != idx {
			e.Hashes = append(e.Hashes, group[k])
		}
	}
	return e
}
