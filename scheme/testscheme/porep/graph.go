package porep

import (
	"crypto/sha256"
	"encoding/binary"
	"math/big"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
)

// Parents returns the DRG parents (in the same layer, indices < node) and
// the expander parents (in the previous layer, any index) of a node >= 1.
// The graph is fixed per profile: parents depend only on the profile name
// and the node index, as Filecoin's graph depends only on the porep id.
func (p Profile) Parents(node uint64) (drg [DRGParents]uint64, exp [ExpanderParents]uint64) {
	for k := 0; k < DRGParents; k++ {
		drg[k] = graphDraw(p.Name, "drg", node, k) % node
	}
	for k := 0; k < ExpanderParents; k++ {
		exp[k] = graphDraw(p.Name, "exp", node, k) % p.Nodes()
	}
	return drg, exp
}

func graphDraw(profile, kind string, node uint64, k int) uint64 {
	h := sha256.New()
	h.Write([]byte("c2flow/graph/" + profile + "/" + kind))
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], node)
	binary.BigEndian.PutUint64(b[8:], uint64(k))
	h.Write(b[:])
	return binary.BigEndian.Uint64(h.Sum(nil)[:8])
}

// Challenge returns challenge index i of a partition: a node in [1, nodes).
// Node 0 is never challenged (it has no DRG parents), as in Filecoin.
func (p Profile) Challenge(replicaID, seed fr.Element, partition, i int) uint64 {
	h := sha256.New()
	h.Write([]byte("c2flow/challenge"))
	rb := replicaID.Bytes()
	h.Write(rb[:])
	sb := seed.Bytes()
	h.Write(sb[:])
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], uint64(partition))
	binary.BigEndian.PutUint64(b[8:], uint64(i))
	h.Write(b[:])
	v := new(big.Int).SetBytes(h.Sum(nil))
	v.Mod(v, new(big.Int).SetUint64(p.Nodes()-1))
	return v.Uint64() + 1
}

// Challenges returns all challenges of a partition.
func (p Profile) PartitionChallenges(replicaID, seed fr.Element, partition int) []uint64 {
	out := make([]uint64, p.Challenges)
	for i := range out {
		out[i] = p.Challenge(replicaID, seed, partition, i)
	}
	return out
}

// ReplicaID derives the replica id from the sector identity and comm_d, as
// Filecoin derives it from prover id, sector id, ticket and comm_d.
func ReplicaID(proverID [32]byte, sectorID uint64, ticket [32]byte, commD fr.Element) fr.Element {
	h := sha256.New()
	h.Write([]byte("c2flow/replica-id"))
	h.Write(proverID[:])
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], sectorID)
	h.Write(b[:])
	h.Write(ticket[:])
	cb := commD.Bytes()
	h.Write(cb[:])
	return hashToField(h.Sum(nil))
}

// hashToField maps 32 bytes to a field element (reduced mod r; the bias is
// irrelevant for derivation of test data and ids).
func hashToField(b []byte) fr.Element {
	var e fr.Element
	e.SetBigInt(new(big.Int).SetBytes(b))
	return e
}

// DeriveElement returns a pseudo-random field element from a seed and a
// label: the values of a sparse sector that nobody challenges.
func DeriveElement(seed [32]byte, label string, a, b uint64) fr.Element {
	h := sha256.New()
	h.Write(seed[:])
	h.Write([]byte(label))
	var buf [16]byte
	binary.BigEndian.PutUint64(buf[:8], a)
	binary.BigEndian.PutUint64(buf[8:], b)
	h.Write(buf[:])
	return hashToField(h.Sum(nil))
}
