package circuit

import (
	"fmt"
	"math/bits"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/c2flow/c2flow/filecoin/gadgets"
	"github.com/c2flow/c2flow/filecoin/hash"
	"github.com/c2flow/c2flow/filecoin/r1cs"
)

// This file ports storage-proofs-update's EmptySectorUpdateCircuit
// (src/circuit.rs, src/gadgets.rs, src/constants.rs) and the PoR gadget
// it calls (storage-proofs-core gadgets/por.rs por_no_challenge_input):
// the SnapDeals partition circuit, variable for variable and constraint
// for constraint in bellperson's order.

// UpdateShape is one sector size's EmptySectorUpdate partition circuit.
type UpdateShape struct {
	SectorNodes int       // sector size in 32-byte nodes (a power of two)
	Tree        TreeArity // tree R's base, sub and top arities (0: none)
}

// TreeArity is a tree's base, sub-tree and top-tree arities (0: absent).
type TreeArity struct{ Base, Sub, Top int }

// updateTrees is constants.rs validate_tree_r_shape: tree R's shape per
// sector size in nodes.
var updateTrees = map[int]TreeArity{
	1 << 5:  {8, 4, 0}, // 1KiB
	1 << 6:  {8, 0, 0}, // 2KiB
	1 << 7:  {8, 2, 0}, // 4KiB
	1 << 8:  {8, 4, 0}, // 8KiB
	1 << 9:  {8, 8, 0}, // 16KiB
	1 << 10: {8, 8, 2}, // 32KiB
	1 << 18: {8, 0, 0}, // 8MiB
	1 << 19: {8, 2, 0}, // 16MiB
	1 << 24: {8, 0, 0}, // 512MiB
	1 << 30: {8, 8, 0}, // 32GiB
	1 << 31: {8, 8, 2}, // 64GiB
}

// UpdateShapeOf returns the update circuit's shape for a sector of
// sectorBytes bytes, or an error naming the sizes storage-proofs-update
// allows.
func UpdateShapeOf(sectorBytes uint64) (UpdateShape, error) {
	nodes := int(sectorBytes / 32)
	t, ok := updateTrees[nodes]
	if !ok || sectorBytes%32 != 0 {
		return UpdateShape{}, fmt.Errorf("circuit: no empty-sector-update circuit for a %d-byte sector (1KiB to 32KiB, 8MiB, 16MiB, 512MiB, 32GiB, 64GiB): %w", sectorBytes, ErrShape)
	}
	return UpdateShape{SectorNodes: nodes, Tree: t}, nil
}

// Partitions is constants.rs partition_count.
func (s UpdateShape) Partitions() int {
	switch n := s.SectorNodes; {
	case n <= 1<<8:
		return 1
	case n <= 1<<10:
		return 2
	case n <= 1<<19:
		return 4
	default:
		return 16
	}
}

// Challenges is constants.rs challenge_count: challenges per partition.
func (s UpdateShape) Challenges() int {
	if s.SectorNodes <= 1<<19 {
		return 10
	}
	return 86
}

// Hs is constants.rs hs: the h values a proof may select (h_select = 2^i
// selects Hs()[i]), each a number of high bits of a challenge.
func (s UpdateShape) Hs() [6]int {
	if s.SectorNodes <= 1<<10 {
		return [6]int{1, 1, 1, 1, 1, 1}
	}
	return [6]int{7, 8, 9, 10, 11, 12}
}

// HDefault is constants.rs h_default: Hs()[3], 10 for production sizes.
func (s UpdateShape) HDefault() int { return s.Hs()[3] }

// ApexLeaves is constants.rs apex_leaf_count.
func (s UpdateShape) ApexLeaves() int {
	if s.SectorNodes <= 1<<8 {
		return 8
	}
	return 128
}

// ChallengeBits is the bit length of a challenge (a node index).
func (s UpdateShape) ChallengeBits() int { return bits.TrailingZeros(uint(s.SectorNodes)) }

func (s UpdateShape) partitionBits() int { return bits.TrailingZeros(uint(s.Partitions())) }
func (s UpdateShape) apexBits() int      { return bits.TrailingZeros(uint(s.ApexLeaves())) }

// treeR is tree R's shape: levels of each part.
func (s UpdateShape) treeR() treeShape {
	t := treeShape{arity: [3]int{s.Tree.Base, s.Tree.Sub, s.Tree.Top}}
	rest := s.SectorNodes
	for p, a := range []int{s.Tree.Sub, s.Tree.Top} {
		if a > 0 {
			t.lens[p+1] = 1
			rest /= a
		}
	}
	t.lens[0] = bits.TrailingZeros(uint(rest)) / bits.TrailingZeros(uint(s.Tree.Base))
	return t
}

// TreeRPathLen is the number of levels of a tree R path.
func (s UpdateShape) TreeRPathLen() int {
	t := s.treeR()
	return t.lens[0] + t.lens[1] + t.lens[2]
}

// UpdateWitness is the assignment of one partition's update circuit:
// PublicInputs and PrivateInputs of circuit.rs.
type UpdateWitness struct {
	// KAndHSelect packs the partition index k (its low partition bits)
	// and h_select (the next 6 bits, one of them set).
	KAndHSelect                  fr.Element
	CommROld, CommDNew, CommRNew fr.Element
	CommC, RootROld, RootRNew    fr.Element
	ApexLeaves                   []fr.Element
	Challenges                   []UpdateChallenge
}

// UpdateChallenge is one challenge's openings (circuit.rs
// ChallengeProof): the old replica's leaf and its tree R path, the new
// data's leaf and its tree D path (from the leaf to comm_d: one sibling a
// level of the binary SHA254 tree, or tree R's shape in the Poseidon
// variant), and the new replica's leaf and its tree R path. Paths list
// each level's arity-1 siblings, leaf first.
type UpdateChallenge struct {
	LeafROld, LeafDNew, LeafRNew fr.Element
	PathROld, PathRNew, PathDNew [][]fr.Element
}

// BlankUpdateWitness is the all-zero witness of shape s
// (EmptySectorUpdateCompound::blank_circuit), for counting and recording.
func BlankUpdateWitness(s UpdateShape) *UpdateWitness {
	t := s.treeR()
	path := func() [][]fr.Element {
		var p [][]fr.Element
		for part := range 3 {
			for range t.lens[part] {
				p = append(p, make([]fr.Element, t.arity[part]-1))
			}
		}
		return p
	}
	pathD := func() [][]fr.Element {
		p := make([][]fr.Element, s.ChallengeBits())
		for i := range p {
			p[i] = make([]fr.Element, 1)
		}
		return p
	}
	w := &UpdateWitness{ApexLeaves: make([]fr.Element, s.ApexLeaves()), Challenges: make([]UpdateChallenge, s.Challenges())}
	for i := range w.Challenges {
		w.Challenges[i] = UpdateChallenge{PathROld: path(), PathRNew: path(), PathDNew: pathD()}
	}
	return w
}

// update holds what synthesis needs besides the values.
type update struct {
	s        UpdateShape
	treeR    treeShape
	poseidon poseidonTree
	rand     *gadgets.PoseidonConstants // POSEIDON_CONSTANTS_GEN_RANDOMNESS
}

func newUpdate(s UpdateShape) (*update, error) {
	if _, err := UpdateShapeOf(uint64(s.SectorNodes) * 32); err != nil {
		return nil, err
	}
	if updateTrees[s.SectorNodes] != s.Tree {
		return nil, fmt.Errorf("circuit: update tree R %v for %d nodes, want %v: %w", s.Tree, s.SectorNodes, updateTrees[s.SectorNodes], ErrShape)
	}
	u := &update{s: s, treeR: s.treeR(), poseidon: poseidonTree{consts: map[int]*gadgets.PoseidonConstants{}}}
	for _, a := range []int{2, s.Tree.Base, s.Tree.Sub, s.Tree.Top} {
		if a == 0 || u.poseidon.consts[a] != nil {
			continue
		}
		pc, err := gadgets.PoseidonConstantsFor(a)
		if err != nil {
			return nil, fmt.Errorf("circuit: Poseidon constants of arity %d: %w", a, err)
		}
		u.poseidon.consts[a] = pc
	}
	hc, err := hash.ConstantsFor(2, hash.Standard)
	if err != nil {
		return nil, err
	}
	tag, err := hash.CustomTag(1) // HASH_TYPE_GEN_RANDOMNESS: Custom(Arbitrary(1))
	if err != nil {
		return nil, err
	}
	if u.rand, err = gadgets.PoseidonConstantsWithTag(hc, tag); err != nil {
		return nil, err
	}
	return u, nil
}

// check verifies that w has the layout of the shape.
func (u *update) check(w *UpdateWitness) error {
	s := u.s
	if len(w.ApexLeaves) != s.ApexLeaves() {
		return fmt.Errorf("%d apex leaves, want %d: %w", len(w.ApexLeaves), s.ApexLeaves(), ErrWitness)
	}
	if len(w.Challenges) != s.Challenges() {
		return fmt.Errorf("%d challenge proofs, want %d: %w", len(w.Challenges), s.Challenges(), ErrWitness)
	}
	checkR := func(i int, name string, p [][]fr.Element) error {
		lvl := 0
		for part := range 3 {
			for range u.treeR.lens[part] {
				if lvl >= len(p) || len(p[lvl]) != u.treeR.arity[part]-1 {
					return fmt.Errorf("challenge %d: %s: level %d does not have %d siblings: %w", i, name, lvl, u.treeR.arity[part]-1, ErrWitness)
				}
				lvl++
			}
		}
		if lvl != len(p) {
			return fmt.Errorf("challenge %d: %s of %d levels, want %d: %w", i, name, len(p), lvl, ErrWitness)
		}
		return nil
	}
	pb := s.partitionBits()
	for i := range w.Challenges {
		c := &w.Challenges[i]
		if err := checkR(i, "path_r_old", c.PathROld); err != nil {
			return err
		}
		if err := checkR(i, "path_r_new", c.PathRNew); err != nil {
			return err
		}
		if len(c.PathDNew) != s.ChallengeBits() {
			return fmt.Errorf("challenge %d: path_d_new of %d levels, want %d: %w", i, len(c.PathDNew), s.ChallengeBits(), ErrWitness)
		}
		for l, sib := range c.PathDNew {
			if len(sib) != 1 {
				return fmt.Errorf("challenge %d: path_d_new level %d has %d siblings, want 1: %w", i, l, len(sib), ErrWitness)
			}
		}
		// Every challenge of a partition ends in the partition's path.
		for l := s.ChallengeBits() - pb; l < s.ChallengeBits(); l++ {
			if c.PathDNew[l][0] != w.Challenges[0].PathDNew[l][0] {
				return fmt.Errorf("challenge %d: path_d_new level %d is not the partition path challenge 0 has: %w", i, l, ErrWitness)
			}
		}
	}
	return nil
}

// SynthesizeUpdate synthesizes one partition's EmptySectorUpdateCircuit
// of shape s into cs, as circuit.rs synthesize does with bellperson.
//
// w is the assignment; nil synthesizes the blank circuit with zero
// values. A w that does not fit s is an error wrapping ErrWitness.
//
// The order: k_and_h_select (aux, input) and its partition and h_select
// bits, the partition number packed; comm_r_old, comm_d_new, comm_r_new
// (each aux, input); phi = H(comm_d_new, comm_r_old); comm_c, root_r_old,
// root_r_new, the apex leaves and the partition path; comm_r_old and
// comm_r_new from comm_c and the roots; the apex tree and its inclusion
// in comm_d_new; the challenge bits from H(comm_r_new, digest index); then
// per challenge: the high bits h selects, rho = H(phi, high), the leaves,
// label_r_new = label_r_old + label_d_new·rho, the tree R old and new
// inclusions, the apex leaf the challenge selects and the tree D path to
// it.
func SynthesizeUpdate(cs r1cs.System, s UpdateShape, w *UpdateWitness) error {
	u, err := newUpdate(s)
	if err != nil {
		return err
	}
	if w == nil {
		w = BlankUpdateWitness(s)
	} else if err := u.check(w); err != nil {
		return fmt.Errorf("circuit: synthesize update %d nodes: %w", s.SectorNodes, err)
	}
	if err := u.synthesize(cs, w); err != nil {
		return fmt.Errorf("circuit: synthesize update %d nodes: %w", s.SectorNodes, err)
	}
	return nil
}

func (u *update) synthesize(cs r1cs.System, w *UpdateWitness) error {
	s := u.s
	pb, hsLen := s.partitionBits(), len(s.Hs())
	cbits := s.ChallengeBits()

	// k_and_h_select and its bits.
	cs.Push("k_and_h_select")
	khs := gadgets.AllocNum(cs, w.KAndHSelect)
	cs.Pop()
	cs.Push("k_and_h_select (public input)")
	khs.Inputize(cs)
	cs.Pop()
	khsBitsAll := fieldBits(w.KAndHSelect)
	khsBits := make([]gadgets.AllocatedBit, pb+hsLen)
	for i := range khsBits {
		cs.PushIndexed("k_and_h_select_bit", i)
		khsBits[i] = gadgets.AllocBit(cs, khsBitsAll[i])
		cs.Pop()
	}
	enforceDecomp(cs, "k_and_h_select binary decomp", khsBits, khs)
	partitionBits, hSelectBits := khsBits[:pb], khsBits[pb:]
	cs.Push("pack partition bits")
	partition := gadgets.PackBits(cs, booleans(partitionBits))
	cs.Pop()

	commROld, commDNew, commRNew, phi, err := u.commitments(cs, w.CommROld, w.CommDNew, w.CommRNew)
	if err != nil {
		return err
	}

	alloc := func(name string, v fr.Element) gadgets.AllocatedNum { return allocNamed(cs, name, v) }
	commC := alloc("comm_c", w.CommC)
	rootROld := alloc("root_r_old", w.RootROld)
	rootRNew := alloc("root_r_new", w.RootRNew)
	apex := make([]gadgets.AllocatedNum, len(w.ApexLeaves))
	for i, v := range w.ApexLeaves {
		apex[i] = alloc(fmt.Sprintf("apex_leaf_%d", i), v)
	}
	partitionPath := make([][]gadgets.AllocatedNum, pb)
	for i := range pb {
		partitionPath[i] = []gadgets.AllocatedNum{alloc(fmt.Sprintf("partition_path_sibling_%d", i), w.Challenges[0].PathDNew[cbits-pb+i][0])}
	}

	if err := u.commRs(cs, commC, rootROld, rootRNew, commROld, commRNew); err != nil {
		return err
	}

	// The apex tree and its path to comm_d_new.
	cs.Push("apex_gadget")
	if err := u.apexPoR(cs, apex, partitionBits, partitionPath, commDNew); err != nil {
		cs.Pop()
		return err
	}
	cs.Pop()

	cs.Push("gen_challenge_bits")
	gen, err := u.genChallengeBits(cs, commRNew, partition, s.Challenges(), cbits-pb)
	cs.Pop()
	if err != nil {
		return err
	}

	treeD := treeShape{arity: [3]int{2, 0, 0}}
	for ci, cb := range gen {
		c := &w.Challenges[ci]
		cBits := append(append([]gadgets.AllocatedBit(nil), cb...), partitionBits...)

		leafROld, leafDNew, leafRNew, err := u.encodedLeaves(cs, ci, cBits, hSelectBits, phi, c)
		if err != nil {
			return err
		}
		for _, t := range []treeOpening{{"r_old", c.PathROld, leafROld, rootROld}, {"r_new", c.PathRNew, leafRNew, rootRNew}} {
			if err := u.openTreeR(cs, ci, cBits, t); err != nil {
				return err
			}
		}

		toApex := cbits - pb - s.apexBits()
		cs.Push(fmt.Sprintf("select_apex_leaf (c_index=%d)", ci))
		apexLeaf := selectNum(cs, apex, booleans(cBits[toApex:toApex+s.apexBits()]))
		cs.Pop()
		pathD := make([][]gadgets.AllocatedNum, toApex)
		for l := range toApex {
			pathD[l] = []gadgets.AllocatedNum{alloc(fmt.Sprintf("path_to_apex_leaf sibling (c_index=%d, tree_row=%d)", ci, l), c.PathDNew[l][0])}
		}
		treeD.lens[0] = toApex
		cs.Push(fmt.Sprintf("por to_apex_leaf (c_index=%d)", ci))
		err = porNoChallengeInput(cs, sha254Tree{}, treeD, cBits[:toApex], leafDNew, pathD, apexLeaf)
		cs.Pop()
		if err != nil {
			return err
		}
	}
	return nil
}

// commitments allocates the three public commitments (each aux, then
// input) and phi = H(comm_d_new, comm_r_old).
func (u *update) commitments(cs r1cs.System, rOld, dNew, rNew fr.Element) (commROld, commDNew, commRNew, phi gadgets.AllocatedNum, err error) {
	input := func(name string, v fr.Element) gadgets.AllocatedNum {
		n := allocNamed(cs, name, v)
		cs.Push(name + "_input")
		n.Inputize(cs)
		cs.Pop()
		return n
	}
	commROld = input("comm_r_old", rOld)
	commDNew = input("comm_d_new", dNew)
	commRNew = input("comm_r_new", rNew)
	cs.Push("phi")
	phi, err = gadgets.PoseidonHash(cs, []gadgets.AllocatedNum{commDNew, commROld}, u.rand)
	cs.Pop()
	if err != nil {
		err = fmt.Errorf("phi: %w", err)
	}
	return
}

// commRs enforces comm_r = H(comm_c || root_r), old and new.
func (u *update) commRs(cs r1cs.System, commC, rootROld, rootRNew, commROld, commRNew gadgets.AllocatedNum) error {
	for _, r := range []struct {
		name       string
		root, comm gadgets.AllocatedNum
	}{{"comm_r_old", rootROld, commROld}, {"comm_r_new", rootRNew, commRNew}} {
		cs.Push(r.name + "_calc")
		calc, err := gadgets.PoseidonHash(cs, []gadgets.AllocatedNum{commC, r.root}, u.poseidon.consts[2])
		cs.Pop()
		if err != nil {
			return fmt.Errorf("%s: %w", r.name, err)
		}
		equal(cs, "enforce "+r.name+"_calc == "+r.name, calc, r.comm)
	}
	return nil
}

// encodedLeaves is a challenge's rho (from the high bits h_select picks)
// and its leaves: the old replica's and the new data's, allocated, and
// the new replica's, computed from them.
func (u *update) encodedLeaves(cs r1cs.System, ci int, cBits, hSelect []gadgets.AllocatedBit, phi gadgets.AllocatedNum, c *UpdateChallenge) (rOld, dNew, rNew gadgets.AllocatedNum, err error) {
	hs := u.s.Hs()
	cs.Push(fmt.Sprintf("get_challenge_high_bits (c_index=%d)", ci))
	high := challengeHighBits(cs, cBits, hSelect, hs[:])
	cs.Pop()
	cs.Push(fmt.Sprintf("rho (c_index=%d)", ci))
	rho, err := gadgets.PoseidonHash(cs, []gadgets.AllocatedNum{phi, high}, u.rand)
	cs.Pop()
	if err != nil {
		return rOld, dNew, rNew, fmt.Errorf("rho %d: %w", ci, err)
	}
	rOld = allocNamed(cs, fmt.Sprintf("leaf_r_old (c_index=%d)", ci), c.LeafROld)
	dNew = allocNamed(cs, fmt.Sprintf("leaf_d_new (c_index=%d)", ci), c.LeafDNew)
	cs.Push(fmt.Sprintf("leaf_r_new (c_index=%d)", ci))
	rNew = labelRNew(cs, rOld, dNew, rho)
	cs.Pop()
	return rOld, dNew, rNew, nil
}

// treeOpening is a leaf opened under a root by a path of tree R's shape.
type treeOpening struct {
	name       string // r_old, r_new, d_new
	path       [][]fr.Element
	leaf, root gadgets.AllocatedNum
}

// openTreeR allocates the opening's path and enforces it by the
// challenge's bits.
func (u *update) openTreeR(cs r1cs.System, ci int, cBits []gadgets.AllocatedBit, t treeOpening) error {
	p := allocPath(cs, "path_"+t.name, ci, t.path)
	cs.Push(fmt.Sprintf("por tree_%s (c_index=%d)", t.name, ci))
	defer cs.Pop()
	return porNoChallengeInput(cs, u.poseidon, u.treeR, cBits, t.leaf, p, t.root)
}

// allocNamed allocates v under namespace name.
func allocNamed(cs r1cs.System, name string, v fr.Element) gadgets.AllocatedNum {
	cs.Push(name)
	defer cs.Pop()
	return gadgets.AllocNum(cs, v)
}

// apexPoR is gadgets.rs apex_por: the apex tree over the leaves (SHA254
// pairs, row by row) and its root's path to comm_d.
func (u *update) apexPoR(cs r1cs.System, leaves []gadgets.AllocatedNum, partitionBits []gadgets.AllocatedBit, path [][]gadgets.AllocatedNum, commD gadgets.AllocatedNum) error {
	row := leaves
	for r := 0; len(row) > 1; r++ {
		next := make([]gadgets.AllocatedNum, len(row)/2)
		for i := range next {
			cs.Push(fmt.Sprintf("apex_tree generation hash (tree_row=%d, siblings=%d)", r, i))
			h, err := sha254Tree{}.hashNode(cs, row[2*i:2*i+2])
			cs.Pop()
			if err != nil {
				return err
			}
			next[i] = h
		}
		row = next
	}
	cs.Push("partition-tree por")
	defer cs.Pop()
	return porNoChallengeInput(cs, sha254Tree{}, treeShape{arity: [3]int{2, 0, 0}, lens: [3]int{len(path), 0, 0}}, partitionBits, row[0], path, commD)
}

// genChallengeBits is gadgets.rs gen_challenge_bits: for each digest j,
// digest_index = k·digests_per_partition + j (enforced), digest =
// H(comm_r_new, digest_index), its 255 bits (enforced to pack to it), cut
// into challenges of perChallenge bits, 254/perChallenge per digest.
func (u *update) genChallengeBits(cs r1cs.System, commRNew, partition gadgets.AllocatedNum, challenges, perChallenge int) ([][]gadgets.AllocatedBit, error) {
	perDigest := gadgets.FieldCapacity / perChallenge
	digests := (challenges + perDigest - 1) / perDigest
	out := make([][]gadgets.AllocatedBit, 0, challenges)
	var dpp fr.Element
	dpp.SetUint64(uint64(digests))
	for j := range digests {
		var jf, v fr.Element
		jf.SetUint64(uint64(j))
		v.Mul(&partition.Value, &dpp).Add(&v, &jf)
		cs.Push(fmt.Sprintf("digest_index_%d", j))
		idx := gadgets.AllocNum(cs, v)
		cs.Pop()
		a, b, c := cs.Scratch()
		cs.Enforce(fmt.Sprintf("digest_index_%d == k * digests_per_partition + %d", j, j),
			a.AddCoeff(dpp, partition.Var).AddCoeff(jf, r1cs.One), b.Add(r1cs.One), c.Add(idx.Var))
		cs.Push(fmt.Sprintf("digest_%d", j))
		d, err := gadgets.PoseidonHash(cs, []gadgets.AllocatedNum{commRNew, idx}, u.rand)
		cs.Pop()
		if err != nil {
			return nil, fmt.Errorf("challenge digest %d: %w", j, err)
		}
		cs.Push(fmt.Sprintf("digest_%d_bits", j))
		db := gadgets.FieldIntoAllocatedBitsLE(cs, d.Value)
		enforceDecomp(cs, "binary decomp", db, d)
		cs.Pop()
		take := perDigest
		if j == digests-1 {
			take = challenges - len(out)
		}
		for i := range take {
			out = append(out, db[i*perChallenge:(i+1)*perChallenge])
		}
	}
	return out, nil
}

// challengeHighBits is gadgets.rs get_challenge_high_bits: for each h of
// hs, the h high bits of the challenge packed and scaled by its h_select
// bit, then their sum (the one selected).
func challengeHighBits(cs r1cs.System, cBits, hSelect []gadgets.AllocatedBit, hs []int) gadgets.AllocatedNum {
	n := len(cBits)
	scaled := make([]gadgets.AllocatedNum, len(hs))
	var sum fr.Element
	for k, h := range hs {
		cs.Push(fmt.Sprintf("c_high (h=%d, k=%d)", h, k))
		high := gadgets.PackBits(cs, booleans(cBits[n-h:]))
		cs.Pop()
		var v fr.Element
		if hSelect[k].Value {
			v = high.Value
		}
		cs.Push(fmt.Sprintf("c_high_or_zero (h=%d, k=%d)", h, k))
		scaled[k] = gadgets.AllocNum(cs, v)
		cs.Pop()
		a, b, c := cs.Scratch()
		cs.Enforce(fmt.Sprintf("c_high_or_zero == c_high * h_select_bit (h=%d, k=%d)", h, k), a.Add(high.Var), b.Add(hSelect[k].Var), c.Add(scaled[k].Var))
		sum.Add(&sum, &v)
	}
	cs.Push("c_high_selected")
	sel := gadgets.AllocNum(cs, sum)
	cs.Pop()
	a, b, c := cs.Scratch()
	for _, s := range scaled {
		a = a.Add(s.Var)
	}
	cs.Enforce("c_high_selected == dot(c_highs, h_select_bits)", a, b.Add(r1cs.One), c.Add(sel.Var))
	return sel
}

// labelRNew is gadgets.rs label_r_new: label_r_old + label_d_new·rho.
func labelRNew(cs r1cs.System, old, data, rho gadgets.AllocatedNum) gadgets.AllocatedNum {
	cs.Push("label_d_new * rho")
	dRho := data.Mul(cs, rho)
	cs.Pop()
	return addNamed(cs, "label_r_new", "label_r_new == label_r_old + label_d_new * rho", old, dRho)
}

// allocPath allocates a tree R path's siblings, level by level.
func allocPath(cs r1cs.System, name string, ci int, p [][]fr.Element) [][]gadgets.AllocatedNum {
	out := make([][]gadgets.AllocatedNum, len(p))
	for row, sibs := range p {
		out[row] = make([]gadgets.AllocatedNum, len(sibs))
		for i, v := range sibs {
			out[row][i] = allocNamed(cs, fmt.Sprintf("%s sibling (c_index=%d, tree_row=%d, sibling_index=%d)", name, ci, row, i), v)
		}
	}
	return out
}

// porNoChallengeInput is storage-proofs-core por_no_challenge_input: the
// challenge's bits (least significant first) give each level's insertion
// index; each level inserts the current node among its siblings ("merkle
// proof insert") and hashes ("merkle proof hash"); the computed root must
// be root. No public input.
func porNoChallengeInput(cs r1cs.System, h treeHasher, t treeShape, cBits []gadgets.AllocatedBit, leaf gadgets.AllocatedNum, path [][]gadgets.AllocatedNum, root gadgets.AllocatedNum) error {
	cur := leaf
	lvl, used := 0, 0
	for part := range 3 {
		arity := t.arity[part]
		nb := bits.TrailingZeros(uint(arity))
		for range t.lens[part] {
			if lvl >= len(path) || used+nb > len(cBits) {
				return fmt.Errorf("por: %d path levels and %d challenge bits do not fit the tree: %w", len(path), len(cBits), ErrWitness)
			}
			idx := booleans(cBits[used : used+nb])
			used += nb
			cs.Push(fmt.Sprintf("merkle proof insert (height=%d)", lvl))
			ins, err := insert(cs, cur, idx, path[lvl])
			cs.Pop()
			if err != nil {
				return err
			}
			cs.Push(fmt.Sprintf("merkle proof hash (height=%d)", lvl))
			cur, err = h.hashNode(cs, ins)
			cs.Pop()
			if err != nil {
				return err
			}
			lvl++
		}
	}
	if used != len(cBits) || lvl != len(path) {
		return fmt.Errorf("por: %d of %d challenge bits and %d of %d levels used: %w", used, len(cBits), lvl, len(path), ErrWitness)
	}
	a, b, c := cs.Scratch()
	cs.Enforce("calculated root == provided root", a.Add(cur.Var), b.Add(r1cs.One), c.Add(root.Var))
	return nil
}

// enforceDecomp enforces Σ 2^i·bit_i · 1 = num.
func enforceDecomp(cs r1cs.System, name string, bs []gadgets.AllocatedBit, num gadgets.AllocatedNum) {
	a, b, c := cs.Scratch()
	for i, bit := range bs {
		a = a.AddCoeff(gadgets.Pow2(i), bit.Var)
	}
	cs.Enforce(name, a, b.Add(r1cs.One), c.Add(num.Var))
}

// booleans views allocated bits as Booleans.
func booleans(bs []gadgets.AllocatedBit) []gadgets.Boolean {
	out := make([]gadgets.Boolean, len(bs))
	for i, b := range bs {
		out[i] = gadgets.Is(b)
	}
	return out
}

// fieldBits is the 255 bits of v, least significant first.
func fieldBits(v fr.Element) []bool {
	b := v.Bits() // regular form, little-endian words
	out := make([]bool, gadgets.FieldBits)
	for i := range out {
		out[i] = b[i/64]>>(i%64)&1 == 1
	}
	return out
}
