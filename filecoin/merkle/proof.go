package merkle

import (
	"errors"
	"fmt"
	"math/bits"
)

// ProofKind tells which form of storage-proofs-core's ProofData enum a
// proof has.
type ProofKind uint8

const (
	// KindSingle is ProofData::Single: a path through one tree.
	KindSingle ProofKind = iota
	// KindSub is ProofData::Sub: a base-tree path and a sub-layer element.
	KindSub
	// KindTop is ProofData::Top: a base-tree path, a sub-layer element and
	// a top-layer element.
	KindTop
)

// String returns the ProofData variant name.
func (k ProofKind) String() string {
	switch k {
	case KindSingle:
		return "Single"
	case KindSub:
		return "Sub"
	case KindTop:
		return "Top"
	}
	return fmt.Sprintf("ProofKind(%d)", uint8(k))
}

// PathElement is one level of an inclusion path (storage-proofs-core's
// PathElement): the siblings of the node on the path, in tree order with
// the path node left out, and the path node's position among all arity
// children.
type PathElement struct {
	Hashes []Node
	Index  uint64
}

// Proof is an inclusion proof of Leaf under Root, mirroring
// storage-proofs-core's MerkleProof. Kind selects the ProofData variant:
//
//   - KindSingle (SingleProof{root, leaf, path}): Base holds the path; Sub
//     and Top are empty.
//   - KindSub (SubProof{base_proof, sub_proof, root, leaf}): Base leads from
//     the leaf to its base-tree root, Sub (one element) from there to Root.
//   - KindTop (TopProof{base_proof, sub_proof, top_proof, root, leaf}):
//     Base, then Sub to the sub-tree root, then Top (one element) to Root.
type Proof struct {
	Kind ProofKind
	Root Node
	Leaf Node
	Base []PathElement
	Sub  []PathElement
	Top  []PathElement
}

var (
	// ErrMalformed is returned for a proof whose structure does not fit
	// the expected shape.
	ErrMalformed = errors.New("malformed inclusion proof")
	// ErrRootMismatch is returned when the root computed from the leaf and
	// path differs from the proof's root.
	ErrRootMismatch = errors.New("inclusion proof root mismatch")
	// ErrChallengeMismatch is returned when the path does not lead to the
	// challenged node.
	ErrChallengeMismatch = errors.New("inclusion proof is not for the challenged node")
	// ErrPathLength is returned when the path length does not fit the
	// tree's size.
	ErrPathLength = errors.New("inclusion proof path length mismatch")
)

// Path returns the flattened path, base elements first (MerkleProofTrait's
// path()).
func (p *Proof) Path() []PathElement {
	out := make([]PathElement, 0, len(p.Base)+len(p.Sub)+len(p.Top))
	out = append(out, p.Base...)
	out = append(out, p.Sub...)
	return append(out, p.Top...)
}

// checkStructure checks that p has the ProofData variant of shape s, that
// its sub and top paths have exactly one element each where present, and
// that every element has arity-1 hashes and an index below the arity.
func (p *Proof) checkStructure(s Shape) error {
	if err := s.Validate(); err != nil {
		return err
	}
	want := KindSingle
	switch {
	case s.Top > 0:
		want = KindTop
	case s.Sub > 0:
		want = KindSub
	}
	if p.Kind != want {
		return fmt.Errorf("%s proof for a tree of shape %s (want %s): %w", p.Kind, s, want, ErrMalformed)
	}
	check := func(layer string, path []PathElement, arity int, exactlyOne bool) error {
		if exactlyOne && len(path) != 1 {
			return fmt.Errorf("%s path has %d elements, want 1: %w", layer, len(path), ErrMalformed)
		}
		if !exactlyOne && len(path) != 0 {
			return fmt.Errorf("%s path has %d elements, want none: %w", layer, len(path), ErrMalformed)
		}
		for i, e := range path {
			if len(e.Hashes) != arity-1 || e.Index >= uint64(arity) {
				return fmt.Errorf("%s path element %d has %d hashes and index %d, want %d hashes and index below %d: %w",
					layer, i, len(e.Hashes), e.Index, arity-1, arity, ErrMalformed)
			}
		}
		return nil
	}
	if len(p.Base) > 64 {
		return fmt.Errorf("base path has %d elements: %w", len(p.Base), ErrMalformed)
	}
	for i, e := range p.Base {
		if len(e.Hashes) != s.Base-1 || e.Index >= uint64(s.Base) {
			return fmt.Errorf("base path element %d has %d hashes and index %d, want %d hashes and index below %d: %w",
				i, len(e.Hashes), e.Index, s.Base-1, s.Base, ErrMalformed)
		}
	}
	if err := check("sub", p.Sub, s.Sub, s.Sub > 0); err != nil {
		return err
	}
	return check("top", p.Top, s.Top, s.Top > 0)
}

// PathIndex returns the leaf index the path's position indices spell
// (storage-proofs-core's path_index): for the base path
// sum(index_l * Base^l), plus sub_index * Base^len(Base) for the sub
// layer, plus top_index * Base^len(Base) * Sub for the top layer.
func (p *Proof) PathIndex(s Shape) (uint64, error) {
	if err := p.checkStructure(s); err != nil {
		return 0, fmt.Errorf("path index: %w", err)
	}
	var idx, leaves uint64 = 0, 1
	for _, e := range p.Base {
		idx += e.Index * leaves
		hi, lo := bits.Mul64(leaves, uint64(s.Base))
		if hi != 0 {
			return 0, fmt.Errorf("path index: base path of %d levels overflows: %w", len(p.Base), ErrMalformed)
		}
		leaves = lo
	}
	for _, layer := range []struct {
		path  []PathElement
		arity int
	}{{p.Sub, s.Sub}, {p.Top, s.Top}} {
		for _, e := range layer.path {
			hi, add := bits.Mul64(e.Index, leaves)
			sum, carry := bits.Add64(idx, add, 0)
			if hi != 0 || carry != 0 {
				return 0, fmt.Errorf("path index overflows: %w", ErrMalformed)
			}
			idx = sum
			if hi, leaves = bits.Mul64(leaves, uint64(layer.arity)); hi != 0 {
				return 0, fmt.Errorf("path index overflows: %w", ErrMalformed)
			}
		}
	}
	return idx, nil
}

// climb folds path over cur: at each level the current node is inserted
// among the siblings at its index and the group is hashed
// (InclusionPath::root).
func climb(h Hasher, cur Node, path []PathElement) (Node, error) {
	var buf [16]Node
	for l, e := range path {
		n := len(e.Hashes) + 1
		group := buf[:0]
		if n > len(buf) {
			group = make([]Node, 0, n)
		}
		group = append(group, e.Hashes[:e.Index]...)
		group = append(group, cur)
		group = append(group, e.Hashes[e.Index:]...)
		next, err := h.Node(group)
		if err != nil {
			return Node{}, fmt.Errorf("level %d: %w", l, err)
		}
		cur = next
	}
	return cur, nil
}

// ComputeRoot recomputes the root from the leaf and the path, after
// checking that the proof's structure fits shape s.
func (p *Proof) ComputeRoot(h Hasher, s Shape) (Node, error) {
	if err := p.checkStructure(s); err != nil {
		return Node{}, err
	}
	cur, err := climb(h, p.Leaf, p.Base)
	if err != nil {
		return Node{}, fmt.Errorf("base path: %w", err)
	}
	if cur, err = climb(h, cur, p.Sub); err != nil {
		return Node{}, fmt.Errorf("sub path: %w", err)
	}
	if cur, err = climb(h, cur, p.Top); err != nil {
		return Node{}, fmt.Errorf("top path: %w", err)
	}
	return cur, nil
}

// Verify checks that the path leads from Leaf to Root in a tree of shape s
// hashed by h (MerkleProofTrait::verify). Beyond upstream it rejects a proof
// whose ProofData variant, layer lengths, element widths or indices do not
// fit s (upstream would panic on some of these or hash a different arity).
func (p *Proof) Verify(h Hasher, s Shape) error {
	root, err := p.ComputeRoot(h, s)
	if err != nil {
		return fmt.Errorf("verify %s inclusion proof: %w", h.Name(), err)
	}
	if root != p.Root {
		return fmt.Errorf("verify %s inclusion proof: computed root %s, proof root %s: %w", h.Name(), root, p.Root, ErrRootMismatch)
	}
	return nil
}

// Validate is MerkleProofTrait::validate: Verify, and the path indices
// must spell the challenged node.
func (p *Proof) Validate(h Hasher, s Shape, node uint64) error {
	if err := p.Verify(h, s); err != nil {
		return err
	}
	idx, err := p.PathIndex(s)
	if err != nil {
		return fmt.Errorf("validate %s inclusion proof: %w", h.Name(), err)
	}
	if idx != node {
		return fmt.Errorf("validate %s inclusion proof: path leads to node %d, challenge is node %d: %w", h.Name(), idx, node, ErrChallengeMismatch)
	}
	return nil
}

// ValidateInTree is Validate plus the path-length check Filecoin's vanilla
// verifiers make for a tree of the given number of leaves: the path must
// have [ExpectedPathLength] elements, and node must be a leaf.
func (p *Proof) ValidateInTree(h Hasher, s Shape, leaves, node uint64) error {
	want, err := ExpectedPathLength(s, leaves)
	if err != nil {
		return fmt.Errorf("validate %s inclusion proof: %w", h.Name(), err)
	}
	if got := len(p.Base) + len(p.Sub) + len(p.Top); got != want {
		return fmt.Errorf("validate %s inclusion proof: path of %d elements, a %s tree of %d leaves needs %d: %w", h.Name(), got, s, leaves, want, ErrPathLength)
	}
	if node >= leaves {
		return fmt.Errorf("validate %s inclusion proof: node %d of a %d-leaf tree: %w", h.Name(), node, leaves, ErrChallengeMismatch)
	}
	return p.Validate(h, s, node)
}
