package update

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/c2flow/c2flow/filecoin/circuit"
	"github.com/c2flow/c2flow/filecoin/hash"
	"github.com/c2flow/c2flow/filecoin/merkle"
)

// PartitionProof is vanilla.rs PartitionProof, one partition's vanilla
// proof: comm_c, the partition's apex leaves, and for each challenge the
// openings of the old replica (tree R), the new data (tree D) and the new
// replica (tree R).
type PartitionProof struct {
	CommC      merkle.Node
	ApexLeaves []merkle.Node
	Challenges []ChallengeProof
}

// ChallengeProof is vanilla.rs ChallengeProof.
type ChallengeProof struct {
	ROld, DNew, RNew *merkle.Proof
}

// ErrBadVanilla is wrapped by every error of a vanilla proof that does
// not decode or does not verify: the proof's fault.
var ErrBadVanilla = errors.New("bad update vanilla proof")

// DecodePartitionProof decodes a PartitionProof from its bincode bytes
// (bincode::serialize, fields in vanilla.rs order), strictly: no byte may
// be left over.
func DecodePartitionProof(b []byte) (*PartitionProof, error) {
	r := merkle.NewBincodeReader(b)
	p := &PartitionProof{}
	var err error
	if p.CommC, err = r.Node("comm_c"); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadVanilla, err)
	}
	if p.ApexLeaves, err = r.Nodes("apex_leafs"); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadVanilla, err)
	}
	n, err := r.Len("challenge_proofs", 3*4)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadVanilla, err)
	}
	p.Challenges = make([]ChallengeProof, n)
	for i := range p.Challenges {
		c := &p.Challenges[i]
		for _, t := range []struct {
			name string
			dst  **merkle.Proof
		}{{"proof_r_old", &c.ROld}, {"proof_d_new", &c.DNew}, {"proof_r_new", &c.RNew}} {
			if *t.dst, err = r.Proof(t.name); err != nil {
				return nil, fmt.Errorf("%w: challenge %d: %w", ErrBadVanilla, i, err)
			}
		}
	}
	if r.Rest() != 0 {
		return nil, fmt.Errorf("%w: %d bytes after the partition proof", ErrBadVanilla, r.Rest())
	}
	return p, nil
}

// Bincode is p's bincode encoding, as rust-fil-proofs writes it.
func (p *PartitionProof) Bincode() []byte {
	b := append([]byte(nil), p.CommC[:]...)
	b = merkle.AppendNodes(b, p.ApexLeaves)
	b = appendU64(b, uint64(len(p.Challenges)))
	for _, c := range p.Challenges {
		b = c.ROld.AppendBincode(b)
		b = c.DNew.AppendBincode(b)
		b = c.RNew.AppendBincode(b)
	}
	return b
}

func appendU64(b []byte, v uint64) []byte {
	return append(b, byte(v), byte(v>>8), byte(v>>16), byte(v>>24), byte(v>>32), byte(v>>40), byte(v>>48), byte(v>>56))
}

// DecodeCurioVanilla decodes the snap vanilla proofs as Curio stores them
// (snap-vproof.json: a JSON array of base64 strings, each a partition's
// bincode PartitionProof, what filecoin-ffi's
// GenerateUpdateVanillaProofs returns), in partition order.
func DecodeCurioVanilla(b []byte) ([]*PartitionProof, error) {
	var raw [][]byte
	if err := json.Unmarshal(b, &raw); err != nil {
		return nil, fmt.Errorf("%w: snap vanilla JSON: %w", ErrBadVanilla, err)
	}
	out := make([]*PartitionProof, len(raw))
	for k, r := range raw {
		p, err := DecodePartitionProof(r)
		if err != nil {
			return nil, fmt.Errorf("partition %d: %w", k, err)
		}
		out[k] = p
	}
	return out, nil
}

// EncodeCurioVanilla writes proofs as Curio stores them.
func EncodeCurioVanilla(proofs []*PartitionProof) ([]byte, error) {
	raw := make([][]byte, len(proofs))
	for k, p := range proofs {
		raw[k] = p.Bincode()
	}
	return json.Marshal(raw)
}

// Public is the public data an update proof is checked against.
type Public struct {
	CommROld, CommDNew, CommRNew fr.Element
	H                            int
}

// Verify checks partition k's vanilla proof natively, as vanilla.rs
// verify (and more strictly: every opening is validated for its
// challenge, and each apex sibling must be the apex tree's): the roots
// give comm_r old and new with comm_c, and for each challenge the three
// openings are of the challenged node under their roots, the new label is
// the encoding of the old label and the new data, and the tree D path
// meets the apex tree. The error names the first failure by partition,
// challenge and tree, wrapping ErrBadVanilla.
func (p *PartitionProof) Verify(s circuit.UpdateShape, k int, pub Public) error {
	fail := func(format string, a ...any) error {
		return fmt.Errorf("partition %d: %s: %w", k, fmt.Sprintf(format, a...), ErrBadVanilla)
	}
	if k < 0 || k >= s.Partitions() {
		return fail("partition index out of %d", s.Partitions())
	}
	if _, err := HSelect(s, pub.H); err != nil {
		return fail("%v", err)
	}
	if len(p.ApexLeaves) != s.ApexLeaves() {
		return fail("%d apex leaves, want %d", len(p.ApexLeaves), s.ApexLeaves())
	}
	if len(p.Challenges) != s.Challenges() {
		return fail("%d challenge proofs, want %d", len(p.Challenges), s.Challenges())
	}
	apex := [][]merkle.Node{p.ApexLeaves}
	for row := p.ApexLeaves; len(row) > 1; {
		next := make([]merkle.Node, len(row)/2)
		for i := range next {
			next[i] = merkle.Node(hash.Sha254Node(row[2*i], row[2*i+1]))
		}
		apex = append(apex, next)
		row = next
	}
	rootROld, rootRNew := p.Challenges[0].ROld.Root, p.Challenges[0].RNew.Root
	for _, c := range []struct {
		name string
		root merkle.Node
		want fr.Element
	}{{"comm_r_old", rootROld, pub.CommROld}, {"comm_r_new", rootRNew, pub.CommRNew}} {
		calc, err := hash.Hash2(hash.Domain(p.CommC), hash.Domain(c.root))
		if err != nil {
			return fail("%s: %v", c.name, err)
		}
		if hash.Domain(hash.ElementToLE(c.want)) != calc {
			return fail("%s: H(comm_c, root) is %x, not the public %s", c.name, calc, c.name)
		}
	}
	commD := merkle.Node(hash.ElementToLE(pub.CommDNew))
	phi, err := Phi(pub.CommDNew, pub.CommROld)
	if err != nil {
		return err
	}
	cs, err := Challenges(s, pub.CommRNew, k)
	if err != nil {
		return err
	}
	treeR := merkle.Shape{Base: s.Tree.Base, Sub: s.Tree.Sub, Top: s.Tree.Top}
	nodes := uint64(s.SectorNodes)
	apexAt := s.ChallengeBits() - bitLen(s.Partitions()) - bitLen(s.ApexLeaves())
	for i, c := range cs {
		ch := &p.Challenges[i]
		for _, t := range []struct {
			name  string
			proof *merkle.Proof
			h     merkle.Hasher
			shape merkle.Shape
			root  merkle.Node
		}{
			{"tree R old", ch.ROld, merkle.PoseidonHasher{}, treeR, rootROld},
			{"tree D new", ch.DNew, merkle.SHA254Hasher{}, merkle.TreeDShape(), commD},
			{"tree R new", ch.RNew, merkle.PoseidonHasher{}, treeR, rootRNew},
		} {
			if t.proof == nil {
				return fail("challenge %d (node %d): %s: no opening", i, c, t.name)
			}
			if t.proof.Root != t.root {
				return fail("challenge %d (node %d): %s: root %x, want %x", i, c, t.name, t.proof.Root, t.root)
			}
			if err := t.proof.ValidateInTree(t.h, t.shape, nodes, uint64(c)); err != nil {
				return fail("challenge %d (node %d): %s: %v", i, c, t.name, err)
			}
		}
		old, err1 := hash.ElementFromLE(ch.ROld.Leaf)
		data, err2 := hash.ElementFromLE(ch.DNew.Leaf)
		if err := errors.Join(err1, err2); err != nil {
			return fail("challenge %d (node %d): leaf: %v", i, c, err)
		}
		rho, err := Rho(phi, High(s, c, pub.H))
		if err != nil {
			return err
		}
		if want := merkle.Node(hash.ElementToLE(EncodeNode(old, data, rho))); ch.RNew.Leaf != want {
			return fail("challenge %d (node %d): tree R new: leaf %x is not the encoding of the old label and the new data (%x)", i, c, ch.RNew.Leaf, want)
		}
		path := ch.DNew.Path()
		for r := range len(apex) - 1 {
			idx := (uint64(c) >> (apexAt + r)) % uint64(len(apex[r])) // position within this partition's apex row
			if sib := path[apexAt+r].Hashes[0]; sib != apex[r][idx^1] {
				return fail("challenge %d (node %d): tree D new: path level %d sibling %x is not the apex tree's", i, c, apexAt+r, sib)
			}
		}
	}
	return nil
}

func bitLen(n int) int {
	b := 0
	for 1<<b < n {
		b++
	}
	return b
}

// Witness is partition k's circuit witness from its vanilla proof and
// the public data (circuit.rs PrivateInputs::new): the proof should have
// been verified (Verify); a proof that does not fit the shape is an error.
func (p *PartitionProof) Witness(s circuit.UpdateShape, k int, pub Public) (*circuit.UpdateWitness, error) {
	in, err := PublicInputs(s, k, pub.H, pub.CommROld, pub.CommDNew, pub.CommRNew)
	if err != nil {
		return nil, err
	}
	if len(p.Challenges) == 0 {
		return nil, fmt.Errorf("partition %d: no challenge proofs: %w", k, ErrBadVanilla)
	}
	el := func(n merkle.Node, what string) (fr.Element, error) {
		e, err := hash.ElementFromLE(n)
		if err != nil {
			return e, fmt.Errorf("partition %d: %s: %w: %w", k, what, ErrBadVanilla, err)
		}
		return e, nil
	}
	w := &circuit.UpdateWitness{KAndHSelect: in[0], CommROld: pub.CommROld, CommDNew: pub.CommDNew, CommRNew: pub.CommRNew}
	if w.CommC, err = el(p.CommC, "comm_c"); err != nil {
		return nil, err
	}
	if w.RootROld, err = el(p.Challenges[0].ROld.Root, "root_r_old"); err != nil {
		return nil, err
	}
	if w.RootRNew, err = el(p.Challenges[0].RNew.Root, "root_r_new"); err != nil {
		return nil, err
	}
	for _, a := range p.ApexLeaves {
		e, err := el(a, "apex leaf")
		if err != nil {
			return nil, err
		}
		w.ApexLeaves = append(w.ApexLeaves, e)
	}
	for i, c := range p.Challenges {
		var ch circuit.UpdateChallenge
		for _, t := range []struct {
			proof *merkle.Proof
			leaf  *fr.Element
			path  *[][]fr.Element
		}{{c.ROld, &ch.LeafROld, &ch.PathROld}, {c.DNew, &ch.LeafDNew, &ch.PathDNew}, {c.RNew, &ch.LeafRNew, &ch.PathRNew}} {
			if t.proof == nil {
				return nil, fmt.Errorf("partition %d: challenge %d: no opening: %w", k, i, ErrBadVanilla)
			}
			if *t.leaf, err = el(t.proof.Leaf, "leaf"); err != nil {
				return nil, err
			}
			for _, e := range t.proof.Path() {
				sibs := make([]fr.Element, len(e.Hashes))
				for j, h := range e.Hashes {
					if sibs[j], err = el(h, "path"); err != nil {
						return nil, err
					}
				}
				*t.path = append(*t.path, sibs)
			}
		}
		w.Challenges = append(w.Challenges, ch)
	}
	return w, nil
}
