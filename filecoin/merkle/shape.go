package merkle

import (
	"errors"
	"fmt"
	"math/bits"
)

// Shape is a tree's arities: Base for the base trees, Sub for the layer
// that hashes Sub base-tree roots together (0: none), Top for the layer that
// hashes Top sub-tree roots together (0: none; needs Sub). It matches
// rust-fil-proofs' LCTree<H, Base, Sub, Top> type parameters, written
// "Base-Sub-Top" (e.g. 8-8-0).
type Shape struct {
	Base, Sub, Top int
}

// ErrShape is returned for an invalid shape or a leaf count that does not
// fit a shape.
var ErrShape = errors.New("invalid tree shape")

// TreeDShape returns the shape of tree D: one binary tree (2-0-0).
func TreeDShape() Shape { return Shape{Base: 2} }

// String returns the shape as "Base-Sub-Top".
func (s Shape) String() string { return fmt.Sprintf("%d-%d-%d", s.Base, s.Sub, s.Top) }

// Validate checks the arities: Base >= 2, Sub and Top each 0 or >= 2, and no
// Top without Sub.
func (s Shape) Validate() error {
	if s.Base < 2 || s.Sub < 0 || s.Sub == 1 || s.Top < 0 || s.Top == 1 || (s.Top > 0 && s.Sub == 0) {
		return fmt.Errorf("shape %s: %w", s, ErrShape)
	}
	return nil
}

// BaseTrees returns how many base trees a tree of this shape has:
// max(Sub, 1) * max(Top, 1).
func (s Shape) BaseTrees() int { return max(s.Sub, 1) * max(s.Top, 1) }

// SectorShape returns the tree-R / tree-C shape rust-fil-proofs uses for a
// sector size in bytes (filecoin-proofs/src/constants.rs SectorShape*: base
// arity 8 everywhere; 8-0-0 for 2KiB, 8MiB, 512MiB; 8-2-0 for 4KiB, 16MiB,
// 1GiB; 8-8-0 for 16KiB, 32GiB; 8-8-2 for 32KiB, 64GiB).
func SectorShape(sectorSize uint64) (Shape, error) {
	switch sectorSize {
	case 2 << 10, 8 << 20, 512 << 20:
		return Shape{Base: 8}, nil
	case 4 << 10, 16 << 20, 1 << 30:
		return Shape{Base: 8, Sub: 2}, nil
	case 16 << 10, 32 << 30:
		return Shape{Base: 8, Sub: 8}, nil
	case 32 << 10, 64 << 30:
		return Shape{Base: 8, Sub: 8, Top: 2}, nil
	}
	return Shape{}, fmt.Errorf("sector size %d has no tree shape: %w", sectorSize, ErrShape)
}

// rowCount is merkletree's get_merkle_tree_row_count: the number of rows of
// a tree with the given leaves and arity. For arity 2 it is
// trailing_zeros(2*leaves), as upstream computes it; otherwise upstream
// takes the f64 logarithm floor(log_arity(arity*leaves)), computed here
// exactly in integers.
func rowCount(leaves uint64, arity int) int {
	if arity == 2 {
		return bits.TrailingZeros64(leaves * 2)
	}
	rows := 0
	for v := leaves * uint64(arity); v >= uint64(arity); v /= uint64(arity) {
		rows++
	}
	return rows
}

// ExpectedPathLength is storage-proofs-core's compound_path_length: the
// number of path elements of an inclusion proof in a tree of this shape
// over the given number of leaves (base-tree levels, plus one for the sub
// layer, plus one for the top layer). Filecoin's vanilla verifiers compare
// it with the proof's path length.
func ExpectedPathLength(s Shape, leaves uint64) (int, error) {
	if err := s.Validate(); err != nil {
		return 0, err
	}
	base := leaves / uint64(s.BaseTrees())
	if base == 0 {
		return 0, fmt.Errorf("shape %s over %d leaves: %w", s, leaves, ErrShape)
	}
	n := rowCount(base, s.Base) - 1
	if s.Sub > 0 {
		n++
	}
	if s.Top > 0 {
		n++
	}
	return n, nil
}
