package snark_test

import (
	"context"
	"fmt"
	"log/slog"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	groth16bls "github.com/consensys/gnark/backend/groth16/bls12-381"

	"github.com/c2flow/c2flow/filecoin/circuit"
	"github.com/c2flow/c2flow/filecoin/fctest"
	"github.com/c2flow/c2flow/filecoin/groth"
	"github.com/c2flow/c2flow/filecoin/proofs"
	"github.com/c2flow/c2flow/filecoin/r1cs"
	"github.com/c2flow/c2flow/filecoin/snark"
)

// devKeys returns the gnark keys of the shared 2KiB development setup
// (DevSetup into the test parameter directory, the pair made on first use
// and cached by circuit digest), read from its .params file as the
// scheme reads Filecoin's.
func devKeys(t *testing.T, proof string, shape *r1cs.Shape) (*groth16bls.ProvingKey, *groth16bls.VerifyingKey) {
	t.Helper()
	files, err := snark.DevSetup(context.Background(), proof, fctest.DevParams(), fctest.Setups(),
		slog.New(slog.NewTextHandler(t.Output(), nil)))
	if err != nil {
		t.Fatal(err)
	}
	d, err := groth.DensityOf(shape)
	if err != nil {
		t.Fatal(err)
	}
	pk, vk, err := groth.LoadProvingKey(files.Params, d, groth.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return pk, vk
}

func peakRSS() string {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return "?"
	}
	return fmt.Sprintf("%d MiB", ru.Maxrss>>10) // Linux: KiB
}

// TestGroth16Filecoin2KiB checks the circuit and the development setup
// with gnark's own prover, beside the split prover TestProve2KiB uses: the
// R1CS recorded from the blank 2KiB StackedCircuit (with bellperson's
// per-input constraints, as Filecoin's parameters were generated) in
// gnark's form, the keys read from the development setup's .params file,
// the witness of a sealed 2KiB sector synthesized by the witness builder,
// and gnark's groth16.Prove (whose solver re-checks every constraint)
// making a proof gnark's verifier accepts with the public inputs computed
// from the sector's public data alone, and rejects with another seed's.
func TestGroth16Filecoin2KiB(t *testing.T) {
	p := proofs.StackedDrg2KiBV1_1
	info, err := proofs.Lookup(p)
	if err != nil {
		t.Fatal(err)
	}
	sealed := seal2KiB(t, p, 11)
	replicaID, err := sealed.Public.ReplicaID()
	if err != nil {
		t.Fatal(err)
	}

	// The R1CS, as bellperson's parameter generator sees it.
	t0 := time.Now()
	s := circuit.ShapeOf(info)
	shape := r1cs.NewShape()
	if err := circuit.Synthesize(shape, s, nil); err != nil {
		t.Fatal(err)
	}
	shape.AppendInputConstraints()
	if err := shape.Err(); err != nil {
		t.Fatal(err)
	}
	digest, err := shape.Digest()
	if err != nil {
		t.Fatal(err)
	}
	tRecord := time.Since(t0)
	t0 = time.Now()
	ccs, err := shape.Gnark()
	if err != nil {
		t.Fatal(err)
	}
	tGnark := time.Since(t0)
	if ccs.GetNbConstraints() != shape.NumConstraints() || ccs.GetNbPublicVariables() != shape.NumInputs || ccs.GetNbSecretVariables() != shape.NumAux {
		t.Fatalf("gnark R1CS: %d constraints, %d public, %d secret; shape %d, %d, %d",
			ccs.GetNbConstraints(), ccs.GetNbPublicVariables(), ccs.GetNbSecretVariables(), shape.NumConstraints(), shape.NumInputs, shape.NumAux)
	}
	t.Logf("R1CS: %d constraints (%d synthesized + %d per-input), %d inputs, %d aux, digest %s; recorded in %v, gnark form in %v",
		shape.NumConstraints(), shape.NumSynthesized, shape.NumInputs, shape.NumInputs, shape.NumAux, digest[:16], tRecord, tGnark)

	t0 = time.Now()
	pk, vk := devKeys(t, info.Name, shape)
	t.Logf("keys: development setup (made or read from the cache) and loaded in %v (peak RSS %s)", time.Since(t0), peakRSS())

	// The witness: assignment and a, b, c, per-input constraints included.
	t0 = time.Now()
	_, w, err := circuit.FromC1(sealed.C1, 0)
	if err != nil {
		t.Fatal(err)
	}
	wit := r1cs.NewWitness(r1cs.WitnessOptions{ABC: true,
		InputsHint: shape.NumInputs, AuxHint: shape.NumAux, ConstraintsHint: shape.NumConstraints()})
	if err := circuit.Synthesize(wit, s, w); err != nil {
		t.Fatal(err)
	}
	wit.AppendInputConstraints()
	if err := wit.Err(); err != nil {
		t.Fatal(err)
	}
	tSynth := time.Since(t0)
	if len(wit.A) != ccs.GetNbConstraints() || len(wit.Inputs) != shape.NumInputs || len(wit.Aux) != shape.NumAux {
		t.Fatalf("witness: %d rows, %d inputs, %d aux; R1CS %d, %d, %d",
			len(wit.A), len(wit.Inputs), len(wit.Aux), ccs.GetNbConstraints(), shape.NumInputs, shape.NumAux)
	}
	t.Logf("synthesis (witness builder with a, b, c): %v", tSynth)

	// Public inputs from public data alone; gnark's public witness omits ONE.
	public := func(seed [32]byte) fr.Vector {
		t.Helper()
		in, err := circuit.PublicInputsOf(info, replicaID, sealed.Public.CommD, sealed.Public.CommR, seed, 0)
		if err != nil {
			t.Fatal(err)
		}
		return in
	}
	pub := public(sealed.Public.Seed)
	for i := range pub {
		if !pub[i].Equal(&wit.Inputs[i+1]) {
			t.Fatalf("public input %d differs from the witness's input %d", i, i+1)
		}
	}
	otherSeed := sealed.Public.Seed
	otherSeed[0] ^= 1
	wrong := public(otherSeed)

	// gnark's prover on the same R1CS and witness.
	full, err := r1cs.GnarkWitness(wit.Inputs, wit.Aux)
	if err != nil {
		t.Fatal(err)
	}
	t0 = time.Now()
	gproof, err := groth16bls.Prove(ccs, pk, full)
	if err != nil {
		t.Fatalf("gnark prove: %v", err)
	}
	tG := time.Since(t0)
	if err := groth16bls.Verify(gproof, vk, pub); err != nil {
		t.Fatalf("gnark's verifier rejects gnark's proof: %v", err)
	}
	if err := groth16bls.Verify(gproof, vk, wrong); err == nil {
		t.Fatalf("the proof verifies with another seed's public inputs")
	}
	t.Logf("gnark groth16.Prove: %v; GOMAXPROCS %d; peak RSS %s", tG, runtime.GOMAXPROCS(0), peakRSS())
}
