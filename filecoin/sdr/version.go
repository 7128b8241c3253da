package sdr

import (
	"encoding/binary"
	"fmt"
)

// APIVersion is rust-fil-proofs' ApiVersion: it selects network-mandated
// behaviour changes. In this package it changes the DRG parent ordering and
// the width of the expander-parent arithmetic (V1_0_0 versus later).
type APIVersion uint8

// API versions, in rust-fil-proofs' order.
const (
	V1_0_0 APIVersion = iota
	V1_1_0
	V1_2_0
)

// String returns the semantic version, e.g. "1.1.0".
func (v APIVersion) String() string {
	switch v {
	case V1_0_0:
		return "1.0.0"
	case V1_1_0:
		return "1.1.0"
	case V1_2_0:
		return "1.2.0"
	}
	return fmt.Sprintf("APIVersion(%d)", uint8(v))
}

// Valid reports whether v is a known API version.
func (v APIVersion) Valid() bool { return v <= V1_2_0 }

// ParseAPIVersion parses "1.0.0", "1.1.0", "1.2.0" or the serde names
// "V1_0_0", "V1_1_0", "V1_2_0".
func ParseAPIVersion(s string) (APIVersion, error) {
	switch s {
	case "1.0.0", "V1_0_0":
		return V1_0_0, nil
	case "1.1.0", "V1_1_0":
		return V1_1_0, nil
	case "1.2.0", "V1_2_0":
		return V1_2_0, nil
	}
	return 0, fmt.Errorf("parse api version %q: unknown version", s)
}

// PoRepID is the 32-byte proof-of-replication identifier that seeds the
// graph: registered proof id (u64 LE) | nonce (u64 LE) | 16 zero bytes, as
// rust-filecoin-proofs-api src/registry.rs builds it.
type PoRepID [32]byte

// NewPoRepID returns the porep_id for a registered seal proof id and nonce
// (the nonce is 0 for every published proof).
func NewPoRepID(registeredProofID, nonce uint64) PoRepID {
	var id PoRepID
	binary.LittleEndian.PutUint64(id[0:], registeredProofID)
	binary.LittleEndian.PutUint64(id[8:], nonce)
	return id
}

// maxLegacyPoRepProofID is MAX_LEGACY_POREP_REGISTERED_PROOF_ID
// (storage-proofs-core/src/lib.rs).
const maxLegacyPoRepProofID = 4

// IsLegacy reports whether the registered proof id in the first 8 bytes is a
// legacy (V1, API 1.0.0) seal proof, like storage-proofs-core's
// is_legacy_porep_id.
func (id PoRepID) IsLegacy() bool {
	return binary.LittleEndian.Uint64(id[:8]) <= maxLegacyPoRepProofID
}
