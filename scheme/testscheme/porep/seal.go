package porep

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"sort"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
)

// SectorInfo is the identity of a sector and the randomness it was sealed
// and challenged with.
type SectorInfo struct {
	SectorID uint64
	ProverID [32]byte
	Ticket   [32]byte // sealing randomness (PreCommit)
	Seed     [32]byte // interactive randomness (the challenges of Commit)
}

// Sector is a sealed test sector: commitments plus what is needed to open
// them at any challenged node.
type Sector struct {
	Profile Profile
	SectorInfo
	ReplicaID fr.Element
	CommD     fr.Element
	CommC     fr.Element
	CommRLast fr.Element
	CommR     fr.Element

	h            *Hasher
	dTree, cTree Tree
	rTree        Tree
	label        func(layer int, node uint64) fr.Element

	// corrupt, when set (tests), alters labels as they are made: a faulty
	// sealer whose commitments are consistent with wrong labels.
	corrupt func(layer int, node uint64, label *fr.Element)
}

// Seal seals a sector of the profile. Dense profiles label every node of
// every layer over pseudo-random data; sparse profiles model a
// committed-capacity sector (all-zero data, so comm_d is the zero tree's
// root) and materialize only the challenged nodes and their parents, which
// is why sealing a sparse sector needs the seed up front.
func Seal(p Profile, info SectorInfo) (*Sector, error) {
	if p.Depth < 2 || p.Layers < 1 || p.Partitions < 1 || p.Challenges < 1 {
		return nil, fmt.Errorf("seal: profile %q is malformed", p.Name)
	}
	return seal(p, info, nil)
}

func seal(p Profile, info SectorInfo, corrupt func(int, uint64, *fr.Element)) (*Sector, error) {
	s := &Sector{Profile: p, SectorInfo: info, h: NewHasher(), corrupt: corrupt}
	if p.Sparse {
		s.sealSparse()
	} else {
		s.sealDense()
	}
	s.CommC = s.cTree.Root()
	s.CommRLast = s.rTree.Root()
	s.CommR = s.h.CommR(s.CommC, s.CommRLast)
	return s, nil
}

func (s *Sector) dataSeed() [32]byte {
	h := sha256.New()
	h.Write([]byte("c2flow/data"))
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], s.SectorID)
	h.Write(b[:])
	h.Write(s.ProverID[:])
	h.Write(s.Ticket[:])
	var out [32]byte
	copy(out[:], h.Sum(nil))
	return out
}

func (s *Sector) sealDense() {
	p, h, n := s.Profile, s.h, s.Profile.Nodes()
	seed := s.dataSeed()
	data := make([]fr.Element, n)
	for i := range data {
		data[i] = DeriveElement(seed, "data", 0, uint64(i))
	}
	s.dTree = NewDenseTree(h, data)
	s.CommD = s.dTree.Root()
	s.ReplicaID = ReplicaID(s.ProverID, s.SectorID, s.Ticket, s.CommD)

	labels := make([][]fr.Element, p.Layers+1) // labels[0] unused: layers count from 1
	drgL := make([]fr.Element, DRGParents)
	expL := make([]fr.Element, ExpanderParents)
	for l := 1; l <= p.Layers; l++ {
		labels[l] = make([]fr.Element, n)
		labels[l][0] = h.Label(s.ReplicaID, l, 0, nil, nil)
		for i := uint64(1); i < n; i++ {
			drg, exp := p.Parents(i)
			for k, q := range drg {
				drgL[k] = labels[l][q]
			}
			var e []fr.Element
			if l > 1 {
				for k, q := range exp {
					expL[k] = labels[l-1][q]
				}
				e = expL
			}
			labels[l][i] = h.Label(s.ReplicaID, l, i, drgL, e)
			if s.corrupt != nil {
				s.corrupt(l, i, &labels[l][i])
			}
		}
	}
	s.label = func(l int, i uint64) fr.Element { return labels[l][i] }

	cols := make([]fr.Element, n)
	replica := make([]fr.Element, n)
	col := make([]fr.Element, p.Layers)
	for i := uint64(0); i < n; i++ {
		for l := 1; l <= p.Layers; l++ {
			col[l-1] = labels[l][i]
		}
		cols[i] = h.Fold(col...)
		replica[i].Add(&labels[p.Layers][i], &data[i])
	}
	s.cTree = NewDenseTree(h, cols)
	s.rTree = NewDenseTree(h, replica)
}

func (s *Sector) sealSparse() {
	p, h := s.Profile, s.h
	s.dTree = NewZeroTree(h, p.Depth)
	s.CommD = s.dTree.Root()
	s.ReplicaID = ReplicaID(s.ProverID, s.SectorID, s.Ticket, s.CommD)
	labelSeed := s.dataSeed()

	challenged := map[uint64]bool{}
	for k := 0; k < p.Partitions; k++ {
		for _, c := range p.PartitionChallenges(s.ReplicaID, SeedElement(s.Seed), k) {
			challenged[c] = true
		}
	}
	order := make([]uint64, 0, len(challenged))
	for c := range challenged {
		order = append(order, c)
	}
	sort.Slice(order, func(i, j int) bool { return order[i] < order[j] })

	labels := make([]map[uint64]fr.Element, p.Layers+1)
	get := func(l int, i uint64) fr.Element {
		v, ok := labels[l][i]
		if !ok {
			v = DeriveElement(labelSeed, "label", uint64(l), i)
			labels[l][i] = v
		}
		return v
	}
	// Ascending order within a layer, layers in order: a challenged node
	// that is a parent of another one is labelled before it is read.
	drgL := make([]fr.Element, DRGParents)
	expL := make([]fr.Element, ExpanderParents)
	for l := 1; l <= p.Layers; l++ {
		labels[l] = map[uint64]fr.Element{}
		for _, c := range order {
			drg, exp := p.Parents(c)
			for k, q := range drg {
				drgL[k] = get(l, q)
			}
			var e []fr.Element
			if l > 1 {
				for k, q := range exp {
					expL[k] = get(l-1, q)
				}
				e = expL
			}
			labels[l][c] = h.Label(s.ReplicaID, l, c, drgL, e)
		}
	}
	s.label = get

	colLeaves := map[uint64]fr.Element{}
	col := make([]fr.Element, p.Layers)
	addCol := func(i uint64) {
		if _, ok := colLeaves[i]; ok {
			return
		}
		for l := 1; l <= p.Layers; l++ {
			col[l-1] = get(l, i)
		}
		colLeaves[i] = h.Fold(col...)
	}
	repLeaves := map[uint64]fr.Element{}
	for _, c := range order {
		addCol(c)
		drg, exp := p.Parents(c)
		for _, q := range drg {
			addCol(q)
		}
		for _, q := range exp {
			addCol(q)
		}
		repLeaves[c] = get(p.Layers, c) // data is zero: replica = label
	}
	s.cTree = NewSparseTree(h, p.Depth, labelSeed, "comm_c", colLeaves)
	s.rTree = NewSparseTree(h, p.Depth, labelSeed, "comm_r_last", repLeaves)
}

// SeedElement maps the interactive seed into the field for challenge derivation.
func SeedElement(seed [32]byte) fr.Element { return hashToField(seed[:]) }

// Column returns the labels of a node in every layer.
func (s *Sector) Column(node uint64) []fr.Element {
	col := make([]fr.Element, s.Profile.Layers)
	for l := 1; l <= s.Profile.Layers; l++ {
		col[l-1] = s.label(l, node)
	}
	return col
}

// Statement is the public part of a sector's C2: what the verifier knows.
func (s *Sector) Statement() Statement {
	return Statement{Profile: s.Profile, ReplicaID: s.ReplicaID, CommD: s.CommD, CommR: s.CommR, Seed: s.Seed}
}

// VanillaProofs opens the sector at every challenge of every partition.
func (s *Sector) VanillaProofs() []PartitionProof {
	p := s.Profile
	out := make([]PartitionProof, p.Partitions)
	for k := range out {
		out[k].Partition = k
		for _, c := range p.PartitionChallenges(s.ReplicaID, SeedElement(s.Seed), k) {
			out[k].Challenges = append(out[k].Challenges, s.open(c))
		}
	}
	return out
}

func (s *Sector) open(c uint64) ChallengeProof {
	drg, exp := s.Profile.Parents(c)
	cp := ChallengeProof{
		Node:        c,
		DataLeaf:    s.dTree.Leaf(c),
		DataPath:    s.dTree.Open(c),
		Column:      s.Column(c),
		ColumnPath:  s.cTree.Open(c),
		ReplicaPath: s.rTree.Open(c),
	}
	for k, q := range drg {
		cp.DRG[k] = ParentOpening{Node: q, Column: s.Column(q), Path: s.cTree.Open(q)}
	}
	for k, q := range exp {
		cp.Exp[k] = ParentOpening{Node: q, Column: s.Column(q), Path: s.cTree.Open(q)}
	}
	return cp
}

// ZeroTree is the tree of an all-zero sector: every level's nodes are equal,
// so it costs depth hashes at any size.
type ZeroTree struct{ levels []fr.Element }

// NewZeroTree returns the zero tree of 2^depth leaves.
func NewZeroTree(h *Hasher, depth int) *ZeroTree {
	t := &ZeroTree{levels: make([]fr.Element, depth+1)}
	for l := 1; l <= depth; l++ {
		t.levels[l] = h.Compress(t.levels[l-1], t.levels[l-1])
	}
	return t
}

func (t *ZeroTree) Root() fr.Element       { return t.levels[len(t.levels)-1] }
func (t *ZeroTree) Leaf(uint64) fr.Element { return fr.Element{} }
func (t *ZeroTree) Open(uint64) []fr.Element {
	return append([]fr.Element(nil), t.levels[:len(t.levels)-1]...)
}
