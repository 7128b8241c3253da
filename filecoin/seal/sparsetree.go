package seal

import (
	"fmt"
	"runtime"
	"slices"
	"sync"

	"github.com/c2flow/c2flow/filecoin/merkle"
)

// SparseTree is a complete Merkle tree of a given shape over n leaves in
// which every leaf not explicitly set holds one filler value. Only the
// nodes above set leaves are stored; every other node of a base-tree level
// equals the filler subtree's hash at that level. Its root and proofs are
// those merkle.Build would give over the full leaf list, at a cost
// proportional to the number of set leaves times the height. SealSparse
// builds its trees so; with no leaf set and a zero filler it is the tree D
// of an all-zero sector, which the update package's zero update opens.
type SparseTree struct {
	h          merkle.Hasher
	shape      merkle.Shape
	leaves     uint64
	baseLeaves uint64
	height     int // levels of a base tree above its leaves
	// filler[l] is an untouched node at base-tree level l (0: a leaf).
	filler []merkle.Node
	// levels[l] maps a touched node's index at level l (leaf index /
	// Base^l; base tree b's nodes at level l are numbered on from b *
	// baseLeaves/Base^l) to its value. levels[height] holds the roots of
	// the base trees with a touched leaf.
	levels    []map[uint64]merkle.Node
	baseRoots []merkle.Node
	subRoots  []merkle.Node
	root      merkle.Node
}

// BuildSparse builds the tree; set maps leaf indices (< leaves) to their
// values, every other leaf is filler. workers goroutines hash each level.
func BuildSparse(h merkle.Hasher, shape merkle.Shape, leaves uint64, filler merkle.Node, set map[uint64]merkle.Node, workers int) (*SparseTree, error) {
	if err := shape.Validate(); err != nil {
		return nil, err
	}
	nb := uint64(shape.BaseTrees())
	if leaves == 0 || leaves%nb != 0 {
		return nil, fmt.Errorf("sparse %s tree of shape %s over %d leaves: not %d equal base trees: %w", h.Name(), shape, leaves, nb, merkle.ErrShape)
	}
	t := &SparseTree{h: h, shape: shape, leaves: leaves, baseLeaves: leaves / nb}
	arity := uint64(shape.Base)
	for n := t.baseLeaves; n > 1; n /= arity {
		if n%arity != 0 {
			return nil, fmt.Errorf("sparse %s tree of shape %s: %d leaves per base tree is not a power of %d: %w", h.Name(), shape, t.baseLeaves, arity, merkle.ErrShape)
		}
		t.height++
	}
	if t.height == 0 {
		return nil, fmt.Errorf("sparse %s tree of shape %s: one leaf per base tree: %w", h.Name(), shape, merkle.ErrShape)
	}
	t.filler = make([]merkle.Node, t.height+1)
	t.filler[0] = filler
	group := make([]merkle.Node, max(shape.Base, shape.Sub, shape.Top))
	for l := 1; l <= t.height; l++ {
		for i := range shape.Base {
			group[i] = t.filler[l-1]
		}
		v, err := h.Node(group[:shape.Base])
		if err != nil {
			return nil, fmt.Errorf("sparse %s tree: filler at level %d: %w", h.Name(), l, err)
		}
		t.filler[l] = v
	}
	t.levels = make([]map[uint64]merkle.Node, t.height+1)
	t.levels[0] = make(map[uint64]merkle.Node, len(set))
	for i, v := range set {
		if i >= leaves {
			return nil, fmt.Errorf("sparse %s tree: leaf %d of %d", h.Name(), i, leaves)
		}
		t.levels[0][i] = v
	}
	for l := 1; l <= t.height; l++ {
		var err error
		if t.levels[l], err = t.hashLevel(l, workers); err != nil {
			return nil, err
		}
	}
	t.baseRoots = make([]merkle.Node, nb)
	for b := range t.baseRoots {
		t.baseRoots[b] = t.node(t.height, uint64(b))
	}
	var err error
	switch {
	case shape.Sub == 0:
		t.root = t.baseRoots[0]
	case shape.Top == 0:
		t.root, err = h.Node(t.baseRoots)
	default:
		t.subRoots = make([]merkle.Node, shape.Top)
		for g := range t.subRoots {
			if t.subRoots[g], err = h.Node(t.baseRoots[g*shape.Sub : (g+1)*shape.Sub]); err != nil {
				break
			}
		}
		if err == nil {
			t.root, err = h.Node(t.subRoots)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("sparse %s tree of shape %s: root: %w", h.Name(), shape, err)
	}
	return t, nil
}

// node returns the value of node i at base-tree level l.
func (t *SparseTree) node(l int, i uint64) merkle.Node {
	if v, ok := t.levels[l][i]; ok {
		return v
	}
	return t.filler[l]
}

// hashLevel computes the touched nodes of level l from level l-1.
func (t *SparseTree) hashLevel(l, workers int) (map[uint64]merkle.Node, error) {
	arity := uint64(t.shape.Base)
	seen := make(map[uint64]struct{}, len(t.levels[l-1]))
	var parents []uint64
	for i := range t.levels[l-1] {
		if _, ok := seen[i/arity]; !ok {
			seen[i/arity] = struct{}{}
			parents = append(parents, i/arity)
		}
	}
	slices.Sort(parents)
	vals := make([]merkle.Node, len(parents))
	errs := make([]error, len(parents))
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	workers = max(1, min(workers, len(parents)/16))
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			group := make([]merkle.Node, arity)
			for j := w; j < len(parents); j += workers {
				p := parents[j]
				for k := range arity {
					group[k] = t.node(l-1, p*arity+k)
				}
				vals[j], errs[j] = t.h.Node(group)
			}
		}()
	}
	wg.Wait()
	out := make(map[uint64]merkle.Node, len(parents))
	for j, p := range parents {
		if errs[j] != nil {
			return nil, fmt.Errorf("sparse %s tree: level %d node %d: %w", t.h.Name(), l, p, errs[j])
		}
		out[p] = vals[j]
	}
	return out, nil
}

// Node returns node i of base-tree level l (0: the leaves; base tree b's
// nodes at level l are numbered on from b times their count a base tree),
// as the full tree holds it.
func (t *SparseTree) Node(l int, i uint64) (merkle.Node, error) {
	if l < 0 || l > t.height {
		return merkle.Node{}, fmt.Errorf("node %d of level %d of a sparse tree of %d base-tree levels: no such level", i, l, t.height)
	}
	n := t.leaves
	for range l {
		n /= uint64(t.shape.Base)
	}
	if i >= n {
		return merkle.Node{}, fmt.Errorf("node %d of level %d of a sparse tree: out of %d", i, l, n)
	}
	return t.node(l, i), nil
}

// Root returns the tree's root.
func (t *SparseTree) Root() merkle.Node { return t.root }

// Prove returns leaf i's inclusion proof, in the form merkle.Tree.Prove
// gives.
func (t *SparseTree) Prove(i uint64) (*merkle.Proof, error) {
	if i >= t.leaves {
		return nil, fmt.Errorf("prove leaf %d of a %d-leaf sparse tree: out of range", i, t.leaves)
	}
	p := &merkle.Proof{Root: t.root, Leaf: t.node(0, i)}
	arity := uint64(t.shape.Base)
	j := i
	for l := range t.height {
		idx := j % arity
		start := j - idx
		e := merkle.PathElement{Hashes: make([]merkle.Node, 0, arity-1), Index: idx}
		for k := range arity {
			if k != idx {
				e.Hashes = append(e.Hashes, t.node(l, start+k))
			}
		}
		p.Base = append(p.Base, e)
		j /= arity
	}
	// j is now the base tree's number.
	if t.shape.Sub == 0 {
		p.Kind = merkle.KindSingle
		return p, nil
	}
	sub := uint64(t.shape.Sub)
	g := j / sub
	p.Sub = []merkle.PathElement{siblingsOf(t.baseRoots[g*sub:(g+1)*sub], j%sub)}
	if t.shape.Top == 0 {
		p.Kind = merkle.KindSub
		return p, nil
	}
	p.Kind = merkle.KindTop
	p.Top = []merkle.PathElement{siblingsOf(t.subRoots, g)}
	return p, nil
}

func siblingsOf(group []merkle.Node, idx uint64) merkle.PathElement {
	e := merkle.PathElement{Hashes: make([]merkle.Node, 0, len(group)-1), Index: idx}
	for k := range group {
		if uint64(k) != idx {
			e.Hashes = append(e.Hashes, group[k])
		}
	}
	return e
}
