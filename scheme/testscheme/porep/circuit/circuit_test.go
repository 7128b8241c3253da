package circuit_test

import (
	"testing"

	"github.com/consensys/gnark-crypto/ecc"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/consensys/gnark/backend/groth16"
	"github.com/consensys/gnark/constraint"
	"github.com/consensys/gnark/frontend"
	"github.com/consensys/gnark/frontend/cs/r1cs"
	"github.com/consensys/gnark/std/permutation/poseidon2"
	"github.com/consensys/gnark/test"

	"github.com/c2flow/c2flow/scheme/testscheme/params/paramstest"
	"github.com/c2flow/c2flow/scheme/testscheme/porep"
	"github.com/c2flow/c2flow/scheme/testscheme/porep/circuit"
	"github.com/c2flow/c2flow/scheme/testscheme/porep/poreptest"
)

type compressCircuit struct {
	L, R frontend.Variable
	Out  frontend.Variable `gnark:",public"`
}

func (c *compressCircuit) Define(api frontend.API) error {
	h, err := poseidon2.NewPoseidon2FromParameters(api, porep.HashWidth, porep.HashFullRounds, porep.HashPartialRounds)
	if err != nil {
		return err
	}
	api.AssertIsEqual(h.Compress(c.L, c.R), c.Out)
	return nil
}

// The native hash and the in-circuit gadget are the same function.
func TestNativeHashEqualsCircuitHash(t *testing.T) {
	h := porep.NewHasher()
	for i := 0; i < 8; i++ {
		var l, r fr.Element
		if _, err := l.SetRandom(); err != nil {
			t.Fatal(err)
		}
		r.SetRandom()
		out := h.Compress(l, r)
		if err := test.IsSolved(&compressCircuit{}, &compressCircuit{L: l, R: r, Out: out}, ecc.BLS12_381.ScalarField()); err != nil {
			t.Fatalf("native compress disagrees with the circuit: %v", err)
		}
		out.SetUint64(uint64(i))
		if test.IsSolved(&compressCircuit{}, &compressCircuit{L: l, R: r, Out: out}, ecc.BLS12_381.ScalarField()) == nil {
			t.Fatal("circuit accepted a wrong hash")
		}
	}
}

func compile(t *testing.T, profile string) constraint.ConstraintSystem {
	t.Helper()
	p, _ := porep.LookupProfile(profile)
	ccs, err := frontend.Compile(ecc.BLS12_381.ScalarField(), r1cs.NewBuilder, circuit.New(p))
	if err != nil {
		t.Fatal(err)
	}
	return ccs
}

func solve(ccs constraint.ConstraintSystem, c1 *porep.C1, k int) error {
	w, err := frontend.NewWitness(circuit.Assignment(c1.Statement(), c1.CommC, c1.CommRLast, c1.Partitions[k]), ecc.BLS12_381.ScalarField())
	if err != nil {
		return err
	}
	_, err = ccs.Solve(w)
	return err
}

func TestTamperedC1LeavesCircuitUnsatisfiable(t *testing.T) {
	ccs := compile(t, "2KiB")
	if err := solve(ccs, poreptest.Sector(t, "2KiB", 1).C1(), 0); err != nil {
		t.Fatalf("untampered sector does not satisfy the circuit: %v", err)
	}
	for _, tc := range poreptest.Tampers {
		t.Run(tc.Name, func(t *testing.T) {
			c1 := poreptest.Sector(t, "2KiB", 1).C1()
			tc.Do(c1)
			if err := solve(ccs, c1, 0); err == nil {
				t.Fatal("tampered C1 satisfies the circuit")
			}
		})
	}
}

func TestEveryPartitionSatisfies(t *testing.T) {
	ccs := compile(t, "32KiB")
	c1 := poreptest.Sector(t, "32KiB", 2).C1()
	for k := range c1.Partitions {
		if err := solve(ccs, c1, k); err != nil {
			t.Fatalf("partition %d: %v", k, err)
		}
	}
	// Partition 1's openings do not prove partition 0's challenges.
	c1.Partitions[1].Partition = 0
	w, _ := frontend.NewWitness(circuit.Assignment(c1.Statement(), c1.CommC, c1.CommRLast, c1.Partitions[1]), ecc.BLS12_381.ScalarField())
	if _, err := ccs.Solve(w); err == nil {
		t.Fatal("partition 1's proof satisfied partition 0's statement")
	}
}

// The tiny profile proved with gnark's own Prove and checked with Verify.
func TestGnarkProveVerifyTiny(t *testing.T) {
	keys := paramstest.Keys(t, "2KiB") // development setup, cached
	ccs, pk, vk := keys.CCS, keys.PK, keys.VK
	c1 := poreptest.Sector(t, "2KiB", 5).C1()
	w, err := frontend.NewWitness(circuit.Assignment(c1.Statement(), c1.CommC, c1.CommRLast, c1.Partitions[0]), ecc.BLS12_381.ScalarField())
	if err != nil {
		t.Fatal(err)
	}
	proof, err := groth16.Prove(ccs, pk, w)
	if err != nil {
		t.Fatal(err)
	}
	pub, err := frontend.NewWitness(circuit.PublicAssignment(c1.Statement(), 0), ecc.BLS12_381.ScalarField(), frontend.PublicOnly())
	if err != nil {
		t.Fatal(err)
	}
	if err := groth16.Verify(proof, vk, pub); err != nil {
		t.Fatalf("proof rejected: %v", err)
	}
	other := poreptest.Sector(t, "2KiB", 6).C1()
	pub2, _ := frontend.NewWitness(circuit.PublicAssignment(other.Statement(), 0), ecc.BLS12_381.ScalarField(), frontend.PublicOnly())
	if groth16.Verify(proof, vk, pub2) == nil {
		t.Fatal("proof of sector 5 verified for sector 6")
	}
}
