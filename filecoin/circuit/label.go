package circuit

import (
	"fmt"

	"github.com/c2flow/c2flow/filecoin/gadgets"
	"github.com/c2flow/c2flow/filecoin/proofs"
	"github.com/c2flow/c2flow/filecoin/r1cs"
)

// uint64Bits is storage-proofs-core gadgets/uint64.rs UInt64: 64 Booleans,
// least significant first.
type uint64Bits [64]gadgets.Boolean

// allocUint64 allocates the 64 bits of v, least significant first
// ("allocated bit i"), a boolean constraint each (UInt64::alloc).
func allocUint64(cs r1cs.System, v uint64) *uint64Bits {
	var u uint64Bits
	for i := range u {
		cs.PushIndexed("allocated bit", i)
		u[i] = gadgets.Is(gadgets.AllocBit(cs, v>>i&1 == 1))
		cs.Pop()
	}
	return &u
}

// bitsBE returns the bits most significant first (UInt64::to_bits_be).
func (u *uint64Bits) bitsBE() []gadgets.Boolean {
	out := make([]gadgets.Boolean, 64)
	for i := range out {
		out[i] = u[63-i]
	}
	return out
}

// createLabel is stacked/circuit/create_label.rs create_label_circuit: the
// SHA-256 of replica_id (padded to 32 bytes) | layer (u32 BE) | node (u64
// BE) padded to 64 bytes | the TotalParents parents (32 bytes each), its
// digest bits reordered least significant first within each byte and the
// first 254 packed into the label ("hash", "result_num").
func createLabel(cs r1cs.System, replicaID []gadgets.Boolean, parents [][]gadgets.Boolean, layer uint32, node *uint64Bits) (gadgets.AllocatedNum, error) {
	if len(replicaID) < 32 || len(replicaID) > 256 {
		return gadgets.AllocatedNum{}, fmt.Errorf("create label: replica id of %d bits: %w", len(replicaID), ErrShape)
	}
	if len(parents) != proofs.TotalParents {
		return gadgets.AllocatedNum{}, fmt.Errorf("create label: %d parents, want %d: %w", len(parents), proofs.TotalParents, ErrShape)
	}
	pre := make([]gadgets.Boolean, 0, (2+proofs.TotalParents)*256)
	pre = append(pre, replicaID...)
	for len(pre) < 256 {
		pre = append(pre, gadgets.Constant(false))
	}
	pre = append(pre, gadgets.UInt32Constant(layer).BitsBE()...)
	pre = append(pre, node.bitsBE()...)
	for len(pre) < 512 {
		pre = append(pre, gadgets.Constant(false))
	}
	for _, p := range parents {
		pre = append(pre, p...)
		for len(pre)%256 != 0 {
			pre = append(pre, gadgets.Constant(false))
		}
	}
	if len(pre) != (2+proofs.TotalParents)*256 {
		return gadgets.AllocatedNum{}, fmt.Errorf("create label: preimage of %d bits: %w", len(pre), ErrShape)
	}
	cs.Push("hash")
	digest, err := gadgets.SHA256(cs, pre)
	cs.Pop()
	if err != nil {
		return gadgets.AllocatedNum{}, fmt.Errorf("create label: %w", err)
	}
	le := reverseBitNumbering(digest)
	cs.Push("result_num")
	n := gadgets.PackBits(cs, le[:gadgets.FieldCapacity])
	cs.Pop()
	return n, nil
}
