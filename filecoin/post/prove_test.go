package post

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/c2flow/c2flow/filecoin/circuit"
	"github.com/c2flow/c2flow/filecoin/fctest"
	"github.com/c2flow/c2flow/filecoin/groth"
	"github.com/c2flow/c2flow/filecoin/proofs"
	"github.com/c2flow/c2flow/filecoin/r1cs"
	"github.com/c2flow/c2flow/prover"
)

// postKeys is a development setup of a PoSt circuit (fctest.DevKeys).
func postKeys(t testing.TB, s circuit.PoStShape) (*prover.Prover, *groth.PreparedVerifyingKey) {
	t.Helper()
	return fctest.DevKeys(t, fmt.Sprint(s), s.NumInputs(), func(cs *r1cs.Shape) error { return circuit.SynthesizePoSt(cs, s, nil) })
}

// A 2KiB window partition (two sectors) and a 2KiB winning proof, proved
// by the split prover under development setups of their circuits, give
// 192-byte Groth16 proofs that Filecoin's verification accepts against
// the public inputs of the public data, and refuses under other
// randomness, for another sector, or with a flipped byte.
func TestProvePoSt2KiB(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	randomness := MaskRandomness([32]byte(randomNode(rng)))
	for _, tc := range []struct {
		proof   proofs.RegisteredPoStProof
		sectors []uint64
	}{
		{proofs.StackedDrgWindow2KiBV1_2, []uint64{4, 17}},
		{proofs.StackedDrgWinning2KiBV1, []uint64{23}},
	} {
		info, err := proofs.LookupPoSt(tc.proof)
		if err != nil {
			t.Fatal(err)
		}
		t.Run(info.Name, func(t *testing.T) {
			var vs []*VanillaProof
			var replicas []PublicSector
			for i, id := range tc.sectors {
				v := makeVanilla(t, rng, info, randomness, id, i)
				vs = append(vs, v)
				replicas = append(replicas, PublicSector{ID: id, CommR: v.CommR})
			}
			p, err := NewPartition(info, randomness, 0, vs)
			if err != nil {
				t.Fatal(err)
			}
			pr, pvk := postKeys(t, p.Shape())
			w, err := p.Witness()
			if err != nil {
				t.Fatal(err)
			}
			t0 := time.Now()
			wb := r1cs.NewWitness(r1cs.WitnessOptions{ABC: true, Check: true})
			if err := circuit.SynthesizePoSt(wb, p.Shape(), w); err != nil {
				t.Fatal(err)
			}
			wb.AppendInputConstraints()
			if err := wb.Err(); err != nil {
				t.Fatal(err)
			}
			synth := time.Since(t0)
			t1 := time.Now()
			proof := fctest.Prove(t, pr, info.Name+"/0", wb)
			t.Logf("%s: synthesis %v (%d constraints), prove (device phase and finalize) %v", info.Name, synth.Round(time.Millisecond), len(wb.A),
				time.Since(t1).Round(time.Millisecond))
			in, err := PublicInputs(info, randomness, replicas, 0)
			if err != nil {
				t.Fatal(err)
			}
			if err := pvk.Verify(&proof, in); err != nil {
				t.Fatalf("the %s proof does not verify: %v", info.Name, err)
			}
			b := proof.Bytes()
			if len(b) != info.PartitionProofLen() {
				t.Fatalf("%d-byte proof", len(b))
			}
			other, err := PublicInputs(info, MaskRandomness([32]byte(randomNode(rng))), replicas, 0)
			if err != nil {
				t.Fatal(err)
			}
			if pvk.Verify(&proof, other) == nil {
				t.Error("verified under other randomness")
			}
			moved := append([]PublicSector(nil), replicas...)
			moved[len(moved)-1].ID++
			if other, err = PublicInputs(info, randomness, moved, 0); err != nil {
				t.Fatal(err)
			}
			if pvk.Verify(&proof, other) == nil {
				t.Error("verified for another sector")
			}
			b[100] ^= 4
			if bad, err := groth.DecodeProof(b[:]); err == nil && pvk.Verify(&bad, in) == nil {
				t.Error("verified with a flipped byte")
			}
		})
	}
}
