// Package merkle builds and checks the Merkle trees of Filecoin's proofs of
// replication, as rust-fil-proofs (storage-proofs-core merkle/ and the
// merkletree crate it uses) does:
//
//   - tree D: a binary SHA254 tree whose leaves are the 32-byte data nodes
//     themselves (shape 2-0-0 with [SHA254Hasher]);
//   - tree R and tree C: Poseidon trees of a base arity (8 in production),
//     optionally split into a sub-tree layer and a top-tree layer: the
//     "LC"/disk trees of shapes 8-0-0, 8-2-0, 8-8-0 and 8-8-2 (see
//     [SectorShape]), built from Sub*Top equally sized base trees whose
//     roots are hashed together.
//
// An inclusion proof ([Proof]) mirrors storage-proofs-core's MerkleProof and
// its ProofData enum (Single, Sub, Top), and is checked the way that code's
// verify and validate do: recompute the root from the leaf and the sibling
// hashes, and require that the path's position indices spell the challenged
// node.
package merkle
