package merkle

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// Bincode is serde's bincode 1 encoding as rust-fil-proofs writes its
// vanilla proofs (bincode::serialize: little-endian integers, u64 lengths
// before sequences, u32 enum variant indexes, domains as their 32 bytes).
// This file reads and writes storage-proofs-core's MerkleProof in it;
// vanilla proof codecs (filecoin/update) build on the reader.

// ErrBincode is wrapped by every decoding error.
var ErrBincode = errors.New("malformed bincode")

// BincodeReader reads bincode values from a byte slice, refusing lengths
// beyond what the remaining bytes could hold (a corrupt length never
// allocates).
type BincodeReader struct {
	b   []byte
	off int
}

// NewBincodeReader reads b.
func NewBincodeReader(b []byte) *BincodeReader { return &BincodeReader{b: b} }

// Rest is the number of bytes not read.
func (r *BincodeReader) Rest() int { return len(r.b) - r.off }

func (r *BincodeReader) take(n int, what string) ([]byte, error) {
	if n < 0 || r.Rest() < n {
		return nil, fmt.Errorf("%s at byte %d: %d bytes left, %d needed: %w", what, r.off, r.Rest(), n, ErrBincode)
	}
	b := r.b[r.off : r.off+n]
	r.off += n
	return b, nil
}

// U64 reads a u64 (or usize).
func (r *BincodeReader) U64(what string) (uint64, error) {
	b, err := r.take(8, what)
	if err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint64(b), nil
}

// U32 reads a u32 (an enum's variant index).
func (r *BincodeReader) U32(what string) (uint32, error) {
	b, err := r.take(4, what)
	if err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint32(b), nil
}

// Node reads a 32-byte domain.
func (r *BincodeReader) Node(what string) (Node, error) {
	b, err := r.take(32, what)
	if err != nil {
		return Node{}, err
	}
	return Node(b), nil
}

// Len reads a sequence length whose elements take at least min bytes
// each, refusing one the remaining bytes cannot hold.
func (r *BincodeReader) Len(what string, min int) (int, error) {
	at := r.off
	n, err := r.U64(what + " length")
	if err != nil {
		return 0, err
	}
	if min < 1 {
		min = 1
	}
	if n > uint64(r.Rest()/min) {
		return 0, fmt.Errorf("%s length %d at byte %d: only %d bytes follow: %w", what, n, at, r.Rest(), ErrBincode)
	}
	return int(n), nil
}

// Nodes reads a Vec of domains.
func (r *BincodeReader) Nodes(what string) ([]Node, error) {
	n, err := r.Len(what, 32)
	if err != nil {
		return nil, err
	}
	out := make([]Node, n)
	for i := range out {
		if out[i], err = r.Node(what); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// inclusionPath reads an InclusionPath: Vec<PathElement{hashes:
// Vec<Domain>, index: usize}> (the arity's PhantomData writes nothing).
func (r *BincodeReader) inclusionPath(what string) ([]PathElement, error) {
	n, err := r.Len(what, 16)
	if err != nil {
		return nil, err
	}
	path := make([]PathElement, n)
	for i := range path {
		if path[i].Hashes, err = r.Nodes(what + " hashes"); err != nil {
			return nil, err
		}
		if path[i].Index, err = r.U64(what + " index"); err != nil {
			return nil, err
		}
	}
	return path, nil
}

// Proof reads a MerkleProof{data: ProofData}: a u32 variant index, then
// Single{root, leaf, path}, Sub{base_proof, sub_proof, root, leaf} or
// Top{base_proof, sub_proof, top_proof, root, leaf} (storage-proofs-core
// merkle/proof.rs). The structure is not checked against a tree shape
// here (Proof.Validate does).
func (r *BincodeReader) Proof(what string) (*Proof, error) {
	tag, err := r.U32(what + " variant")
	if err != nil {
		return nil, err
	}
	p := &Proof{Kind: ProofKind(tag)}
	switch p.Kind {
	case KindSingle:
		if p.Root, err = r.Node(what + " root"); err != nil {
			return nil, err
		}
		if p.Leaf, err = r.Node(what + " leaf"); err != nil {
			return nil, err
		}
		p.Base, err = r.inclusionPath(what + " path")
		return p, err
	case KindSub, KindTop:
		if p.Base, err = r.inclusionPath(what + " base path"); err != nil {
			return nil, err
		}
		if p.Sub, err = r.inclusionPath(what + " sub path"); err != nil {
			return nil, err
		}
		if p.Kind == KindTop {
			if p.Top, err = r.inclusionPath(what + " top path"); err != nil {
				return nil, err
			}
		}
		if p.Root, err = r.Node(what + " root"); err != nil {
			return nil, err
		}
		p.Leaf, err = r.Node(what + " leaf")
		return p, err
	}
	return nil, fmt.Errorf("%s: ProofData variant %d (0 Single, 1 Sub, 2 Top): %w", what, tag, ErrBincode)
}

// AppendBincode appends p's bincode encoding to b (the inverse of
// BincodeReader.Proof).
func (p *Proof) AppendBincode(b []byte) []byte {
	path := func(b []byte, es []PathElement) []byte {
		b = binary.LittleEndian.AppendUint64(b, uint64(len(es)))
		for _, e := range es {
			b = AppendNodes(b, e.Hashes)
			b = binary.LittleEndian.AppendUint64(b, e.Index)
		}
		return b
	}
	b = binary.LittleEndian.AppendUint32(b, uint32(p.Kind))
	if p.Kind == KindSingle {
		b = append(b, p.Root[:]...)
		b = append(b, p.Leaf[:]...)
		return path(b, p.Base)
	}
	b = path(b, p.Base)
	b = path(b, p.Sub)
	if p.Kind == KindTop {
		b = path(b, p.Top)
	}
	b = append(b, p.Root[:]...)
	return append(b, p.Leaf[:]...)
}

// AppendNodes appends a Vec of domains.
func AppendNodes(b []byte, ns []Node) []byte {
	b = binary.LittleEndian.AppendUint64(b, uint64(len(ns)))
	for _, n := range ns {
		b = append(b, n[:]...)
	}
	return b
}
