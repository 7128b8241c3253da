package seal

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"runtime"
	"slices"

	"github.com/c2flow/c2flow/filecoin/merkle"
	"github.com/c2flow/c2flow/filecoin/sdr"
)

// SealSparse builds the C1 of a committed-capacity sector (all-zero
// payload) of any supported size in time proportional to the number of
// challenges, not the sector size: 32GiB and 64GiB take seconds.
//
// Tree D is the exact tree of an all-zero sector, so comm_d is the real
// CC comm_d and the replica id and interactive challenges are those of a
// real sector with these parameters. Only the nodes the proofs open hold
// real columns: each challenged node's labels are computed from its
// parents' columns as SDR labels are; every other opened column (a
// parent's) holds filler labels Trim254(SHA-256("c2flow/seal/filler" ||
// replica_id || layer (u32 LE) || node (u64 LE))); every unopened tree C
// leaf holds the hash of an all-zero column and every unopened tree R leaf
// zero. Trees C and R are then complete trees over all nodes, their roots
// real roots and every opening a real opening, so Verify and the C2
// circuit accept the C1; only the labels of unopened (and parent) nodes
// are not the sector's SDR labels, which nothing short of the replica
// shows. The sector keeps its tree R, which Sealed.ProveR opens at any
// node for an update.
//
// Synthetic-PoRep proofs are refused (their challenges depend on comm_r,
// which depends on which nodes are challenged); p.CC and p.DataSeed are
// ignored.
func SealSparse(ctx context.Context, p SealParams) (*Sealed, error) {
	info, err := checkParams(&p)
	if err != nil {
		return nil, err
	}
	fail := func(step string, err error) error {
		return fmt.Errorf("seal sector %d sparse (%s): %s: %w", p.SectorID, info.Name, step, err)
	}
	if mode := sdr.ModeFor(info); mode != sdr.Interactive {
		return nil, fail("challenges", fmt.Errorf("%w: %s challenges depend on comm_r", ErrUnsupported, mode))
	}
	workers := p.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	n := info.Nodes
	treeD, err := BuildSparse(merkle.SHA254Hasher{}, merkle.TreeDShape(), n, merkle.Node{}, nil, workers)
	if err != nil {
		return nil, fail("tree D", err)
	}
	commD := [32]byte(treeD.Root())
	replicaID := sdr.ReplicaID(p.ProverID, p.SectorID, p.Ticket, commD, info.PoRepID)
	g, err := sdr.GraphFor(info)
	if err != nil {
		return nil, fail("graph", err)
	}
	// comm_r does not enter interactive challenges.
	cp := sdr.ChallengeParamsFor(info, replicaID, [32]byte{}, p.Seed)
	var challenged []uint64
	for k := range info.Partitions {
		chs, err := sdr.Challenges(cp, k)
		if err != nil {
			return nil, fail("challenges", err)
		}
		challenged = append(challenged, chs...)
	}
	slices.Sort(challenged)
	challenged = slices.Compact(challenged)

	layers := info.Layers
	cols := make(map[uint64][][32]byte)
	isChallenged := make(map[uint64]bool, len(challenged))
	parentsOf := make(map[uint64][sdr.Degree]uint32, len(challenged))
	for _, c := range challenged {
		isChallenged[c] = true
		cols[c] = make([][32]byte, layers)
	}
	for _, c := range challenged {
		var ps [sdr.Degree]uint32
		if err := g.Parents(c, ps[:]); err != nil {
			return nil, fail("parents", err)
		}
		parentsOf[c] = ps
		for _, q := range ps {
			if _, ok := cols[uint64(q)]; !ok {
				cols[uint64(q)] = fillerColumn(&replicaID, uint64(q), layers)
			}
		}
	}
	// Labels of the challenged nodes, layer by layer and in node order: a
	// node's DRG parents precede it (same layer), its expander parents'
	// labels are of the previous layer.
	base := make([][32]byte, sdr.BaseDegree)
	exp := make([][32]byte, sdr.ExpDegree)
	for l := 1; l <= layers; l++ {
		for _, c := range challenged {
			ps := parentsOf[c]
			for j := range base {
				base[j] = cols[uint64(ps[j])][l-1]
			}
			var e [][32]byte
			if l > 1 {
				for j := range exp {
					exp[j] = cols[uint64(ps[sdr.BaseDegree+j])][l-2]
				}
				e = exp
			}
			lab, err := sdr.NodeLabel(replicaID, uint32(l), c, base, e)
			if err != nil {
				return nil, fail("labels", err)
			}
			cols[c][l-1] = lab
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, fail("labels", err)
	}

	shape := treeShape(info.TreeR)
	cLeaves := make(map[uint64]merkle.Node, len(cols))
	for node, rows := range cols {
		h, err := columnHash(rows)
		if err != nil {
			return nil, fail("column hashes", err)
		}
		cLeaves[node] = merkle.Node(h)
	}
	fillerLeaf, err := columnHash(make([][32]byte, layers))
	if err != nil {
		return nil, fail("column hashes", err)
	}
	treeC, err := BuildSparse(merkle.PoseidonHasher{}, shape, n, merkle.Node(fillerLeaf), cLeaves, workers)
	if err != nil {
		return nil, fail("tree C", err)
	}
	if err := ctx.Err(); err != nil {
		return nil, fail("tree C", err)
	}
	rLeaves := make(map[uint64]merkle.Node, len(challenged))
	for _, c := range challenged {
		v, err := sdr.Encode(cols[c][layers-1], [32]byte{}) // data node 0
		if err != nil {
			return nil, fail("encode replica", err)
		}
		rLeaves[c] = merkle.Node(v)
	}
	treeR, err := BuildSparse(merkle.PoseidonHasher{}, shape, n, merkle.Node{}, rLeaves, workers)
	if err != nil {
		return nil, fail("tree R", err)
	}
	sealed, err := finish(ctx, p, info, g, replicaID, commD, [32]byte(treeC.Root()), [32]byte(treeR.Root()), &sparseView{
		cols: cols, treeD: treeD, treeC: treeC, treeR: treeR,
	})
	if err != nil {
		return nil, err
	}
	sealed.treeR = treeR
	return sealed, nil
}

// fillerColumn returns the filler labels of an opened, unchallenged node.
func fillerColumn(replicaID *[32]byte, node uint64, layers int) [][32]byte {
	rows := make([][32]byte, layers)
	var buf [len("c2flow/seal/filler") + 32 + 4 + 8]byte
	n := copy(buf[:], "c2flow/seal/filler")
	n += copy(buf[n:], replicaID[:])
	binary.LittleEndian.PutUint64(buf[n+4:], node)
	for l := range rows {
		binary.LittleEndian.PutUint32(buf[n:], uint32(l+1))
		rows[l] = sha256.Sum256(buf[:])
		rows[l][31] &= 0x3f
	}
	return rows
}

// sparseView reads a sparsely sealed sector.
type sparseView struct {
	cols                map[uint64][][32]byte
	treeD, treeC, treeR *SparseTree
}

func (v *sparseView) column(node uint64) ([][32]byte, error) {
	rows, ok := v.cols[node]
	if !ok {
		return nil, fmt.Errorf("column of node %d: not opened in this sparse sector", node)
	}
	return slices.Clone(rows), nil
}
func (v *sparseView) proveD(node uint64) (*merkle.Proof, error) { return v.treeD.Prove(node) }
func (v *sparseView) proveC(node uint64) (*merkle.Proof, error) { return v.treeC.Prove(node) }
func (v *sparseView) proveR(node uint64) (*merkle.Proof, error) { return v.treeR.Prove(node) }
