package bench

import (
	"context"
	"fmt"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/c2flow/c2flow/filecoin/circuit"
	"github.com/c2flow/c2flow/filecoin/proofs"
	"github.com/c2flow/c2flow/filecoin/r1cs"
	"github.com/c2flow/c2flow/filecoin/seal"
	"github.com/c2flow/c2flow/filecoin/update"
)

// UpdateWitness is the EmptySectorUpdateCircuit of a registered update
// proof (proofs.UpdateByName: "StackedDrg32GiBV1") over a real update of
// its size: a committed-capacity sector sealed sparsely with the size's
// V1_1 seal proof (as the test updater seals) and updated with zero data
// (update.UpdateSparseZero) at h_default. Every partition can be built,
// each from its vanilla proof verified natively first.
func UpdateWitness(ctx context.Context, proof string) (WitnessCircuit, error) {
	up, err := proofs.UpdateByName(proof)
	if err != nil {
		return WitnessCircuit{}, err
	}
	info, err := proofs.ByName(up.Name + "_1")
	if err != nil {
		return WitnessCircuit{}, fmt.Errorf("%s: the seal proof: %w", up.Name, err)
	}
	s, err := circuit.UpdateShapeOf(up.SectorSize)
	if err != nil {
		return WitnessCircuit{}, fmt.Errorf("%s: %w", up.Name, err)
	}
	var prover [32]byte
	prover[0] = 7
	sealed, err := seal.SealSparse(ctx, seal.TestParams(info.Proof, prover, 1))
	if err != nil {
		return WitnessCircuit{}, fmt.Errorf("%s: seal a sparse %s sector: %w", up.Name, info.Name, err)
	}
	u, err := update.UpdateSparseZero(s, s.HDefault(), sealed)
	if err != nil {
		return WitnessCircuit{}, fmt.Errorf("%s: %w", up.Name, err)
	}
	wc := WitnessCircuit{
		Proof:      up.Name,
		Partitions: s.Partitions(),
		Blank:      func(cs r1cs.System) error { return circuit.SynthesizeUpdate(cs, s, nil) },
		Build: func(k int) (func(*r1cs.Witness) error, error) {
			w, err := u.Witness(k)
			if err != nil {
				return nil, fmt.Errorf("%s partition %d: %w", up.Name, k, err)
			}
			return func(wit *r1cs.Witness) error { return circuit.SynthesizeUpdate(wit, s, w) }, nil
		},
		Inputs: func(k int) ([]fr.Element, error) { return u.PublicInputs(k) },
	}
	if wc.Counts, err = countBlank(wc.Blank); err != nil {
		return WitnessCircuit{}, fmt.Errorf("%s: count: %w", up.Name, err)
	}
	return wc, nil
}
