package update

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	groth16bls "github.com/consensys/gnark/backend/groth16/bls12-381"

	"github.com/c2flow/c2flow/filecoin/circuit"
	"github.com/c2flow/c2flow/filecoin/fctest"
	"github.com/c2flow/c2flow/filecoin/groth"
	"github.com/c2flow/c2flow/filecoin/r1cs"
	"github.com/c2flow/c2flow/gpu"
	"github.com/c2flow/c2flow/prover"
	"github.com/c2flow/c2flow/prover/packed"
)

// updateKeys is a development setup of the update circuit (fctest.DevKeys).
func updateKeys(t testing.TB, s circuit.UpdateShape) (*prover.Prover, *groth.PreparedVerifyingKey) {
	t.Helper()
	return fctest.DevKeys(t, fmt.Sprintf("the %d-node update circuit", s.SectorNodes), 5, func(cs *r1cs.Shape) error { return circuit.SynthesizeUpdate(cs, s, nil) })
}

// A 2KiB update partition proved by the split prover under a development
// setup of the update circuit gives a 192-byte Groth16 proof that
// Filecoin's verification (bellperson's verify_proof) accepts against the
// public inputs of the public data, and refuses against another comm_r_new
// or another h_select, or with a flipped bit.
func TestProveUpdate2KiB(t *testing.T) {
	rep := testReplica(t, 2<<10)
	pr, pvk := updateKeys(t, rep.Shape)
	w, err := rep.Witness(0)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	wb := r1cs.NewWitness(r1cs.WitnessOptions{ABC: true, Check: true})
	if err := circuit.SynthesizeUpdate(wb, rep.Shape, w); err != nil {
		t.Fatal(err)
	}
	wb.AppendInputConstraints()
	if err := wb.Err(); err != nil {
		t.Fatal(err)
	}
	synth := time.Since(t0)
	t1 := time.Now()
	proof := fctest.Prove(t, pr, "update/2KiB/0", wb)
	t.Logf("2KiB update partition: synthesis %v, split prover %v", synth.Round(time.Millisecond), time.Since(t1).Round(time.Millisecond))
	in, err := rep.PublicInputs(0)
	if err != nil {
		t.Fatal(err)
	}
	if err := pvk.Verify(&proof, in); err != nil {
		t.Fatalf("the update proof does not verify: %v", err)
	}
	if b := proof.Bytes(); len(b) != groth.ProofSize {
		t.Fatalf("%d-byte proof", len(b))
	}
	other := append([]fr.Element(nil), in...)
	one := fr.One()
	other[3].Add(&other[3], &one)
	if pvk.Verify(&proof, other) == nil {
		t.Error("verified against another comm_r_new")
	}
	other = append([]fr.Element(nil), in...)
	other[0].SetUint64(1 << 1) // h_select of hs[1], k 0
	if pvk.Verify(&proof, other) == nil {
		t.Error("verified against another h_select")
	}
	b := proof.Bytes()
	b[100] ^= 4
	if bad, err := groth.DecodeProof(b[:]); err == nil && pvk.Verify(&bad, in) == nil {
		t.Error("verified with a flipped bit")
	}
}

// BenchmarkProveUpdate2KiB proves one 2KiB update partition with the
// split prover and with gnark's groth16.Prove on the same R1CS, keys and
// witness, alternating, and reports each one's seconds per proof (go test
// -run '^$' -bench ProveUpdate2KiB -benchtime 3x ./filecoin/update/).
func BenchmarkProveUpdate2KiB(b *testing.B) {
	ctx := context.Background()
	rep := testReplica(b, 2<<10)
	pr, _ := updateKeys(b, rep.Shape)
	shape := r1cs.NewShape()
	if err := circuit.SynthesizeUpdate(shape, rep.Shape, nil); err != nil {
		b.Fatal(err)
	}
	shape.AppendInputConstraints()
	ccs, err := shape.Gnark()
	if err != nil {
		b.Fatal(err)
	}
	w, err := rep.Witness(0)
	if err != nil {
		b.Fatal(err)
	}
	slots, err := gpu.CPUSlots(1, 0)
	if err != nil {
		b.Fatal(err)
	}
	var split, gnark, synth time.Duration
	for range b.N {
		t0 := time.Now()
		wb := r1cs.NewWitness(r1cs.WitnessOptions{ABC: true})
		if err := circuit.SynthesizeUpdate(wb, rep.Shape, w); err != nil {
			b.Fatal(err)
		}
		wb.AppendInputConstraints()
		synth += time.Since(t0)
		full, err := r1cs.GnarkWitness(wb.Inputs, wb.Aux)
		if err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		sol := &prover.Solution{Partition: "update/2KiB/0", W: packed.Pack(append(append([]fr.Element(nil), wb.Inputs...), wb.Aux...))}
		partial, err := pr.Start(ctx, slots, sol)
		if err != nil {
			b.Fatal(err)
		}
		if _, _, err := pr.Finalize(ctx, partial); err != nil {
			b.Fatal(err)
		}
		split += time.Since(t1)
		t2 := time.Now()
		if _, err := groth16bls.Prove(ccs, pr.Keys.PK, full); err != nil {
			b.Fatal(err)
		}
		gnark += time.Since(t2)
	}
	n := float64(b.N)
	b.ReportMetric(synth.Seconds()/n, "synth-s/op")
	b.ReportMetric(split.Seconds()/n, "split-s/op")
	b.ReportMetric(gnark.Seconds()/n, "gnark-s/op")
	b.ReportMetric(split.Seconds()/gnark.Seconds(), "split/gnark")
}
