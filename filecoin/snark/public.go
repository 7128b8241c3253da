package snark

import (
	"context"

	"github.com/c2flow/c2flow/filecoin/c1"
	"github.com/c2flow/c2flow/filecoin/post"
	"github.com/c2flow/c2flow/filecoin/proofs"
	"github.com/c2flow/c2flow/filecoin/seal"
	"github.com/c2flow/c2flow/scheme"
)

// What commands ask of a Filecoin scheme beyond the scheme interfaces:
// each is a method, so a command finds it on the scheme the registry's set
// gives for a proof name (an interface the command declares), and imports
// no scheme package.

// PublicSector is an update's public data alone (UpdatePublic), named by
// its registered update proof: c2flow verify of an update proof by its
// commitments.
func (*UpdateScheme) PublicSector(proof string, commROld, commRNew, commDNew [32]byte) (scheme.Sector, error) {
	info, err := proofs.UpdateByName(proof)
	if err != nil {
		return nil, err
	}
	return UpdatePublic(info, commROld, commRNew, commDNew)
}

// UpdateProofName is the pipeline's name of a registered update proof
// (UpdatePrefix: update and seal proofs share filecoin-proofs-api's
// names); a command finds this scheme by its request kind
// (scheme.Set.Admitter(scheme.KindSnap)).
func (*UpdateScheme) UpdateProofName(info proofs.UpdateProofInfo) string {
	return UpdateProfile(info)
}

// PartitionPublic is a PoSt partition's public data alone (PoStPublic):
// c2flow verify-post checks a record's partitions with it.
func (*PoStScheme) PartitionPublic(info proofs.PoStProofInfo, proverID, randomness [32]byte, k int, replicas []post.PublicSector) (scheme.Sector, error) {
	return PoStPublic(info, proverID, randomness, k, replicas)
}

// CheckC1 checks a decoded C1, from the file name, against the public
// data PublicFor finds for it (given, a sectors.json beside the file, or
// its own), verifying its vanilla proofs natively with workers
// goroutines (0: GOMAXPROCS), and returns where the public data came
// from (c2flow c1 check).
func (*Scheme) CheckC1(ctx context.Context, name string, a *c1.Artifact, given c1.Given, workers int) (string, error) {
	pub, source, err := PublicFor(name, a, given)
	if err != nil {
		return source, err
	}
	sec, err := NewSector(a.C1, pub)
	if err != nil {
		return source, err
	}
	return source, sec.VerifyWith(ctx, seal.WithWorkers(workers))
}
