package sdr

import (
	"crypto/sha256"
	"encoding/binary"

	"github.com/c2flow/c2flow/filecoin/proofs"
)

// trim254 clears the top two bits of a little-endian 32-byte value so it is
// below 2^254 and hence a canonical BLS12-381 scalar (fr32
// bytes_into_fr_repr_safe; the SHA254 trim).
func trim254(b *[32]byte) { b[31] &= 0x3f }

// ReplicaID returns the replica id (storage-proofs-porep
// stacked/vanilla/params.rs generate_replica_id):
// SHA-256(prover_id || sector_id (u64 big-endian) || ticket || comm_d ||
// porep_id) with the top two bits of the last byte cleared. The result is
// the little-endian representation of a field element.
func ReplicaID(proverID [32]byte, sectorID uint64, ticket, commD [32]byte, porepID proofs.PoRepID) [32]byte {
	var buf [32 + 8 + 32 + 32 + 32]byte
	copy(buf[0:], proverID[:])
	binary.BigEndian.PutUint64(buf[32:], sectorID)
	copy(buf[40:], ticket[:])
	copy(buf[72:], commD[:])
	copy(buf[104:], porepID[:])
	id := sha256.Sum256(buf[:])
	trim254(&id)
	return id
}
