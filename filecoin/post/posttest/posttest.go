// Package posttest makes PoSt vanilla proofs for tests: each over a
// replica whose tree R has pseudo-random leaves (a PoSt opens tree R
// alone, so no sealing is needed to exercise the proof), deterministic in
// the sector number.
package posttest

import (
	"fmt"
	"math/rand/v2"

	"github.com/c2flow/c2flow/filecoin/merkle"
	"github.com/c2flow/c2flow/filecoin/post"
	"github.com/c2flow/c2flow/filecoin/proofs"
)

// node is a pseudo-random field element.
func node(rng *rand.Rand) merkle.Node {
	var n merkle.Node
	for i := range n {
		n[i] = byte(rng.Uint32())
	}
	n[31] &= 0x3f
	return n
}

// Vanilla is GenerateSingleVanillaProof's proof of sector id at
// sectorIndex of the proof's sectors (its position in a window partition
// set; 0 for winning) under randomness, over sector id's replica: tree R
// of info's shape over leaves drawn from id, comm_c likewise. A replica
// over 2^18 nodes is sparse (Sparse): its tree is built only above the
// leaves the challenges open.
func Vanilla(info proofs.PoStProofInfo, randomness [32]byte, id uint64, sectorIndex int) (*post.VanillaProof, error) {
	if info.Nodes > 1<<18 {
		return Sparse(info, randomness, id, sectorIndex)
	}
	rng := rand.New(rand.NewPCG(id, 0x706f7374))
	leaves := make([]merkle.Node, info.Nodes)
	for i := range leaves {
		leaves[i] = node(rng)
	}
	shape := merkle.Shape{Base: info.TreeR.Base, Sub: info.TreeR.Sub, Top: info.TreeR.Top}
	tree, err := merkle.Build(merkle.PoseidonHasher{}, shape, leaves)
	if err != nil {
		return nil, fmt.Errorf("posttest: tree R of sector %d: %w", id, err)
	}
	return post.GenerateVanilla(info, randomness, id, sectorIndex, node(rng), tree)
}

// Sparse is Vanilla over a sparse replica of any size, 32GiB and 64GiB
// included: tree R's leaves are zero but the challenged ones, drawn from
// id (merkle.Sparse). Its vanilla proof is as valid as a sealed
// sector's: a PoSt proves openings of tree R against comm_r alone.
func Sparse(info proofs.PoStProofInfo, randomness [32]byte, id uint64, sectorIndex int) (*post.VanillaProof, error) {
	rng := rand.New(rand.NewPCG(id, 0x73706172))
	set := map[uint64]merkle.Node{}
	for _, c := range post.SectorChallenges(info, randomness, id, sectorIndex) {
		set[c] = node(rng)
	}
	shape := merkle.Shape{Base: info.TreeR.Base, Sub: info.TreeR.Sub, Top: info.TreeR.Top}
	tree, err := merkle.NewSparse(merkle.PoseidonHasher{}, shape, info.Nodes, set)
	if err != nil {
		return nil, fmt.Errorf("posttest: sparse tree R of sector %d: %w", id, err)
	}
	return post.GenerateVanilla(info, randomness, id, sectorIndex, node(rng), tree)
}

// Bincodes are Vanilla's proofs of sectors ids (sorted), each at its
// position, in bincode: what Curio sends in vanilla_proofs.
func Bincodes(info proofs.PoStProofInfo, randomness [32]byte, ids ...uint64) ([][]byte, error) {
	out := make([][]byte, len(ids))
	for i, id := range ids {
		v, err := Vanilla(info, randomness, id, i)
		if err != nil {
			return nil, err
		}
		out[i] = v.Bincode()
	}
	return out, nil
}
