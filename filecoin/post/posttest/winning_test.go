package posttest_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/c2flow/c2flow/filecoin/circuit"
	"github.com/c2flow/c2flow/filecoin/fctest"
	"github.com/c2flow/c2flow/filecoin/groth"
	"github.com/c2flow/c2flow/filecoin/post"
	"github.com/c2flow/c2flow/filecoin/post/posttest"
	"github.com/c2flow/c2flow/filecoin/proofs"
	"github.com/c2flow/c2flow/filecoin/r1cs"
	"github.com/c2flow/c2flow/gpu"
	"github.com/c2flow/c2flow/prover"
)

// The production 32GiB WinningPoSt circuit (66 openings of a 32GiB tree
// R, 370,723 constraints with its inputs), proved end to end by the split
// prover under a development setup (cached by circuit digest) from a
// sparse replica's vanilla proof, and accepted by Filecoin's
// verification against the public inputs of its public data; refused
// under other randomness. The first proof above 2KiB c2flow makes
// (issue 56). Its phases are logged, not asserted (docs/performance.md).
func TestProveWinning32GiB(t *testing.T) {
	if testing.Short() {
		t.Skip("a production-size circuit: its setup alone takes 15 s on two quiet cores")
	}
	info, err := proofs.LookupPoSt(proofs.StackedDrgWinning32GiBV1)
	if err != nil {
		t.Fatal(err)
	}
	randomness := post.MaskRandomness([32]byte{1, 2, 3, 4, 5})
	const id = 7
	v, err := posttest.Sparse(info, randomness, id, 0)
	if err != nil {
		t.Fatal(err)
	}
	p, err := post.NewPartition(info, randomness, 0, []*post.VanillaProof{v})
	if err != nil {
		t.Fatal(err)
	}
	s := p.Shape()
	t0 := time.Now()
	pr, pvk := fctest.DevKeys(t, fmt.Sprint(s), s.NumInputs(), func(cs *r1cs.Shape) error { return circuit.SynthesizePoSt(cs, s, nil) })
	setup := time.Since(t0)
	w, err := p.Witness()
	if err != nil {
		t.Fatal(err)
	}
	counts, err := circuit.CountPoSt(s)
	if err != nil {
		t.Fatal(err)
	}
	t1 := time.Now()
	wires, _, err := r1cs.SynthesizePacked(context.Background(), r1cs.Counts{Inputs: counts.Inputs, Aux: counts.Aux, Constraints: counts.Constraints + counts.Inputs},
		func(wb *r1cs.Witness) error { return circuit.SynthesizePoSt(wb, s, w) })
	if err != nil {
		t.Fatal(err)
	}
	synth := time.Since(t1)
	slots, err := gpu.CPUSlots(1, 0)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	t2 := time.Now()
	partial, err := pr.Start(ctx, slots, &prover.Solution{Partition: info.Name + "/0", W: wires})
	if err != nil {
		t.Fatal(err)
	}
	t3 := time.Now()
	b, _, err := pr.Finalize(ctx, partial)
	if err != nil {
		t.Fatal(err)
	}
	t4 := time.Now()
	proof, err := groth.ProofFromGnark(b)
	if err != nil {
		t.Fatal(err)
	}
	in, err := post.PublicInputs(info, randomness, []post.PublicSector{{ID: id, CommR: v.CommR}}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := pvk.Verify(&proof, in); err != nil {
		t.Fatalf("the 32GiB WinningPoSt proof does not verify: %v", err)
	}
	other, err := post.PublicInputs(info, post.MaskRandomness([32]byte{9}), []post.PublicSector{{ID: id, CommR: v.CommR}}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if pvk.Verify(&proof, other) == nil {
		t.Fatal("the 32GiB WinningPoSt proof verifies under other randomness")
	}
	t.Logf("32GiB WinningPoSt: %d constraints; setup (or its cache) %v, synthesis %v, device phase (CPU) %v, finalize %v; verified",
		counts.Constraints+counts.Inputs, setup.Round(time.Millisecond), synth.Round(time.Millisecond), t3.Sub(t2).Round(time.Millisecond), t4.Sub(t3).Round(time.Millisecond))
}
