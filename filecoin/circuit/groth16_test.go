package circuit

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"runtime"
	"runtime/debug"
	"syscall"
	"testing"
	"time"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	groth16bls "github.com/consensys/gnark/backend/groth16/bls12-381"
	csbls "github.com/consensys/gnark/constraint/bls12-381"

	"github.com/c2flow/c2flow/filecoin/proofs"
	"github.com/c2flow/c2flow/filecoin/r1cs"
	"github.com/c2flow/c2flow/gpu"
	"github.com/c2flow/c2flow/params"
	"github.com/c2flow/c2flow/params/paramstest"
	"github.com/c2flow/c2flow/prover"
)

// setupEnv enables TestGroth16Filecoin2KiB: its first run makes a
// development setup of the 2KiB circuit (2.7M constraints: minutes and GBs
// on a small machine), cached for later runs, each of which still proves
// twice (split prover and gnark) in about a minute.
const setupEnv = "C2FLOW_FILECOIN_SETUP"

// devKeys returns a development setup's keys for ccs, the gnark form of the
// shape whose digest is digest, from the shared test cache of development
// setups (paramstest.FilecoinSetups: read if there, else made by
// groth16.Setup and written there). cached reports whether the keys were
// read.
func devKeys(t *testing.T, digest string, ccs *csbls.R1CS) (pk *groth16bls.ProvingKey, vk *groth16bls.VerifyingKey, cached bool) {
	t.Helper()
	pk, vk, cached, err := paramstest.FilecoinSetups().Keys(context.Background(), digest,
		ccs.GetNbPublicVariables()+ccs.GetNbSecretVariables(), ccs.GetNbConstraints(),
		func() (*csbls.R1CS, error) { return ccs, nil }, slog.New(slog.NewTextHandler(t.Output(), nil)))
	if err != nil {
		t.Fatal(err)
	}
	return pk, vk, cached
}

func peakRSS() string {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return "?"
	}
	return fmt.Sprintf("%d MiB", ru.Maxrss>>10) // Linux: KiB
}

// TestGroth16Filecoin2KiB is the end-to-end check of the circuit
// against Groth16: a development setup over the R1CS recorded from the blank
// 2KiB StackedCircuit (with bellperson's per-input constraints, as
// Filecoin's parameters were generated), the witness of a sealed 2KiB sector
// synthesized by the witness builder (a, b, c included), a proof by c2flow's
// split prover (device phase on a CPU slot, then finalize), and gnark's
// verifier accepting it with the public inputs computed from the sector's
// public data alone, and rejecting it with another seed's. gnark's own
// groth16.Prove proves the same R1CS and witness for comparison (its
// solver re-checks every constraint), and its proof verifies too.
func TestGroth16Filecoin2KiB(t *testing.T) {
	if os.Getenv(setupEnv) == "" {
		t.Skipf("proves the 2KiB circuit (2.7M constraints) with a development setup made on first use (minutes, ~GBs; cached in %s); set %s=1 to run",
			paramstest.Dir(), setupEnv)
	}
	ctx := context.Background()
	p := proofs.StackedDrg2KiBV1_1
	info, err := proofs.Lookup(p)
	if err != nil {
		t.Fatal(err)
	}
	sealed := sealTest(t, p, 11)
	replicaID, err := sealed.Public.ReplicaID()
	if err != nil {
		t.Fatal(err)
	}

	// The R1CS, as bellperson's parameter generator sees it.
	t0 := time.Now()
	s := ShapeOf(info)
	shape := r1cs.NewShape()
	if err := Synthesize(shape, s, nil); err != nil {
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
	pk, vk, cached := devKeys(t, digest, ccs)
	t.Logf("keys: %s in %v (peak RSS %s)", map[bool]string{true: "read from the cache", false: "development setup"}[cached], time.Since(t0), peakRSS())

	// The witness: assignment and a, b, c, per-input constraints included.
	t0 = time.Now()
	_, w, err := FromC1(sealed.C1, 0)
	if err != nil {
		t.Fatal(err)
	}
	wit := r1cs.NewWitness(r1cs.WitnessOptions{ABC: true,
		InputsHint: shape.NumInputs, AuxHint: shape.NumAux, ConstraintsHint: shape.NumConstraints()})
	if err := Synthesize(wit, s, w); err != nil {
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
		in, err := PublicInputsOf(info, replicaID, sealed.Public.CommD, sealed.Public.CommR, seed, 0)
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

	// The split prover. gnark's wire order, which Shape.Gnark keeps: the
	// inputs (ONE first), then the aux variables.
	keys := &params.Keys{Digest: digest[:16], CCS: ccs, PK: pk, VK: vk}
	pr, err := prover.New(keys, nil)
	if err != nil {
		t.Fatal(err)
	}
	slots, err := gpu.CPUSlots(1, 0)
	if err != nil {
		t.Fatal(err)
	}
	sol := &prover.Solution{
		Partition: "2KiB/0",
		W:         append(append(make([]fr.Element, 0, len(wit.Inputs)+len(wit.Aux)), wit.Inputs...), wit.Aux...),
		A:         wit.A, B: wit.B, C: wit.C,
	}
	wit.A, wit.B, wit.C = nil, nil, nil
	t0 = time.Now()
	partial, err := pr.Start(ctx, slots, sol)
	if err != nil {
		t.Fatal(err)
	}
	tDevice := time.Since(t0)
	proof, tFinish, err := pr.Finish(ctx, partial)
	if err != nil {
		t.Fatal(err)
	}
	tSplit := tDevice + tFinish
	t.Logf("split prover: %v = device phase %v (NTT %v, MSM %v) + finalize %v", tSplit, tDevice, partial.NTTTime, partial.MSMTime, tFinish)
	sol = nil
	debug.FreeOSMemory()

	t0 = time.Now()
	if err := groth16bls.Verify(proof, vk, pub); err != nil {
		t.Fatalf("gnark's verifier rejects the split prover's proof: %v", err)
	}
	t.Logf("verify: %v", time.Since(t0))
	if err := groth16bls.Verify(proof, vk, wrong); err == nil {
		t.Fatalf("the proof verifies with another seed's public inputs")
	}

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
		t.Fatalf("gnark's own proof rejected: %v", err)
	}
	t.Logf("gnark groth16.Prove: %v (split prover / gnark = %.2f); GOMAXPROCS %d; peak RSS %s",
		tG, tSplit.Seconds()/tG.Seconds(), runtime.GOMAXPROCS(0), peakRSS())
}
