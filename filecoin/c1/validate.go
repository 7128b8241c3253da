package c1

import (
	"encoding/binary"
	"fmt"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/c2flow/c2flow/filecoin/proofs"
)

// shape is what a registered proof fixes about a C1's layout.
type shape struct {
	key                        string
	partitions, challenges     int
	layers                     int
	nodes                      uint64
	commD                      int // tree D path elements
	tree                       proofs.TreeShape
	treeBase, treeSub, treeTop int // tree R / tree C path elements per level
}

func shapeOf(info proofs.SealProofInfo) *shape {
	b, s, t := info.TreeRPathLens()
	return &shape{
		key:        info.VanillaProofsKey,
		partitions: info.Partitions,
		challenges: info.ChallengesPerPartition,
		layers:     info.Layers,
		nodes:      info.Nodes,
		commD:      info.CommDPathLen(),
		tree:       info.TreeR,
		treeBase:   b, treeSub: s, treeTop: t,
	}
}

// modulus is the BLS12-381 scalar field modulus r as little-endian 64-bit
// limbs, computed once from gnark-crypto.
var modulus = func() [4]uint64 {
	var be [32]byte
	fr.Modulus().FillBytes(be[:])
	var m [4]uint64
	for i := range m {
		m[i] = binary.BigEndian.Uint64(be[24-8*i:])
	}
	return m
}()

// IsCanonicalScalar reports whether d, read as a little-endian integer, is
// below the BLS12-381 scalar field modulus: whether it is a valid Poseidon
// domain (blstrs Scalar::from_repr).
func IsCanonicalScalar(d *[32]byte) bool {
	for i := 3; i >= 0; i-- {
		v := binary.LittleEndian.Uint64(d[8*i:])
		if v != modulus[i] {
			return v < modulus[i]
		}
	}
	return false // equal to r
}

// IsSHA254 reports whether d is a valid SHA-256 tree domain: the top two
// bits of its last byte are clear (filecoin-hashers sha256.rs trim_to_fr32).
func IsSHA254(d *[32]byte) bool { return d[31]&0xc0 == 0 }

// domainKind selects the check a domain must pass.
type domainKind uint8

const (
	poseidonDomain domainKind = iota
	sha254Domain
)

// validator walks a decoded C1, keeping the JSON path for errors.
type validator struct {
	path jpath
	s    *shape
}

func (v *validator) fail(kind error, format string, args ...any) error {
	return &Error{Path: v.path.String(), Offset: -1, Err: fmt.Errorf("%w: "+format, append([]any{kind}, args...)...)}
}

// Validate checks a C1 against its registered proof: the vanilla proofs'
// key, the partition, challenge, layer, parent and path counts, the
// number of hashes and the index range of every path element, column,
// node and layer indices, enum variants, and the encoding of every domain
// (canonical scalar for Poseidon domains, top two bits clear for SHA-256
// ones). It does not hash anything. The error is an *Error naming the
// first offending field in JSON order.
func Validate(c *SealCommitPhase1Output) error {
	if c == nil {
		return &Error{Offset: -1, Err: fmt.Errorf("%w: nil artifact", ErrMissingField)}
	}
	info, err := proofs.Lookup(c.RegisteredProof)
	if err != nil {
		return &Error{Path: "registered_proof", Offset: -1, Err: err}
	}
	v := &validator{s: shapeOf(info), path: make(jpath, 0, 16)}
	return v.output(c, info)
}

func (v *validator) output(c *SealCommitPhase1Output, info proofs.SealProofInfo) error {
	v.path.key("vanilla_proofs")
	if c.VanillaProofs.Key != v.s.key {
		return v.fail(ErrProofMismatch, "key %q, but registered_proof %s stores its vanilla proofs under %q",
			c.VanillaProofs.Key, info.Name, v.s.key)
	}
	v.path.key(v.s.key)
	if n := len(c.VanillaProofs.Partitions); n != v.s.partitions {
		return v.fail(ErrCount, "%d partitions, %s has %d", n, info.Name, v.s.partitions)
	}
	for k, part := range c.VanillaProofs.Partitions {
		v.path.index(k)
		if n := len(part); n != v.s.challenges {
			return v.fail(ErrCount, "%d challenge proofs, %s has %d per partition", n, info.Name, v.s.challenges)
		}
		for i := range part {
			v.path.index(i)
			if err := v.proof(&part[i]); err != nil {
				return err
			}
			v.path.pop()
		}
		v.path.pop()
	}
	v.path = v.path[:0]
	for _, f := range []struct {
		name string
		d    *[32]byte
		kind domainKind
	}{
		{"comm_r", &c.CommR, poseidonDomain},
		{"comm_d", &c.CommD, sha254Domain},
		{"replica_id", &c.ReplicaID, poseidonDomain},
	} {
		v.path.key(f.name)
		if err := v.domain(f.d, f.kind); err != nil {
			return err
		}
		v.path.pop()
	}
	return nil // seed and ticket are free 32-byte values
}

func (v *validator) proof(p *Proof) error {
	v.path.key("comm_d_proofs")
	if err := v.merkle(&p.CommDProofs, proofs.TreeShape{Base: 2}, v.s.commD, 0, 0, sha254Domain); err != nil {
		return err
	}
	v.path.pop()
	v.path.key("comm_r_last_proof")
	if err := v.treeR(&p.CommRLastProof); err != nil {
		return err
	}
	v.path.pop()

	v.path.key("replica_column_proofs")
	rcp := &p.ReplicaColumnProofs
	v.path.key("c_x")
	if err := v.columnProof(&rcp.CX); err != nil {
		return err
	}
	v.path.pop()
	for _, group := range []struct {
		name string
		cps  []ColumnProof
		want int
	}{
		{"drg_parents", rcp.DrgParents, proofs.DRGParents},
		{"exp_parents", rcp.ExpParents, proofs.ExpParents},
	} {
		v.path.key(group.name)
		if len(group.cps) != group.want {
			return v.fail(ErrCount, "%d column proofs, want %d", len(group.cps), group.want)
		}
		for i := range group.cps {
			v.path.index(i)
			if err := v.columnProof(&group.cps[i]); err != nil {
				return err
			}
			v.path.pop()
		}
		v.path.pop()
	}
	v.path.pop()

	v.path.key("labeling_proofs")
	if len(p.LabelingProofs) != v.s.layers {
		return v.fail(ErrCount, "%d labeling proofs, want one per layer (%d)", len(p.LabelingProofs), v.s.layers)
	}
	for i := range p.LabelingProofs {
		v.path.index(i)
		lp := &p.LabelingProofs[i]
		if err := v.labeling(lp.Parents, lp.LayerIndex, lp.Node); err != nil {
			return err
		}
		v.path.pop()
	}
	v.path.pop()
	v.path.key("encoding_proof")
	if err := v.labeling(p.EncodingProof.Parents, p.EncodingProof.LayerIndex, p.EncodingProof.Node); err != nil {
		return err
	}
	v.path.pop()
	return nil
}

func (v *validator) treeR(m *MerkleProof) error {
	return v.merkle(m, v.s.tree, v.s.treeBase, v.s.treeSub, v.s.treeTop, poseidonDomain)
}

func (v *validator) columnProof(cp *ColumnProof) error {
	v.path.key("column")
	v.path.key("index")
	if uint64(cp.Column.Index) >= v.s.nodes {
		return v.fail(ErrRange, "node %d, sector has %d nodes", cp.Column.Index, v.s.nodes)
	}
	v.path.pop()
	v.path.key("rows")
	if err := v.domains(cp.Column.Rows, v.s.layers, "rows (one per layer)", poseidonDomain); err != nil {
		return err
	}
	v.path.pop()
	v.path.pop()
	v.path.key("inclusion_proof")
	if err := v.treeR(&cp.InclusionProof); err != nil {
		return err
	}
	v.path.pop()
	return nil
}

func (v *validator) labeling(parents [][32]byte, layer uint32, node uint64) error {
	v.path.key("parents")
	if err := v.domains(parents, proofs.TotalParents, "parent labels", poseidonDomain); err != nil {
		return err
	}
	v.path.pop()
	v.path.key("layer_index")
	if layer < 1 || int(layer) > v.s.layers {
		return v.fail(ErrRange, "layer %d, want 1 to %d", layer, v.s.layers)
	}
	v.path.pop()
	v.path.key("node")
	if node >= v.s.nodes {
		return v.fail(ErrRange, "node %d, sector has %d nodes", node, v.s.nodes)
	}
	v.path.pop()
	return nil
}

func (v *validator) domains(ds [][32]byte, want int, what string, kind domainKind) error {
	if len(ds) != want {
		return v.fail(ErrCount, "%d %s, want %d", len(ds), what, want)
	}
	for i := range ds {
		v.path.index(i)
		if err := v.domain(&ds[i], kind); err != nil {
			return err
		}
		v.path.pop()
	}
	return nil
}

func (v *validator) domain(d *[32]byte, kind domainKind) error {
	switch kind {
	case poseidonDomain:
		if !IsCanonicalScalar(d) {
			return v.fail(ErrNotCanonical, "little-endian value is not below r")
		}
	case sha254Domain:
		if !IsSHA254(d) {
			return v.fail(ErrSHA254, "last byte %#02x", d[31])
		}
	}
	return nil
}

// levelPath is one level's inclusion path with its expected length and
// arity.
type levelPath struct {
	name  string
	p     *InclusionPath
	n, ar int
}

// merkle checks a Merkle proof of the given tree shape: the variant, the
// number of path elements per level, hashes per element and index range.
func (v *validator) merkle(m *MerkleProof, t proofs.TreeShape, base, sub, top int, kind domainKind) error {
	v.path.key("data")
	d := &m.Data
	want := "Single"
	switch {
	case t.Top > 0:
		want = "Top"
	case t.Sub > 0:
		want = "Sub"
	}
	got, n := "", 0
	if d.Single != nil {
		got, n = "Single", n+1
	}
	if d.Sub != nil {
		got, n = "Sub", n+1
	}
	if d.Top != nil {
		got, n = "Top", n+1
	}
	if n != 1 {
		return v.fail(ErrVariant, "%d variants set, want exactly one (%s)", n, want)
	}
	if got != want {
		return v.fail(ErrVariant, "%s, but a %s tree's proofs are %s", got, t, want)
	}
	v.path.key(got)
	var root, leaf *[32]byte
	var buf [3]levelPath
	paths := buf[:0]
	switch {
	case d.Single != nil:
		root, leaf = &d.Single.Root, &d.Single.Leaf
		paths = append(paths, levelPath{"path", &d.Single.Path, base, t.Base})
	case d.Sub != nil:
		root, leaf = &d.Sub.Root, &d.Sub.Leaf
		paths = append(paths, levelPath{"base_proof", &d.Sub.BaseProof, base, t.Base}, levelPath{"sub_proof", &d.Sub.SubProof, sub, t.Sub})
	default:
		root, leaf = &d.Top.Root, &d.Top.Leaf
		paths = append(paths, levelPath{"base_proof", &d.Top.BaseProof, base, t.Base}, levelPath{"sub_proof", &d.Top.SubProof, sub, t.Sub}, levelPath{"top_proof", &d.Top.TopProof, top, t.Top})
	}
	// JSON order: Single is root, leaf, path; Sub and Top are paths, root, leaf.
	checkRootLeaf := func() error {
		for _, f := range []struct {
			name string
			d    *[32]byte
		}{{"root", root}, {"leaf", leaf}} {
			v.path.key(f.name)
			if err := v.domain(f.d, kind); err != nil {
				return err
			}
			v.path.pop()
		}
		return nil
	}
	if d.Single != nil {
		if err := checkRootLeaf(); err != nil {
			return err
		}
	}
	for _, ip := range paths {
		v.path.key(ip.name)
		v.path.key("path")
		if len(ip.p.Path) != ip.n {
			return v.fail(ErrCount, "%d path elements, a %s tree of %d nodes has %d", len(ip.p.Path), t, v.s.nodes, ip.n)
		}
		for i := range ip.p.Path {
			v.path.index(i)
			el := &ip.p.Path[i]
			v.path.key("hashes")
			if err := v.domains(el.Hashes, ip.ar-1, "sibling hashes", kind); err != nil {
				return err
			}
			v.path.pop()
			v.path.key("index")
			if el.Index >= uint64(ip.ar) {
				return v.fail(ErrRange, "index %d, arity is %d", el.Index, ip.ar)
			}
			v.path.pop()
			v.path.pop()
		}
		v.path.pop()
		v.path.pop()
	}
	if d.Single == nil {
		if err := checkRootLeaf(); err != nil {
			return err
		}
	}
	v.path.pop()
	v.path.pop()
	return nil
}
