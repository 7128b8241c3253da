package proofs

import "encoding/binary"

// ProverID is the prover id of miner actor minerID as Filecoin derives
// it: the payload of the miner's ID address (the actor id as an unsigned
// LEB128 varint), zero-padded to 32 bytes. This is filecoin-ffi's
// toProverID (address.NewIDAddress(id).Payload()) and cuzk's
// make_prover_id (curio extern/cuzk/cuzk-core/src/prover.rs).
func ProverID(minerID uint64) [32]byte {
	var id [32]byte
	binary.PutUvarint(id[:], minerID) // at most 10 bytes
	return id
}
