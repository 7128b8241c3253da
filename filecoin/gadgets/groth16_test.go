package gadgets

import (
	"testing"

	"github.com/c2flow/c2flow/filecoin/r1cs"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/consensys/gnark/backend/groth16"
)

// TestPoseidonGroth16 runs a gadget circuit end to end through gnark: the
// recorded shape (with bellperson's per-input constraints) is set up,
// proved with the witness builder's assignment and verified with the
// public input the circuit exposes.
func TestPoseidonGroth16(t *testing.T) {
	c, err := PoseidonConstantsFor(2)
	if err != nil {
		t.Fatal(err)
	}
	rng := newRand()
	x, y := randFr(rng), randFr(rng)
	circuit := func(cs r1cs.System) {
		a, b := AllocNum(cs, x), AllocNum(cs, y)
		h, err := PoseidonHash(cs, []AllocatedNum{a, b}, c)
		if err != nil {
			t.Fatal(err)
		}
		h.Inputize(cs)
	}
	w, s := synth(t, circuit)
	s.AppendInputConstraints()
	w.AppendInputConstraints()
	if h, err := s.BellpersonHash(); err == nil {
		t.Logf("poseidon arity 2 + inputize: %v, bellperson test-cs hash %s", s.Stats(), h)
	}
	ccs, err := s.Gnark()
	if err != nil {
		t.Fatal(err)
	}
	pk, vk, err := groth16.Setup(ccs)
	if err != nil {
		t.Fatal(err)
	}
	full, err := r1cs.GnarkWitness(w.Inputs, w.Aux)
	if err != nil {
		t.Fatal(err)
	}
	proof, err := groth16.Prove(ccs, pk, full)
	if err != nil {
		t.Fatal(err)
	}
	pub, err := r1cs.GnarkPublicWitness(w.Inputs)
	if err != nil {
		t.Fatal(err)
	}
	if err := groth16.Verify(proof, vk, pub); err != nil {
		t.Fatalf("verify: %v", err)
	}
	bad := append([]fr.Element(nil), w.Inputs...)
	bad[1].SetUint64(1)
	badPub, _ := r1cs.GnarkPublicWitness(bad)
	if groth16.Verify(proof, vk, badPub) == nil {
		t.Fatal("proof verified with a wrong hash")
	}
}
