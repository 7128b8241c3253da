// Package hash implements the two hash functions Filecoin's proofs of
// replication use, bit-exactly as rust-fil-proofs computes them:
//
//   - SHA254: SHA-256 whose 32-byte digest has the two most significant bits
//     of its last byte cleared, so the result is always a canonical
//     BLS12-381 scalar (filecoin-hashers' Sha256Domain / Sha256Function).
//     It hashes tree D (the binary data tree whose root is comm_d).
//   - Poseidon: the original Poseidon permutation over the BLS12-381 scalar
//     field, with the round numbers, Grain-LFSR round constants, Cauchy MDS
//     matrix and domain tags of neptune v11 (the version rust-fil-proofs
//     pins). It hashes the tree-R and tree-C Merkle nodes, the columns of
//     tree C and comm_r = H(comm_c, comm_r_last).
//
// Poseidon values travel as [Domain], the 32-byte little-endian encoding of
// a field element (blstrs' to_repr), which is what Filecoin serializes.
package hash
