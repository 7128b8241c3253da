// Package circuit is Filecoin's PoRep Commit-2 circuit, rust-fil-proofs'
// StackedCircuit (storage-proofs-porep src/stacked/circuit/), written
// against filecoin/r1cs so that it produces the R1CS bellperson produces:
// the same variables in the same order and the same constraints in the same
// order, which is what Filecoin's Groth16 parameters require.
//
// It ports, constraint for constraint:
//
//   - stacked/circuit/proof.rs StackedCircuit::synthesize and
//     StackedCompound::generate_public_inputs ([Synthesize], [PublicInputs]);
//   - stacked/circuit/params.rs Proof::synthesize, create_label.rs,
//     hash.rs, column.rs and column_proof.rs (the per-challenge proof: tree
//     D inclusion, parent columns and their tree C inclusions, labels of
//     every layer, encoding, tree R inclusion, the challenged column);
//   - storage-proofs-core gadgets/por.rs (PoRCircuit with a private root, as
//     enforce_inclusion uses it, over base, sub and top tree levels),
//     insertion.rs, constraint.rs (equal, add), encode.rs and uint64.rs,
//     and filecoin-hashers' hash_multi_leaf_circuit for Poseidon and
//     SHA-256 trees.
//
// post.go ports storage-proofs-post's FallbackPoStCircuit, the window and
// winning PoSt partition circuit ([SynthesizePoSt], [CountPoSt]); its
// witness and public inputs come from filecoin/post.
//
// The bellperson gadgets themselves (Boolean, UInt32, SHA-256, multipack,
// AllocatedNum, neptune's Poseidon) live in filecoin/gadgets.
//
// A circuit is determined by its [Shape] (sector nodes, layers, tree R/C
// shape, challenges per partition); V1, V1_1 and synthetic proofs of one
// sector size share it and differ only in their graph and challenges, which
// enter through the witness and the public inputs. [FromC1] turns
// partition k of a decoded C1 into a [Witness]; [Synthesize] with a nil
// witness synthesizes the blank circuit for the shape recorder and the
// counter. [PublicInputsOf] computes the public inputs from a sector's
// public data alone.
//
// Tests pin the circuit to upstream fingerprints: the input and constraint
// counts of rust-fil-proofs' stacked_circuit.rs, por_circuit.rs,
// create_label.rs and hash.rs tests, and (opt-in, see big_test.go) the
// 32GiB partition sizes curio's cuzk measured from rust-fil-proofs'
// circuit. Opt-in too (C2FLOW_FILECOIN_SETUP=1, see groth16_test.go): a
// development Groth16 setup over the recorded 2KiB R1CS, cached on disk by
// its digest, a proof of a sealed sector by c2flow's split prover, and
// gnark's verifier accepting it with the public inputs computed from public
// data alone.
package circuit
