// Package snark holds Filecoin's SNARK schemes for c2flow's pipeline
// (scheme.Scheme), over one keyring of Filecoin's Groth16 parameters:
// the seal scheme (Scheme: PoRep Commit-2) and the update scheme
// (UpdateScheme, the update*.go files: SnapDeals' ProveReplicaUpdate2).
// Both admit Curio's requests (admit.go, scheme.Admitter).
//
// The seal scheme decodes a Filecoin C1 (lotus/curio
// SealCommitPhase1Output JSON or the Commit2In wrapper) and binds it to
// its sector's identity, checks it natively, finds and checks Filecoin's
// Groth16 parameters, and gives the circuit of a registered seal proof:
// the split prover over the parameters, the synthesis of one partition,
// its verification and the C2 format (Filecoin's concatenated 192-byte
// proofs, what SealCommitPhase2 returns as proof).
//
// # Parameters
//
// Filecoin's parameter files (v28-stacked-proof-of-replication-...
// .params and .vk, one pair per sector size) live in a directory
// ([DefaultDir]: $FIL_PROOFS_PARAMETER_CACHE, else
// /var/tmp/filecoin-proof-parameters) beside Filecoin's parameters.json,
// which names them and records their digests. A file the directory lacks
// is downloaded from an optional [Remote] (key params/filecoin/<name>).
// Every file is checked against its parameters.json digest before use; a
// pair that parameters.json does not list is refused unless the directory
// is a development setup ([DevSetup]).
//
// # Development setups
//
// Filecoin's ceremony parameters cannot be made here, so tests and
// development deployments use [DevSetup]: gnark's single-party
// groth16.Setup over the recorded circuit written in Filecoin's format.
// Proofs made with them verify only under their own .vk and are worthless
// on chain; every log line and error of a circuit loaded from one says
// DEVELOPMENT SETUP.
package snark
