// Package porep implements the native side of c2flow's Proof-of-Replication
// scheme, shaped like Filecoin's Stacked DRG: profiles (the registered-proof
// table), sealing of test sectors, challenge derivation, vanilla proofs (the
// content of a C1 artifact), their native verification and the C1 JSON format.
//
// Every hash is Poseidon2 over BLS12-381's scalar field (t=2, rF=6, rP=50),
// the same function the partition circuit (package porep/circuit) evaluates.
// Graph parents and challenges are derived with SHA-256 outside the circuit,
// as Filecoin derives them outside its circuit; the verifier recomputes them
// and feeds them to the circuit as public inputs.
//
// Differences from Filecoin, on purpose: one hash (Poseidon2) for comm_d,
// comm_c and comm_r_last, binary trees, and a sparse synthetic sector for
// profiles too large to seal here. A sparse sector materializes only the
// challenged nodes and their parents; untouched subtrees have pseudo-random
// roots derived from a seed. Its openings are still genuine openings of the
// committed roots, so the circuit and prover do exactly the work they would
// do for a dense sector.
package porep
