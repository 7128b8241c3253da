package seal

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"runtime"

	"github.com/c2flow/c2flow/filecoin/c1"
	"github.com/c2flow/c2flow/filecoin/hash"
	"github.com/c2flow/c2flow/filecoin/merkle"
	"github.com/c2flow/c2flow/filecoin/proofs"
	"github.com/c2flow/c2flow/filecoin/sdr"
	par "github.com/c2flow/c2flow/internal/parallel"
)

// SealParams says what to seal.
type SealParams struct {
	// Proof is the registered seal proof.
	Proof proofs.RegisteredSealProof
	// ProverID, SectorID and Ticket determine the replica id (with comm_d
	// and the proof's porep_id).
	ProverID [32]byte
	SectorID uint64
	Ticket   [32]byte
	// Seed is the interactive challenge randomness; it must not be zero
	// (filecoin-proofs refuses a zero seed).
	Seed [32]byte
	// DataSeed selects the payload Seal seals: node i is
	// Trim254(SHA-256("c2flow/seal/data" || DataSeed || i as u64 LE)),
	// a valid SHA-254 and BLS12-381 element, as fr32-padded piece data is.
	DataSeed [32]byte
	// CC makes Seal seal an all-zero (committed-capacity) payload instead.
	// SealSparse always does.
	CC bool
	// Workers bounds the goroutines hashing (<= 0: GOMAXPROCS).
	Workers int
	// KeepReplica keeps the replica's nodes (tree R's leaves) in
	// Sealed.Replica, for an update of the sector (Seal only).
	KeepReplica bool
}

// TestParams returns deterministic sealing parameters for a test sector:
// ticket, seed and payload derived from the prover and sector ids, so two
// seals of one sector give one C1. The seed is never zero.
func TestParams(p proofs.RegisteredSealProof, proverID [32]byte, sectorID uint64) SealParams {
	derive := func(tag string) [32]byte {
		h := sha256.New()
		h.Write([]byte("c2flow/seal/" + tag))
		h.Write(proverID[:])
		var b [8]byte
		binary.LittleEndian.PutUint64(b[:], sectorID)
		h.Write(b[:])
		var out [32]byte
		h.Sum(out[:0])
		return out
	}
	return SealParams{
		Proof:    p,
		ProverID: proverID,
		SectorID: sectorID,
		Ticket:   derive("ticket"),
		Seed:     derive("seed"),
		DataSeed: derive("data"),
	}
}

// Sealed is a sealed sector: its public data, the commitments behind
// comm_r, and its C1.
type Sealed struct {
	// Public is the sector's public data (comm_d and comm_r included).
	Public SectorPublic
	// ReplicaID, CommC and CommRLast are the sector's replica id, tree C
	// root and tree R root (comm_r = Poseidon(CommC, CommRLast)).
	ReplicaID [32]byte
	CommC     [32]byte
	CommRLast [32]byte
	// C1 is the sector's Commit-1 output, ready for c1.Encode.
	C1 *c1.SealCommitPhase1Output
	// Replica is the replica's nodes when SealParams.KeepReplica asked.
	Replica []merkle.Node
	// treeR is SealSparse's tree R, kept (a few nodes above each
	// challenged one) so that the sector can be updated (ProveR).
	treeR *SparseTree
}

// ProveR opens tree R (the replica) at any node, for an update of the
// sector. A sparsely sealed sector can (SealSparse keeps its tree R); a
// sector sealed in full keeps at most its replica (KeepReplica), which
// merkle.Build makes into tree R.
func (s *Sealed) ProveR(node uint64) (*merkle.Proof, error) {
	if s.treeR == nil {
		return nil, fmt.Errorf("sector %d: tree R: %w: only a sparsely sealed sector keeps it", s.Public.SectorID, ErrUnsupported)
	}
	p, err := s.treeR.Prove(node)
	if err != nil {
		return nil, fmt.Errorf("sector %d: tree R: %w", s.Public.SectorID, err)
	}
	return p, nil
}

// MaxSealNodes is the largest sector (in 32-byte nodes) Seal builds in
// full: 512MiB. Its memory use is about 10 times the sector size.
const MaxSealNodes = 1 << 24

// ErrUnsupported is returned (wrapped) for a proof a sealer cannot seal.
var ErrUnsupported = errors.New("not supported by this sealer")

// dataNode returns payload node i for a data seed.
func dataNode(seed *[32]byte, i uint64) [32]byte {
	var buf [len("c2flow/seal/data") + 32 + 8]byte
	n := copy(buf[:], "c2flow/seal/data")
	n += copy(buf[n:], seed[:])
	binary.LittleEndian.PutUint64(buf[n:], i)
	return hash.Trim(sha256.Sum256(buf[:]))
}

// view is what the proof builder reads of a sealed sector.
type view interface {
	// column returns node's labels, layer 1 first.
	column(node uint64) ([][32]byte, error)
	proveD(node uint64) (*merkle.Proof, error)
	proveC(node uint64) (*merkle.Proof, error)
	proveR(node uint64) (*merkle.Proof, error)
}

func checkParams(p *SealParams) (proofs.SealProofInfo, error) {
	info, err := proofs.Lookup(p.Proof)
	if err != nil {
		return info, fmt.Errorf("seal sector %d: %w", p.SectorID, err)
	}
	if p.Seed == ([32]byte{}) {
		return info, fmt.Errorf("seal sector %d: %w: all-zero seed", p.SectorID, ErrPublicInput)
	}
	return info, nil
}

// Seal seals a sector in full, in memory: payload, tree D (comm_d),
// replica id, the labels of every layer, column hashes and tree C
// (comm_c), the replica (last layer's labels + payload), tree R
// (comm_r_last), comm_r, and then the vanilla proofs of every partition's
// challenges as prove_all_partitions builds them. Sectors of at most
// MaxSealNodes nodes; 2KiB takes milliseconds, 8MiB seconds.
func Seal(ctx context.Context, p SealParams) (*Sealed, error) {
	return seal(ctx, p, sealHooks{})
}

// sealHooks let tests corrupt a sector while it is sealed, so that its
// trees commit to the corruption.
type sealHooks struct {
	// labels may modify the labels (layers[l] is layer l+1) before tree C
	// is built.
	labels func(replicaID [32]byte, layers [][]byte)
	// replica may modify the replica before tree R is built.
	replica func(replicaID [32]byte, replica []merkle.Node)
}

func seal(ctx context.Context, p SealParams, hooks sealHooks) (*Sealed, error) {
	info, err := checkParams(&p)
	if err != nil {
		return nil, err
	}
	if info.Nodes > MaxSealNodes {
		return nil, fmt.Errorf("seal sector %d: %s has %d nodes, at most %d sealed in full (use SealSparse): %w",
			p.SectorID, info.Name, info.Nodes, MaxSealNodes, ErrUnsupported)
	}
	fail := func(step string, err error) error {
		return fmt.Errorf("seal sector %d (%s): %s: %w", p.SectorID, info.Name, step, err)
	}
	workers := p.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	n := info.Nodes
	data := make([]merkle.Node, n)
	if !p.CC {
		if err := parallel(ctx, workers, n, func(i uint64) error {
			data[i] = dataNode(&p.DataSeed, i)
			return nil
		}); err != nil {
			return nil, fail("payload", err)
		}
	}
	treeD, err := merkle.Build(merkle.SHA254Hasher{}, merkle.TreeDShape(), data)
	if err != nil {
		return nil, fail("tree D", err)
	}
	commD := [32]byte(treeD.Root())
	g, err := sdr.GraphFor(info)
	if err != nil {
		return nil, fail("graph", err)
	}
	replicaID := sdr.ReplicaID(p.ProverID, p.SectorID, p.Ticket, commD, info.PoRepID)
	pc, err := g.BuildParentCache(ctx, workers)
	if err != nil {
		return nil, fail("parent cache", err)
	}
	labels, err := g.Labels(ctx, replicaID, info.Layers, pc)
	if err != nil {
		return nil, fail("labels", err)
	}
	if hooks.labels != nil {
		hooks.labels(replicaID, labels)
	}
	shape := treeShape(info.TreeR)
	colLeaves := make([]merkle.Node, n)
	if err := parallel(ctx, workers, n, func(i uint64) error {
		rows := make([][32]byte, info.Layers)
		for l := range rows {
			rows[l] = [32]byte(labels[l][i*sdr.NodeSize:])
		}
		h, err := columnHash(rows)
		colLeaves[i] = merkle.Node(h)
		return err
	}); err != nil {
		return nil, fail("column hashes", err)
	}
	treeC, err := merkle.Build(merkle.PoseidonHasher{}, shape, colLeaves)
	if err != nil {
		return nil, fail("tree C", err)
	}
	colLeaves = nil
	replica := make([]merkle.Node, n)
	last := labels[info.Layers-1]
	if err := parallel(ctx, workers, n, func(i uint64) error {
		v, err := sdr.Encode([32]byte(last[i*sdr.NodeSize:]), data[i])
		replica[i] = merkle.Node(v)
		return err
	}); err != nil {
		return nil, fail("encode replica", err)
	}
	if hooks.replica != nil {
		hooks.replica(replicaID, replica)
	}
	treeR, err := merkle.Build(merkle.PoseidonHasher{}, shape, replica)
	if err != nil {
		return nil, fail("tree R", err)
	}
	sealed, err := finish(ctx, p, info, g, replicaID, commD, [32]byte(treeC.Root()), [32]byte(treeR.Root()), &fullView{
		layers: labels, treeD: treeD, treeC: treeC, treeR: treeR,
	})
	if err == nil && p.KeepReplica {
		sealed.Replica = replica
	}
	return sealed, err
}

// fullView reads a fully sealed sector.
type fullView struct {
	layers              [][]byte
	treeD, treeC, treeR *merkle.Tree
}

func (v *fullView) column(node uint64) ([][32]byte, error) {
	if node >= uint64(len(v.layers[0]))/sdr.NodeSize {
		return nil, fmt.Errorf("column of node %d: out of range", node)
	}
	rows := make([][32]byte, len(v.layers))
	for l := range rows {
		rows[l] = [32]byte(v.layers[l][node*sdr.NodeSize:])
	}
	return rows, nil
}
func (v *fullView) proveD(node uint64) (*merkle.Proof, error) { return v.treeD.Prove(node) }
func (v *fullView) proveC(node uint64) (*merkle.Proof, error) { return v.treeC.Prove(node) }
func (v *fullView) proveR(node uint64) (*merkle.Proof, error) { return v.treeR.Prove(node) }

// finish computes comm_r, derives the challenges and builds the C1.
func finish(ctx context.Context, p SealParams, info proofs.SealProofInfo, g *sdr.Graph, replicaID, commD, commC, commRLast [32]byte, v view) (*Sealed, error) {
	commR, err := hash.Hash2(commC, commRLast)
	if err != nil {
		return nil, fmt.Errorf("seal sector %d: comm_r: %w", p.SectorID, err)
	}
	cp := sdr.ChallengeParamsFor(info, replicaID, commR, p.Seed)
	parts := make([][]c1.Proof, info.Partitions)
	for k := range parts {
		chs, err := sdr.Challenges(cp, k)
		if err != nil {
			return nil, fmt.Errorf("seal sector %d: partition %d challenges: %w", p.SectorID, k, err)
		}
		parts[k] = make([]c1.Proof, len(chs))
		for i, ch := range chs {
			if err := ctx.Err(); err != nil {
				return nil, fmt.Errorf("seal sector %d: %w", p.SectorID, err)
			}
			if parts[k][i], err = challengeProof(g, info.Layers, v, ch); err != nil {
				return nil, fmt.Errorf("seal sector %d: partition %d challenge %d (node %d): %w", p.SectorID, k, i, ch, err)
			}
		}
	}
	out := &c1.SealCommitPhase1Output{
		RegisteredProof: p.Proof,
		VanillaProofs:   c1.VanillaSealProof{Key: info.VanillaProofsKey, Partitions: parts},
		CommR:           commR,
		CommD:           commD,
		ReplicaID:       replicaID,
		Seed:            p.Seed,
		Ticket:          p.Ticket,
	}
	return &Sealed{
		Public: SectorPublic{
			Proof: p.Proof, ProverID: p.ProverID, SectorID: p.SectorID,
			Ticket: p.Ticket, Seed: p.Seed, CommD: commD, CommR: commR,
		},
		ReplicaID: replicaID,
		CommC:     commC,
		CommRLast: commRLast,
		C1:        out,
	}, nil
}

// challengeProof builds one challenge's vanilla proof as
// prove_layers_generate does: the tree D and tree R openings of the
// challenge, the tree C openings of its column and its parents' columns,
// a labeling proof per layer (the parents' labels repeated to 37) and the
// encoding proof (the last layer's labeling proof).
func challengeProof(g *sdr.Graph, layers int, v view, node uint64) (c1.Proof, error) {
	var parents [sdr.Degree]uint32
	if err := g.Parents(node, parents[:]); err != nil {
		return c1.Proof{}, err
	}
	colProof := func(n uint64) (c1.ColumnProof, [][32]byte, error) {
		rows, err := v.column(n)
		if err != nil {
			return c1.ColumnProof{}, nil, err
		}
		mp, err := v.proveC(n)
		if err != nil {
			return c1.ColumnProof{}, nil, fmt.Errorf("tree C: %w", err)
		}
		return c1.ColumnProof{Column: c1.Column{Index: uint32(n), Rows: rows}, InclusionProof: fromMerkle(mp)}, rows, nil
	}
	var p c1.Proof
	pd, err := v.proveD(node)
	if err != nil {
		return p, fmt.Errorf("tree D: %w", err)
	}
	p.CommDProofs = fromMerkle(pd)
	pr, err := v.proveR(node)
	if err != nil {
		return p, fmt.Errorf("tree R: %w", err)
	}
	p.CommRLastProof = fromMerkle(pr)
	rcp := &p.ReplicaColumnProofs
	if rcp.CX, _, err = colProof(node); err != nil {
		return p, err
	}
	cols := make([][][32]byte, sdr.Degree)
	rcp.DrgParents = make([]c1.ColumnProof, sdr.BaseDegree)
	rcp.ExpParents = make([]c1.ColumnProof, sdr.ExpDegree)
	for j := range sdr.Degree {
		dst := &rcp.DrgParents[min(j, sdr.BaseDegree-1)]
		if j >= sdr.BaseDegree {
			dst = &rcp.ExpParents[j-sdr.BaseDegree]
		}
		if *dst, cols[j], err = colProof(uint64(parents[j])); err != nil {
			return p, err
		}
	}
	p.LabelingProofs = make([]c1.LabelingProof, layers)
	for l := 1; l <= layers; l++ {
		var ps [][32]byte
		for j := range sdr.BaseDegree {
			ps = append(ps, cols[j][l-1])
		}
		if l > 1 {
			for j := sdr.BaseDegree; j < sdr.Degree; j++ {
				ps = append(ps, cols[j][l-2])
			}
		}
		p.LabelingProofs[l-1] = c1.LabelingProof{Parents: sdr.RepeatParents(ps), LayerIndex: uint32(l), Node: node}
	}
	lastParents := p.LabelingProofs[layers-1].Parents
	p.EncodingProof = c1.EncodingProof{
		Parents:    append([][32]byte(nil), lastParents...),
		LayerIndex: uint32(layers),
		Node:       node,
	}
	return p, nil
}

// parallel runs f(i) for i in [0, n) on workers goroutines, in chunks,
// returning the first error (by chunk order) or the context's.
func parallel(ctx context.Context, workers int, n uint64, f func(i uint64) error) error {
	const chunk = 4096
	chunks := (n + chunk - 1) / chunk
	return par.FirstError(workers, int(chunks), func(c int) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		for i := uint64(c) * chunk; i < min(uint64(c+1)*chunk, n); i++ {
			if err := f(i); err != nil {
				return fmt.Errorf("node %d: %w", i, err)
			}
		}
		return nil
	})
}
