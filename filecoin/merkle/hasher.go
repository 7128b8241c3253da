package merkle

import (
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/c2flow/c2flow/filecoin/hash"
)

// Node is one 32-byte tree node: a SHA254 digest or the little-endian
// encoding of a Poseidon field element ([hash.Domain]).
type Node [32]byte

// String returns n as lowercase hex, byte 0 first.
func (n Node) String() string { return hex.EncodeToString(n[:]) }

// Format implements fmt.Formatter as [hash.Domain.Format] does: %x and %X
// print n's bytes in hex, %s, %v and %q print String().
func (n Node) Format(f fmt.State, verb rune) { hash.Domain(n).Format(f, verb) }

// ErrArity is returned for a tree arity a hasher does not support.
var ErrArity = errors.New("unsupported tree arity")

// Hasher is the node function of a tree: it hashes the children of one
// internal node, in order, into the node (merkletree's Algorithm::multi_node;
// leaves are stored as given, Algorithm::leaf being the identity for both
// Filecoin hashers).
type Hasher interface {
	// Name identifies the hasher in errors.
	Name() string
	// CheckArity returns an error wrapping ErrArity unless internal nodes
	// of arity children can be hashed.
	CheckArity(arity int) error
	// Node hashes children into their parent.
	Node(children []Node) (Node, error)
}

// SHA254Hasher is the tree-D hasher: a parent is
// Trim(SHA-256(child0 || child1 || ...)) (filecoin-hashers' Sha256Function).
// It accepts any arity of at least 2; Filecoin's tree D is binary.
type SHA254Hasher struct{}

// Name implements Hasher.
func (SHA254Hasher) Name() string { return "sha254" }

// CheckArity implements Hasher.
func (SHA254Hasher) CheckArity(arity int) error {
	if arity < 2 {
		return fmt.Errorf("sha254 tree of arity %d: %w", arity, ErrArity)
	}
	return nil
}

// Node implements Hasher.
func (SHA254Hasher) Node(children []Node) (Node, error) {
	if len(children) == 2 {
		return Node(hash.Sha254Node(children[0], children[1])), nil
	}
	var buf [16][32]byte
	parts := buf[:0]
	for _, c := range children {
		parts = append(parts, c)
	}
	return Node(hash.Sha254Nodes(parts)), nil
}

// PoseidonHasher is the tree-R / tree-C hasher: a parent is the
// MerkleTree-tagged Poseidon hash of its children as field elements
// (filecoin-hashers' PoseidonFunction::multi_node), which supports arities
// 2, 4, 8 and 16. Children must be canonical field elements.
type PoseidonHasher struct{}

// Name implements Hasher.
func (PoseidonHasher) Name() string { return "poseidon" }

// CheckArity implements Hasher.
func (PoseidonHasher) CheckArity(arity int) error {
	switch arity {
	case 2, 4, 8, 16:
		return nil
	}
	return fmt.Errorf("poseidon tree of arity %d (want 2, 4, 8 or 16): %w", arity, ErrArity)
}

// Node implements Hasher.
func (p PoseidonHasher) Node(children []Node) (Node, error) {
	if err := p.CheckArity(len(children)); err != nil {
		return Node{}, err
	}
	var buf [16]hash.Domain
	in := buf[:len(children)]
	for i := range children {
		in[i] = hash.Domain(children[i])
	}
	d, err := hash.PoseidonDomains(in)
	if err != nil {
		return Node{}, fmt.Errorf("poseidon node: %w", err)
	}
	return Node(d), nil
}
