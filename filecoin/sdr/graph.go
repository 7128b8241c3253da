package sdr

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math/bits"
	"sync"
	"sync/atomic"

	"github.com/c2flow/c2flow/filecoin/proofs"
)

// Graph degrees and node size, as the registry (filecoin/proofs) defines
// them.
const (
	BaseDegree = proofs.DRGParents      // DRG parents per node
	ExpDegree  = proofs.ExpParents      // expander parents per node
	Degree     = BaseDegree + ExpDegree // parents per node in the parent cache
	NodeSize   = proofs.NodeSize        // bytes per node / label
)

// parentCacheVersion is storage-proofs-core parameter_cache.rs VERSION, part
// of the parent cache file name.
const parentCacheVersion = 28

// treeHasherName is the name of the tree hasher (PoseidonHasher::name()) the
// production StackedBucketGraph is instantiated with; it enters the graph
// identifier and the parent cache file name.
const treeHasherName = "poseidon_hasher"

// Domain separation tags (storage-proofs-core/src/crypto/mod.rs).
const (
	drsampleDST = "Filecoin_DRSample"
	feistelDST  = "Filecoin_Feistel"
)

// Graph is the SDR stacked bucket graph (StackedBucketGraph): a BucketGraph
// DRG of degree 6 plus an 8-parent Feistel expander, determined by the node
// count, the porep_id and the API version. A Graph is immutable and safe for
// concurrent use.
type Graph struct {
	nodes       uint64
	porepID     proofs.PoRepID
	version     proofs.APIVersion
	drgSeed     [28]byte
	feistelKeys [4]uint64
	feistel     feistelPrecomputed

	// tab is the tabulated Feistel round function, built on first bulk use
	// (tabOnce) and read-only afterwards; single-node queries use it only
	// when it already exists.
	tabOnce sync.Once
	tab     atomic.Pointer[feistelTable]
}

// PrecomputeExpander tabulates the expander's Feistel round function (3 *
// 2^k u32 entries, 2^k >= sqrt(8*Nodes()): at most 3 MiB, a few
// milliseconds to build). Bulk operations do this themselves; call it before
// many single-node Parents/ExpParents queries to make each about 50 times
// faster. Safe for concurrent use.
func (g *Graph) PrecomputeExpander() { g.feistelTab() }

// feistelTab returns the graph's Feistel table, building it once (a few
// milliseconds for production sizes).
func (g *Graph) feistelTab() *feistelTable {
	g.tabOnce.Do(func() { g.tab.Store(newFeistelTable(&g.feistelKeys, g.feistel)) })
	return g.tab.Load()
}

// NewGraph builds the graph for a sector of nodes 32-byte nodes.
// nodes must be in [1, 2^32-1] (node indices are u32 in the parent cache).
// The API version selects the DRG parent order and the width of the
// expander arithmetic (1.0.0 versus later). GraphFor takes all three from a
// registered proof.
func NewGraph(nodes uint64, porepID proofs.PoRepID, version proofs.APIVersion) (*Graph, error) {
	if !version.Valid() {
		return nil, fmt.Errorf("new sdr graph: unknown api version %d", version)
	}
	if nodes == 0 || nodes > 1<<32-1 {
		return nil, fmt.Errorf("new sdr graph: %d nodes out of range [1, 2^32-1]", nodes)
	}
	g := &Graph{
		nodes:   nodes,
		porepID: porepID,
		version: version,
		feistel: feistelPrecompute(ExpDegree * nodes),
	}
	seed := porepDomainSeed(drsampleDST, porepID)
	copy(g.drgSeed[:], seed[:28])
	keys := porepDomainSeed(feistelDST, porepID)
	for i := range g.feistelKeys {
		g.feistelKeys[i] = binary.LittleEndian.Uint64(keys[8*i:])
	}
	return g, nil
}

// NewGraphForSectorSize builds the graph of a sector of sectorSize bytes
// (a positive multiple of 32).
func NewGraphForSectorSize(sectorSize uint64, porepID proofs.PoRepID, version proofs.APIVersion) (*Graph, error) {
	if sectorSize == 0 || sectorSize%NodeSize != 0 {
		return nil, fmt.Errorf("new sdr graph: sector size %d is not a positive multiple of %d", sectorSize, NodeSize)
	}
	return NewGraph(sectorSize/NodeSize, porepID, version)
}

// porepDomainSeed is derive_porep_domain_seed: SHA-256(dst || porep_id).
func porepDomainSeed(dst string, porepID proofs.PoRepID) [32]byte {
	h := sha256.New()
	h.Write([]byte(dst))
	h.Write(porepID[:])
	var out [32]byte
	h.Sum(out[:0])
	return out
}

// Nodes returns the number of nodes.
func (g *Graph) Nodes() uint64 { return g.nodes }

// SectorSize returns the sector size in bytes (Nodes * 32).
func (g *Graph) SectorSize() uint64 { return g.nodes * NodeSize }

// PoRepID returns the porep_id the graph was built from.
func (g *Graph) PoRepID() proofs.PoRepID { return g.porepID }

// APIVersion returns the API version the graph was built for.
func (g *Graph) APIVersion() proofs.APIVersion { return g.version }

// DRGSeed returns the 28-byte BucketGraph seed (SHA-256("Filecoin_DRSample"
// || porep_id), first 28 bytes).
func (g *Graph) DRGSeed() [28]byte { return g.drgSeed }

// FeistelKeys returns the expander's Feistel keys (SHA-256("Filecoin_Feistel"
// || porep_id) as four u64 LE; the permutation uses the first three).
func (g *Graph) FeistelKeys() [4]uint64 { return g.feistelKeys }

// Identifier returns the graph's ParameterSetMetadata identifier as
// rust-fil-proofs prints it for a Poseidon tree, e.g.
// "stacked_graph::StackedGraph{expansion_degree: 8 base_graph:
// drgraph::BucketGraph{size: 64; degree: 6; hasher: poseidon_hasher} }".
func (g *Graph) Identifier() string {
	return fmt.Sprintf("stacked_graph::StackedGraph{expansion_degree: %d base_graph: drgraph::BucketGraph{size: %d; degree: %d; hasher: %s} }",
		ExpDegree, g.nodes, BaseDegree, treeHasherName)
}

// ParentCacheID returns the parent cache file stem as storage-proofs-porep
// cache.rs names it and parent_cache.json keys it:
// "v28-sdr-parent-" + hex(SHA-256("poseidon_hasher" || Identifier() ||
// feistel keys (u64 LE each) || nodes (u32 LE))). The file itself is
// ParentCacheID()+".cache".
func (g *Graph) ParentCacheID() string {
	h := sha256.New()
	h.Write([]byte(treeHasherName))
	h.Write([]byte(g.Identifier()))
	var b [8]byte
	for _, k := range g.feistelKeys {
		binary.LittleEndian.PutUint64(b[:], k)
		h.Write(b[:])
	}
	binary.LittleEndian.PutUint32(b[:4], uint32(g.nodes))
	h.Write(b[:4])
	return fmt.Sprintf("v%d-sdr-parent-%s", parentCacheVersion, hex.EncodeToString(h.Sum(nil)))
}

func (g *Graph) checkNode(op string, node uint64, out []uint32, need int) error {
	if node >= g.nodes {
		return fmt.Errorf("%s: node %d out of range (graph has %d nodes)", op, node, g.nodes)
	}
	if len(out) < need {
		return fmt.Errorf("%s: output slice has %d entries, need %d", op, len(out), need)
	}
	return nil
}

// BaseParents writes node's 6 DRG parents into out[:6] (BucketGraph::parents).
// Nodes 0 and 1 have all-zero parents. From API 1.1.0 on the immediate
// predecessor node-1 is out[0]; in 1.0.0 it is out[5].
func (g *Graph) BaseParents(node uint64, out []uint32) error {
	if err := g.checkNode("sdr base parents", node, out, BaseDegree); err != nil {
		return err
	}
	g.baseParents(uint32(node), (*[BaseDegree]uint32)(out))
	return nil
}

// ExpParents writes node's 8 expander parents into out[:8]
// (StackedGraph::generate_expanded_parents).
func (g *Graph) ExpParents(node uint64, out []uint32) error {
	if err := g.checkNode("sdr expander parents", node, out, ExpDegree); err != nil {
		return err
	}
	g.expParents(node, (*[ExpDegree]uint32)(out), g.tab.Load())
	return nil
}

// Parents writes node's 14 parents into out[:14]: the 6 DRG parents, then
// the 8 expander parents (StackedGraph::parents; the parent cache layout).
func (g *Graph) Parents(node uint64, out []uint32) error {
	if err := g.checkNode("sdr parents", node, out, Degree); err != nil {
		return err
	}
	g.parents(node, (*[Degree]uint32)(out), g.tab.Load())
	return nil
}

// parents writes node's 14 parents; tab may be nil.
func (g *Graph) parents(node uint64, out *[Degree]uint32, tab *feistelTable) {
	g.baseParents(uint32(node), (*[BaseDegree]uint32)(out[:BaseDegree]))
	g.expParents(node, (*[ExpDegree]uint32)(out[BaseDegree:]), tab)
}

// baseParents is BucketGraph::parents for node < nodes.
func (g *Graph) baseParents(node uint32, out *[BaseDegree]uint32) {
	if node < 2 {
		*out = [BaseDegree]uint32{}
		return
	}
	var seed [32]byte
	copy(seed[:28], g.drgSeed[:])
	binary.LittleEndian.PutUint32(seed[28:], node)
	rng := newChaCha8Rng(&seed)

	const mPrime = BaseDegree - 1
	metagraphNode := uint64(node) * mPrime
	// Upstream computes ceil(log2(metagraph_node as f64)). For 10 <= x <
	// 5*2^32 the f64 log2 of a non-power of two is at least 2^-35 away from
	// an integer, far beyond f64 error, so the exact integer ceil(log2(x))
	// is identical.
	nBuckets := uint64(bits.Len64(metagraphNode - 1))

	predecessor, first := 0, 1 // API 1.1.0 and later: predecessor first
	if g.version == proofs.APIVersion1_0_0 {
		predecessor, first = mPrime, 0
	}
	for i := range mPrime {
		bucketIndex := rng.nextU64()%nBuckets + 1
		largest := min(metagraphNode, uint64(1)<<bucketIndex)
		smallest := max(2, largest>>1)
		nDistances := largest - smallest + 1
		distance := smallest + rng.nextU64()%nDistances
		mapped := uint32((metagraphNode - distance) / mPrime)
		if mapped == node {
			mapped = node - 1
		}
		out[first+i] = mapped
	}
	out[predecessor] = node - 1
}

// expParents is StackedGraph::generate_expanded_parents for node < nodes,
// using the Feistel table tab when it is not nil.
func (g *Graph) expParents(node uint64, out *[ExpDegree]uint32, tab *feistelTable) {
	numElements := g.nodes * ExpDegree
	for i := range uint64(ExpDegree) {
		var t uint64
		if tab != nil {
			t = tab.permute(numElements, node*ExpDegree+i)
		} else {
			t = feistelPermute(numElements, node*ExpDegree+i, &g.feistelKeys, g.feistel)
		}
		if g.version == proofs.APIVersion1_0_0 {
			// Legacy graphs truncate the permuted index to 32 bits before
			// dividing (only matters for 64GiB sectors).
			out[i] = uint32(t) / ExpDegree
		} else {
			out[i] = uint32(t / ExpDegree)
		}
	}
}
