// Package seal checks and produces Filecoin PoRep Commit-1 (C1) artifacts
// natively:
//
//   - Verify checks a decoded C1 (c1.SealCommitPhase1Output) against a
//     sector's public data the way rust-fil-proofs checks vanilla seal
//     proofs (storage-proofs-porep stacked/vanilla proof_scheme.rs
//     verify_all_partitions and params.rs Proof::verify), and beyond it
//     everything the C2 circuit (stacked/circuit/params.rs) enforces: the
//     replica id derived from the public data, the challenges derived per
//     partition, comm_r = Poseidon(comm_c, comm_r_last), every tree D,
//     tree C and tree R opening (leaf, path hashes, position, root), every
//     label recomputed from the parents' columns, and the encoding of the
//     replica node. The first failure is returned as a *VerifyError naming
//     the partition, challenge, node and check.
//   - Seal seals a small sector (2KiB, 8MiB; 512MiB works but is slow) end
//     to end from a seed-derived payload and builds every partition's
//     vanilla proofs as prove_all_partitions does (stacked/vanilla/proof.rs
//     prove_layers_generate), into a C1 the c1 package encodes exactly as
//     filecoin-ffi writes it.
//   - SealSparse builds the C1 of a committed-capacity (all-zero data)
//     sector of any size, 32GiB and 64GiB included, in seconds: its trees
//     are complete Merkle trees over every node, but only the nodes the
//     proofs open (the challenged nodes and their parents) hold real
//     columns; the challenged nodes' labels are derived from their parents'
//     columns as in a real seal. To Verify and to the C2 circuit such a C1
//     is indistinguishable from a real sector's.
//
// Verify is stricter than upstream's vanilla verifier in four ways, each
// something the circuit enforces and upstream's verifier leaves to it: the
// tree D and tree R openings' path hashes are recomputed (upstream checks
// only their roots and positions), the labels are recomputed from the
// parent columns (upstream hashes the labeling proofs' own parent lists),
// the labeling and encoding proofs must name the challenged node and their
// layer (the circuit takes the challenge from labeling_proofs[0].node),
// and a column's index must be the node it opens.
package seal
