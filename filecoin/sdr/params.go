package sdr

import "github.com/c2flow/c2flow/filecoin/proofs"

// The SDR algorithms take their parameters as plain values (node count,
// porep_id, API version, challenge mode and counts); filecoin/proofs is the
// registry those values come from. GraphFor, ModeFor and ChallengeParamsFor
// fill them from a registered proof's description.

// GraphFor returns the SDR graph of a registered seal proof: NewGraph with
// its node count, porep_id and API version.
func GraphFor(info proofs.SealProofInfo) (*Graph, error) {
	return NewGraph(info.Nodes, info.PoRepID, info.APIVersion)
}

// ModeFor returns how a registered seal proof derives its PoRep challenges,
// by its API features (filecoin-proofs parameters.rs select_challenges):
// NonInteractive with FeatureNonInteractivePoRep, Synthetic with
// FeatureSyntheticPoRep, Interactive otherwise.
func ModeFor(info proofs.SealProofInfo) ChallengeMode {
	switch {
	case info.Features.Has(proofs.FeatureNonInteractivePoRep):
		return NonInteractive
	case info.Features.Has(proofs.FeatureSyntheticPoRep):
		return Synthetic
	}
	return Interactive
}

// ChallengeParamsFor returns the challenge derivation inputs of a sector of
// a registered seal proof: its mode (ModeFor), node count and challenges
// per partition, with the sector's replica id, comm_r and interactive seed.
func ChallengeParamsFor(info proofs.SealProofInfo, replicaID, commR, seed [32]byte) ChallengeParams {
	return ChallengeParams{
		Mode:                   ModeFor(info),
		SectorNodes:            info.Nodes,
		ChallengesPerPartition: info.ChallengesPerPartition,
		ReplicaID:              replicaID,
		CommR:                  commR,
		Seed:                   seed,
	}
}
