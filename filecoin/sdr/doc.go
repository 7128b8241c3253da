// Package sdr is a bit-exact Go port of Filecoin's Stacked DRG (SDR)
// proof-of-replication primitives from rust-fil-proofs
// (storage-proofs-core, storage-proofs-porep, filecoin-proofs):
//
//   - the stacked bucket graph: BucketGraph DRG parents (degree 6, sampled
//     with rand_chacha's ChaCha8Rng seeded from the porep_id) and Feistel
//     expander parents (degree 8); see Graph, NewGraph, Graph.Parents;
//   - the parent cache (14 u32 LE parents per node), its file name and its
//     SHA-256 as recorded in parent_cache.json; see Graph.WriteParentCache,
//     Graph.ParentCacheDigest, Graph.ParentCacheID, Graph.BuildParentCache;
//   - replica ids (ReplicaID), labels (Graph.Labels, Graph.GenerateLabels
//     for whole small sectors; NodeLabel and LabelHash for single nodes, as
//     labeling-proof verification needs), and the field encoding of the
//     replica (Encode, Decode);
//   - PoRep challenges: interactive, synthetic (Feat_SyntheticPoRep) and
//     non-interactive (InteractiveChallenges, SynthGenerator,
//     NonInteractiveChallenges, Challenges).
//
// The algorithms take plain parameters: a node count, a porep_id and an API
// version for the graph (NewGraph), a mode and counts for the challenges
// (ChallengeParams). The registered seal proofs and their constants live in
// filecoin/proofs; GraphFor, ModeFor and ChallengeParamsFor fill the
// parameters from a proofs.SealProofInfo.
//
// All 32-byte values (replica ids, labels, commitments, field elements) are
// little-endian field element representations, as rust-fil-proofs
// serializes its domains. Node indices are uint64 in the API; graphs have
// at most 2^32-1 nodes, so parents fit in uint32 as in the parent cache.
//
// Besides filecoin/proofs, the package depends only on the standard
// library, golang.org/x/crypto's BLAKE2b and gnark-crypto's BLS12-381
// scalar field; it carries its own ChaCha (8 and 20 rounds) because the
// Filecoin constructions need a layout and round counts the standard
// library does not offer.
package sdr
