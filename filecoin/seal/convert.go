package seal

import (
	"github.com/c2flow/c2flow/filecoin/c1"
	"github.com/c2flow/c2flow/filecoin/merkle"
	"github.com/c2flow/c2flow/filecoin/proofs"
)

// treeShape converts a registered proof's tree shape.
func treeShape(t proofs.TreeShape) merkle.Shape {
	return merkle.Shape{Base: t.Base, Sub: t.Sub, Top: t.Top}
}

// toMerkle converts a C1 Merkle proof for checking. The hashes are shared
// with m where possible (merkle.Node and [32]byte have one layout, but the
// slices differ in type, so they are copied).
func toMerkle(m *c1.MerkleProof) *merkle.Proof {
	p := &merkle.Proof{Root: merkle.Node(m.Root()), Leaf: merkle.Node(m.Leaf())}
	d := &m.Data
	switch {
	case d.Single != nil:
		p.Kind = merkle.KindSingle
		p.Base = toPath(d.Single.Path.Path)
	case d.Sub != nil:
		p.Kind = merkle.KindSub
		p.Base = toPath(d.Sub.BaseProof.Path)
		p.Sub = toPath(d.Sub.SubProof.Path)
	case d.Top != nil:
		p.Kind = merkle.KindTop
		p.Base = toPath(d.Top.BaseProof.Path)
		p.Sub = toPath(d.Top.SubProof.Path)
		p.Top = toPath(d.Top.TopProof.Path)
	}
	return p
}

func toPath(els []c1.PathElement) []merkle.PathElement {
	out := make([]merkle.PathElement, len(els))
	for i := range els {
		hs := make([]merkle.Node, len(els[i].Hashes))
		for j := range hs {
			hs[j] = merkle.Node(els[i].Hashes[j])
		}
		out[i] = merkle.PathElement{Hashes: hs, Index: els[i].Index}
	}
	return out
}

// fromMerkle converts an inclusion proof into the C1 form of its kind
// (storage-proofs-core MerkleProof's ProofData variants).
func fromMerkle(p *merkle.Proof) c1.MerkleProof {
	root, leaf := [32]byte(p.Root), [32]byte(p.Leaf)
	switch p.Kind {
	case merkle.KindSub:
		return c1.MerkleProof{Data: c1.ProofData{Sub: &c1.SubProof{
			BaseProof: fromPath(p.Base), SubProof: fromPath(p.Sub), Root: root, Leaf: leaf}}}
	case merkle.KindTop:
		return c1.MerkleProof{Data: c1.ProofData{Top: &c1.TopProof{
			BaseProof: fromPath(p.Base), SubProof: fromPath(p.Sub), TopProof: fromPath(p.Top), Root: root, Leaf: leaf}}}
	}
	return c1.MerkleProof{Data: c1.ProofData{Single: &c1.SingleProof{Root: root, Leaf: leaf, Path: fromPath(p.Base)}}}
}

func fromPath(els []merkle.PathElement) c1.InclusionPath {
	out := c1.InclusionPath{Path: make([]c1.PathElement, len(els))}
	for i := range els {
		hs := make([][32]byte, len(els[i].Hashes))
		for j := range hs {
			hs[j] = [32]byte(els[i].Hashes[j])
		}
		out.Path[i] = c1.PathElement{Hashes: hs, Index: els[i].Index}
	}
	return out
}
