package c1

import (
	"fmt"
	"sync"

	"github.com/c2flow/c2flow/filecoin/proofs"
)

// Skeleton returns a C1 for proof p with every array at the length p
// prescribes, every domain, index and node zero, and layer indices 1 to
// layers (the encoding proof on the last layer): a value that passes
// Validate, for building test artifacts. No two proofs share memory.
func Skeleton(p proofs.RegisteredSealProof) (*SealCommitPhase1Output, error) {
	info, err := proofs.Lookup(p)
	if err != nil {
		return nil, fmt.Errorf("c1: skeleton: %w", err)
	}
	s := shapeOf(info)
	c := &SealCommitPhase1Output{
		RegisteredProof: p,
		VanillaProofs:   VanillaSealProof{Key: s.key, Partitions: make([][]Proof, s.partitions)},
	}
	for k := range c.VanillaProofs.Partitions {
		part := make([]Proof, s.challenges)
		for i := range part {
			part[i] = newProof(s)
		}
		c.VanillaProofs.Partitions[k] = part
	}
	return c, nil
}

func newProof(s *shape) Proof {
	p := Proof{
		CommDProofs:    newMerkle(proofs.TreeShape{Base: 2}, s.commD, 0, 0),
		CommRLastProof: newMerkle(s.tree, s.treeBase, s.treeSub, s.treeTop),
		ReplicaColumnProofs: ReplicaColumnProof{
			CX:         newColumnProof(s),
			DrgParents: make([]ColumnProof, proofs.DRGParents),
			ExpParents: make([]ColumnProof, proofs.ExpParents),
		},
		LabelingProofs: make([]LabelingProof, s.layers),
		EncodingProof:  EncodingProof{Parents: make([][32]byte, proofs.TotalParents), LayerIndex: uint32(s.layers)},
	}
	for i := range p.ReplicaColumnProofs.DrgParents {
		p.ReplicaColumnProofs.DrgParents[i] = newColumnProof(s)
	}
	for i := range p.ReplicaColumnProofs.ExpParents {
		p.ReplicaColumnProofs.ExpParents[i] = newColumnProof(s)
	}
	for i := range p.LabelingProofs {
		p.LabelingProofs[i] = LabelingProof{Parents: make([][32]byte, proofs.TotalParents), LayerIndex: uint32(i + 1)}
	}
	return p
}

func newColumnProof(s *shape) ColumnProof {
	return ColumnProof{
		Column:         Column{Rows: make([][32]byte, s.layers)},
		InclusionProof: newMerkle(s.tree, s.treeBase, s.treeSub, s.treeTop),
	}
}

func newPath(n, arity int) InclusionPath {
	p := InclusionPath{Path: make([]PathElement, n)}
	for i := range p.Path {
		p.Path[i].Hashes = make([][32]byte, arity-1)
	}
	return p
}

func newMerkle(t proofs.TreeShape, base, sub, top int) MerkleProof {
	switch {
	case t.Top > 0:
		return MerkleProof{Data: ProofData{Top: &TopProof{
			BaseProof: newPath(base, t.Base), SubProof: newPath(sub, t.Sub), TopProof: newPath(top, t.Top)}}}
	case t.Sub > 0:
		return MerkleProof{Data: ProofData{Sub: &SubProof{BaseProof: newPath(base, t.Base), SubProof: newPath(sub, t.Sub)}}}
	}
	return MerkleProof{Data: ProofData{Single: &SingleProof{Path: newPath(base, t.Base)}}}
}

// counter is a sink that only counts bytes.
type counter struct{ n int64 }

func (c *counter) Write(p []byte) (int, error)       { c.n += int64(len(p)); return len(p), nil }
func (c *counter) WriteByte(byte) error              { c.n++; return nil }
func (c *counter) WriteString(s string) (int, error) { c.n += int64(len(s)); return len(s), nil }

// maxCompact[id] is the longest compact encoding of a C1 of proof id that
// Validate accepts.
var maxCompact = sync.OnceValue(func() []int64 {
	all := proofs.All() // in id order
	sizes := make([]int64, len(all))
	for id, info := range all {
		s := shapeOf(info)
		// The longest value of each field: bytes 255, indices and nodes at
		// their largest accepted values.
		p := newProof(s)
		fillMax(&p, s)
		var lp counter
		(&encoder{w: &lp, num: make([]byte, 0, 20)}).proof(&p)

		var base counter // the artifact with no partitions ("[]")
		c := &SealCommitPhase1Output{RegisteredProof: info.Proof, VanillaProofs: VanillaSealProof{Key: s.key},
			CommR: all255, CommD: all255, ReplicaID: all255, Seed: all255, Ticket: all255}
		encodeOutput(&base, c)
		P, C := int64(s.partitions), int64(s.challenges)
		sizes[id] = base.n + P*(2+C*lp.n+(C-1)) + (P - 1)
	}
	return sizes
})

func fillMax(p *Proof, s *shape) {
	ff := func(ds [][32]byte) {
		for i := range ds {
			for j := range ds[i] {
				ds[i][j] = 0xff
			}
		}
	}
	merkle := func(m *MerkleProof) {
		for _, el := range m.Path() {
			ff(el.Hashes)
		}
		// Index digits: arity-1 is a single digit for every arity in use.
		for _, ip := range []*InclusionPath{pathOf(m, 0), pathOf(m, 1), pathOf(m, 2)} {
			if ip == nil {
				continue
			}
			for i := range ip.Path {
				ip.Path[i].Index = uint64(len(ip.Path[i].Hashes))
			}
		}
		switch d := &m.Data; {
		case d.Single != nil:
			d.Single.Root, d.Single.Leaf = all255, all255
		case d.Sub != nil:
			d.Sub.Root, d.Sub.Leaf = all255, all255
		case d.Top != nil:
			d.Top.Root, d.Top.Leaf = all255, all255
		}
	}
	col := func(cp *ColumnProof) {
		cp.Column.Index = uint32(min(s.nodes-1, 1<<32-1))
		ff(cp.Column.Rows)
		merkle(&cp.InclusionProof)
	}
	merkle(&p.CommDProofs)
	merkle(&p.CommRLastProof)
	col(&p.ReplicaColumnProofs.CX)
	for i := range p.ReplicaColumnProofs.DrgParents {
		col(&p.ReplicaColumnProofs.DrgParents[i])
	}
	for i := range p.ReplicaColumnProofs.ExpParents {
		col(&p.ReplicaColumnProofs.ExpParents[i])
	}
	for i := range p.LabelingProofs {
		ff(p.LabelingProofs[i].Parents)
		p.LabelingProofs[i].LayerIndex = uint32(s.layers)
		p.LabelingProofs[i].Node = s.nodes - 1
	}
	ff(p.EncodingProof.Parents)
	p.EncodingProof.Node = s.nodes - 1
}

var all255 = [32]byte{
	255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255,
	255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255,
}

// pathOf returns the level-th inclusion path of m (0 base, 1 sub, 2 top),
// or nil.
func pathOf(m *MerkleProof, level int) *InclusionPath {
	d := &m.Data
	switch {
	case d.Single != nil && level == 0:
		return &d.Single.Path
	case d.Sub != nil && level == 0:
		return &d.Sub.BaseProof
	case d.Sub != nil && level == 1:
		return &d.Sub.SubProof
	case d.Top != nil && level == 0:
		return &d.Top.BaseProof
	case d.Top != nil && level == 1:
		return &d.Top.SubProof
	case d.Top != nil && level == 2:
		return &d.Top.TopProof
	}
	return nil
}

// MaxSize returns the size bound Decode applies to the C1 JSON of proof
// p: twice the longest compact encoding (serde_json::to_vec) that
// Validate accepts, the slack allowing for insignificant whitespace. A
// Commit2In wrapper may be up to 4/3 of that plus 256 bytes.
func MaxSize(p proofs.RegisteredSealProof) (int64, error) {
	if _, err := proofs.Lookup(p); err != nil {
		return 0, fmt.Errorf("c1: size bound: %w", err)
	}
	return 2 * maxCompact()[p], nil
}

// MaxInputSize returns the size bound Decode applies to an input of proof
// p in either form: a Commit2In wrapper of a C1 of MaxSize bytes, the
// larger.
func MaxInputSize(p proofs.RegisteredSealProof) (int64, error) {
	n, err := MaxSize(p)
	if err != nil {
		return 0, err
	}
	return wrappedSize(n), nil
}

// maxAnySize is the bound when the registered proof is not yet known: the
// largest over all supported proofs.
func maxAnySize() int64 {
	var m int64
	for _, n := range maxCompact() {
		m = max(m, 2*n)
	}
	return m
}

// wrappedSize is the bound on a Commit2In wrapping a C1 of at most n bytes.
func wrappedSize(n int64) int64 { return (n+2)/3*4 + 256 }
