package testscheme

import (
	"context"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/consensys/gnark-crypto/ecc"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	groth16bls "github.com/consensys/gnark/backend/groth16/bls12-381"
	csbls "github.com/consensys/gnark/constraint/bls12-381"
	"github.com/consensys/gnark/frontend"

	"github.com/c2flow/c2flow/prover"
	"github.com/c2flow/c2flow/prover/packed"
	"github.com/c2flow/c2flow/scheme/testscheme/params"
	"github.com/c2flow/c2flow/scheme/testscheme/porep"
	"github.com/c2flow/c2flow/scheme/testscheme/porep/circuit"
)

// ProverKeys is what the split prover needs of a profile's keys: the
// proving key, and the compiled circuit recorded as the system that
// evaluates a, b, c from a packed assignment.
func ProverKeys(k *params.Keys) (*prover.Keys, error) {
	sys, err := prover.GnarkSystem(k.CCS)
	if err != nil {
		return nil, fmt.Errorf("profile %s: %w", k.Profile.Name, err)
	}
	return &prover.Keys{PK: k.PK, VK: k.VK, NbPublic: k.CCS.GetNbPublicVariables(), System: sys, Digest: k.Digest}, nil
}

// NewProver returns the split prover over a profile's keys; log may be
// nil.
func NewProver(k *params.Keys, opts ...func(*prover.Prover)) (*prover.Prover, error) {
	keys, err := ProverKeys(k)
	if err != nil {
		return nil, err
	}
	pr, err := prover.New(keys, nil)
	if err != nil {
		return nil, err
	}
	for _, o := range opts {
		o(pr)
	}
	return pr, nil
}

// Synthesize solves partition k of a C1 into its witness with the
// profile's compiled circuit, packed. The C1 must have been checked
// (porep.C1.Verify); an unsatisfiable circuit is an error. gnark's solver
// makes a dense wire vector and a, b, c; only the wires are kept, packed
// (the test scheme packs less than Filecoin's circuits: its Poseidon2
// values are field elements).
func Synthesize(ctx context.Context, keys *params.Keys, c1 *porep.C1, k int) (*prover.Solution, error) {
	if k < 0 || k >= len(c1.Partitions) {
		return nil, fmt.Errorf("synthesize: partition %d of %d", k, len(c1.Partitions))
	}
	if c1.Profile.Name != keys.Profile.Name {
		return nil, fmt.Errorf("synthesize: C1 of profile %s, keys of %s", c1.Profile.Name, keys.Profile.Name)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	id := prover.PartitionID(hex.EncodeToString(c1.ProverID[:]), c1.SectorID, k)
	t0 := time.Now()
	w, err := frontend.NewWitness(circuit.Assignment(c1.Statement(), c1.CommC, c1.CommRLast, c1.Partitions[k]), ecc.BLS12_381.ScalarField())
	if err != nil {
		return nil, fmt.Errorf("synthesize %s: witness: %w", id, err)
	}
	res, err := keys.CCS.Solve(w)
	if err != nil {
		return nil, fmt.Errorf("synthesize %s: %w", id, err)
	}
	sol := res.(*csbls.R1CSSolution)
	s := &prover.Solution{Partition: id, W: packed.Pack(sol.W), SynthTime: time.Since(t0)}
	return s, ctx.Err()
}

// PublicWitness is the public input vector of partition k, derived from the
// statement alone.
func PublicWitness(st porep.Statement, k int) (fr.Vector, error) {
	w, err := frontend.NewWitness(circuit.PublicAssignment(st, k), ecc.BLS12_381.ScalarField(), frontend.PublicOnly())
	if err != nil {
		return nil, fmt.Errorf("public witness: %w", err)
	}
	return w.Vector().(fr.Vector), nil
}

// Verify checks a partition proof with gnark's verifier against the
// verifying key and the statement.
func Verify(vk *groth16bls.VerifyingKey, st porep.Statement, k int, proof *groth16bls.Proof) error {
	pub, err := PublicWitness(st, k)
	if err != nil {
		return err
	}
	if err := groth16bls.Verify(proof, vk, pub); err != nil {
		return fmt.Errorf("partition %d: proof rejected: %w", k, err)
	}
	return nil
}
