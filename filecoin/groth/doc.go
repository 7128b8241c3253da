// Package groth is the Filecoin-format Groth16 layer over gnark-crypto's
// BLS12-381: bellperson's parameter files, Filecoin's proof bytes, and the
// conversion between bellperson's parameter layout and the gnark proving
// and verifying keys that gnark's prover and c2flow's split prover
// (package prover) consume.
//
// File formats (bellperson 0.27.0 src/groth16/verifying_key.rs, params.rs):
//
//   - a .vk file is alpha_g1, beta_g1, beta_g2, gamma_g2, delta_g1,
//     delta_g2, a u32 big-endian IC count, then IC: points in the zcash
//     uncompressed encoding (G1 96 bytes, G2 192 bytes);
//   - a .params file is the verifying key, then the h, l, a, b_g1 and b_g2
//     queries, each a u32 big-endian count followed by that many
//     uncompressed points. No point of any query is the point at infinity:
//     bellperson's generator drops the infinity points of a, b_g1 and b_g2
//     (the variables whose A or B polynomial is zero), so reading a .params
//     file for proving needs the circuit's densities ([Density]).
//
// [ReadVerifyingKey] and [ReadParams] read them, [VerifyingKey.WriteTo] and
// [Params.WriteTo] write them. [ReadParams] and [ReadLayout] work over an
// io.ReaderAt, decoding points in parallel chunks, and over a memory-mapped
// file ([MapFile]) without copying it: Filecoin's 32GiB parameters are ~44
// GiB. Points are checked on the curve by default (bellperson's unchecked
// mode, which Filecoin uses for its parameter files: about 0.8 GB/s on two
// cores); [CheckSubgroup] adds the subgroup check, some 200 times slower.
// [FileDigest] computes the digest parameters.json records.
//
// Conversion ([Params.ToGnark], [FromGnark]): bellperson's a, b_g1, b_g2
// are gnark's G1.A, G1.B, G2.B with gnark's InfinityA and InfinityB masks
// marking the dropped points; l is gnark's private G1.K and the IC is the
// verifying key's G1.K. The h query, tau^i (tau^n - 1)/delta for
// i < n - 1 over a domain of size n (the constraint count rounded up to a
// power of two), is gnark's G1.Z in bit-reversed order: gnark's prover
// computes the quotient's coefficients in bit-reversed order and its setup
// stores the same powers permuted. Both libraries take the domain's
// generator from the same 2^32-th root of unity and use 7 as the coset
// shift; the tests check both constants against blstrs' and the whole
// mapping by proving under parameters generated the way bellperson
// generates them.
//
// Proofs ([Proof]) are bellperson's: A (G1) | B (G2) | C (G1), each
// compressed the zcash way, 192 bytes per partition, partitions
// concatenated. [PreparedVerifyingKey.Verify] checks one partition;
// [VerifySeal] verifies a seal record as filecoin-proofs' verify_seal
// does, computing every partition's public inputs from the record's public
// data alone ([SealRecord.PublicInputs]). [TrapdoorKey] simulates proofs
// under a key whose trapdoor is known, for tests only.
package groth
