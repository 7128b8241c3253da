package circuit

import (
	"errors"
	"fmt"
	"math/bits"

	"github.com/c2flow/c2flow/filecoin/merkle"
	"github.com/c2flow/c2flow/filecoin/proofs"
)

// ErrShape is returned (wrapped) for a Shape the circuit cannot be built for.
var ErrShape = errors.New("invalid circuit shape")

// Shape is everything a StackedCircuit's constraint system depends on: two
// circuits of one Shape have the same variables and constraints, whatever
// their values. It is the shape of StackedCompound::blank_circuit
// (storage-proofs-porep stacked/circuit/proof.rs).
type Shape struct {
	// Nodes is the number of sector nodes: the leaves of trees D, R and C.
	// A power of two, at least 2.
	Nodes uint64
	// Layers is the number of SDR layers, the height of a tree C column:
	// 2 or 11 (hash_single_column hashes columns of those heights only).
	Layers int
	// Tree is the shape of tree R and tree C (tree D is always binary).
	Tree merkle.Shape
	// Challenges is the number of challenges the partition proves.
	Challenges int
}

// ShapeOf returns the circuit shape of one partition of a registered proof.
func ShapeOf(info proofs.SealProofInfo) Shape {
	return Shape{
		Nodes:      info.Nodes,
		Layers:     info.Layers,
		Tree:       merkle.Shape{Base: info.TreeR.Base, Sub: info.TreeR.Sub, Top: info.TreeR.Top},
		Challenges: info.ChallengesPerPartition,
	}
}

// ShapeFor returns the circuit shape of one partition of proof p.
func ShapeFor(p proofs.RegisteredSealProof) (Shape, error) {
	info, err := proofs.Lookup(p)
	if err != nil {
		return Shape{}, fmt.Errorf("circuit: shape of %v: %w", p, err)
	}
	return ShapeOf(info), nil
}

// String describes s, e.g. "nodes=64 layers=2 tree=8-0-0 challenges=2".
func (s Shape) String() string {
	return fmt.Sprintf("nodes=%d layers=%d tree=%s challenges=%d", s.Nodes, s.Layers, s.Tree, s.Challenges)
}

// Validate checks that the circuit can be built for s: power-of-two arities
// (the insertion gadget needs them), a node count that the tree shape
// divides into equal base trees of a power of the base arity, 2 or 11
// layers and at least one challenge.
func (s Shape) Validate() error {
	if err := s.Tree.Validate(); err != nil {
		return fmt.Errorf("circuit: shape %v: %w: %w", s, ErrShape, err)
	}
	for _, a := range []int{s.Tree.Base, s.Tree.Sub, s.Tree.Top} {
		if a != 0 && bits.OnesCount(uint(a)) != 1 {
			return fmt.Errorf("circuit: shape %v: %w: arity %d is not a power of two", s, ErrShape, a)
		}
	}
	if s.Nodes < 2 || bits.OnesCount64(s.Nodes) != 1 {
		return fmt.Errorf("circuit: shape %v: %w: nodes must be a power of two >= 2", s, ErrShape)
	}
	if s.Layers != 2 && s.Layers != 11 {
		return fmt.Errorf("circuit: shape %v: %w: columns of %d layers cannot be hashed (2 or 11)", s, ErrShape, s.Layers)
	}
	if s.Challenges < 1 {
		return fmt.Errorf("circuit: shape %v: %w: no challenges", s, ErrShape)
	}
	if _, _, _, err := s.treePathLens(); err != nil {
		return err
	}
	return nil
}

// CommDPathLen is the number of levels of a tree D path: log2(Nodes).
func (s Shape) CommDPathLen() int { return bits.TrailingZeros64(s.Nodes) }

// TreePathLens returns the number of levels of a tree R or tree C path:
// base levels (storage-proofs-core merkle/proof.rs base_path_length), and 1
// or 0 for the sub and top levels.
func (s Shape) TreePathLens() (base, sub, top int) {
	b, su, t, _ := s.treePathLens()
	return b, su, t
}

func (s Shape) treePathLens() (base, sub, top int, err error) {
	n, perr := merkle.ExpectedPathLength(s.Tree, s.Nodes)
	if perr != nil {
		return 0, 0, 0, fmt.Errorf("circuit: shape %v: %w: %w", s, ErrShape, perr)
	}
	if s.Tree.Sub > 0 {
		sub = 1
	}
	if s.Tree.Top > 0 {
		top = 1
	}
	base = n - sub - top
	// The path's index bits must spell a node: base arity^base * sub * top = nodes.
	leaves := uint64(1)
	for range base {
		leaves *= uint64(s.Tree.Base)
	}
	leaves *= uint64(max(s.Tree.Sub, 1) * max(s.Tree.Top, 1))
	if base < 1 || leaves != s.Nodes {
		return 0, 0, 0, fmt.Errorf("circuit: shape %v: %w: %d nodes do not fill base trees of arity %d", s, ErrShape, s.Nodes, s.Tree.Base)
	}
	return base, sub, top, nil
}
