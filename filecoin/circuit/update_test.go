package circuit

import (
	"fmt"
	"math/bits"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/c2flow/c2flow/filecoin/gadgets"
	"github.com/c2flow/c2flow/filecoin/proofs"
	"github.com/c2flow/c2flow/filecoin/r1cs"
)

// countBlank counts the blank circuit synth synthesizes into a counter.
func countBlank(t *testing.T, synth func(r1cs.System) error) r1cs.Stats {
	t.Helper()
	cs := r1cs.NewCounter()
	if err := synth(cs); err != nil {
		t.Fatal(err)
	}
	if err := cs.Err(); err != nil {
		t.Fatal(err)
	}
	return cs.Stats()
}

// TestUpdateCircuitCounts checks the constraint counts of rust-fil-proofs
// storage-proofs-update/tests/circuit.rs (commit
// 87348a749d80447d00c595af834a8ed73c09e4d9): TestConstraintSystem's
// num_constraints of EmptySectorUpdateCircuit at each test sector size
// (test_empty_sector_update_circuit_*). The counts do not depend on the
// values, so the blank circuit is counted. Each partition has 5 inputs:
// ONE, k_and_h_select, comm_r_old, comm_d_new, comm_r_new.
func TestUpdateCircuitCounts(t *testing.T) {
	for _, tc := range []struct {
		name        string
		bytes       uint64
		constraints int
	}{
		{"1KiB", 1 << 10, 1_248_389},
		{"2KiB", 2 << 10, 1_705_039},
		{"4KiB", 4 << 10, 2_165_109},
		{"8KiB", 8 << 10, 2_620_359},
		{"16KiB", 16 << 10, 6_300_021},
		{"32KiB", 32 << 10, 6_760_091},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := UpdateShapeOf(tc.bytes)
			if err != nil {
				t.Fatal(err)
			}
			st := countBlank(t, func(cs r1cs.System) error { return SynthesizeUpdate(cs, s, nil) })
			t.Logf("%s: %v", tc.name, st)
			if st.Inputs != 5 {
				t.Errorf("inputs = %d, want 5", st.Inputs)
			}
			if st.Constraints != tc.constraints {
				t.Errorf("constraints = %d, want %d (off by %d)", st.Constraints, tc.constraints, st.Constraints-tc.constraints)
			}
		})
	}
}

// TestUpdateCount32GiB counts the 32GiB update partition circuit with the
// counter (no matrix kept: bounded memory): 81,049,499 constraints,
// storage-proofs-update/tests/circuit.rs
// test_empty_sector_update_constraints_32gib (the blank circuit).
func TestUpdateCount32GiB(t *testing.T) {
	s, err := UpdateShapeOf(32 << 30)
	if err != nil {
		t.Fatal(err)
	}
	st := countBlank(t, func(cs r1cs.System) error { return SynthesizeUpdate(cs, s, nil) })
	t.Logf("32GiB update partition: %v", st)
	if st.Constraints != 81_049_499 || st.Inputs != 5 {
		t.Fatalf("constraints = %d, inputs = %d; want 81049499 and 5 (off by %d)", st.Constraints, st.Inputs, st.Constraints-81_049_499)
	}
}

// The gadget counts of storage-proofs-update/src/gadgets.rs's tests
// (commit 87348a749d80447d00c595af834a8ed73c09e4d9):
// test_gen_challenge_bits_gadget per allowed sector size, and
// test_apex_por_gadget_small_sector_sizes and _16kib_4_8_partitions per
// (partitions, apex leaves per partition) of a 16KiB tree D.
func TestUpdateGadgetCounts(t *testing.T) {
	count := func(f func(cs r1cs.System) error) int {
		t.Helper()
		cs := r1cs.NewCounter()
		before := cs.Stats().Constraints
		if err := f(cs); err != nil {
			t.Fatal(err)
		}
		if err := cs.Err(); err != nil {
			t.Fatal(err)
		}
		return cs.Stats().Constraints - before
	}
	sizes := []uint64{1 << 10, 2 << 10, 4 << 10, 8 << 10, 16 << 10, 32 << 10, 8 << 20, 16 << 20, 512 << 20, 32 << 30, 64 << 30}
	genWant := []int{568, 568, 568, 568, 568, 568, 568, 568, 4544, 5680, 5680}
	for i, b := range sizes {
		s, err := UpdateShapeOf(b)
		if err != nil {
			t.Fatal(err)
		}
		u, err := newUpdate(s)
		if err != nil {
			t.Fatal(err)
		}
		for k := range s.Partitions() {
			got := count(func(cs r1cs.System) error {
				commRNew := gadgets.AllocNum(cs, fr.Element{})
				var kf fr.Element
				kf.SetUint64(uint64(k))
				partition := gadgets.AllocNum(cs, kf)
				_, err := u.genChallengeBits(cs, commRNew, partition, s.Challenges(), s.ChallengeBits()-s.partitionBits())
				return err
			})
			if got != genWant[i] {
				t.Errorf("gen_challenge_bits, %d bytes, partition %d: %d constraints, want %d", b, k, got, genWant[i])
			}
		}
	}

	// apex_por over a 16KiB tree D (2^9 nodes) for a partition count and
	// apex leaves per partition; comm_d, the partition bits, the leaves
	// and the partition path are allocated first, outside the count.
	apex := func(nodes, partitions, leaves int) int {
		s := UpdateShape{SectorNodes: nodes, Tree: updateTrees[nodes]}
		u, err := newUpdate(s)
		if err != nil {
			t.Fatal(err)
		}
		pb := bits.TrailingZeros(uint(partitions))
		cs := r1cs.NewCounter()
		commD := gadgets.AllocNum(cs, fr.Element{})
		pbits := make([]gadgets.AllocatedBit, pb)
		for i := range pbits {
			pbits[i] = gadgets.AllocBit(cs, false)
		}
		ls := make([]gadgets.AllocatedNum, leaves)
		for i := range ls {
			ls[i] = gadgets.AllocNum(cs, fr.Element{})
		}
		path := make([][]gadgets.AllocatedNum, pb)
		for i := range path {
			path[i] = []gadgets.AllocatedNum{gadgets.AllocNum(cs, fr.Element{})}
		}
		before := cs.Stats().Constraints
		if err := u.apexPoR(cs, ls, pbits, path, commD); err != nil {
			t.Fatal(err)
		}
		return cs.Stats().Constraints - before
	}
	for _, tc := range []struct{ nodes, partitions, leaves, want int }{
		{1 << 5, 1, 8, 317654}, {1 << 6, 1, 8, 317654}, {1 << 7, 1, 8, 317654}, {1 << 8, 1, 8, 317654},
		{1 << 9, 2, 128, 5808515}, {1 << 10, 2, 128, 5808515},
		{1 << 9, 4, 16, 771448}, {1 << 9, 8, 8, 453797},
	} {
		if got := apex(tc.nodes, tc.partitions, tc.leaves); got != tc.want {
			t.Errorf("apex_por, %d nodes, %d partitions of %d apex leaves: %d constraints, want %d", tc.nodes, tc.partitions, tc.leaves, got, tc.want)
		}
	}
}

// TestUpdatePoseidonCounts checks storage-proofs-update/tests/
// circuit_poseidon.rs: 1KiB 32,164 and 8KiB 47,974 constraints, and the
// 32GiB blank circuit's 22,305,906 (with the counter), 5 inputs each.
func TestUpdatePoseidonCounts(t *testing.T) {
	for _, tc := range []struct {
		name        string
		bytes       uint64
		constraints int
	}{
		{"1KiB", 1 << 10, 32_164},
		{"8KiB", 8 << 10, 47_974},
		{"32GiB", 32 << 30, 22_305_906},
	} {
		s, err := UpdateShapeOf(tc.bytes)
		if err != nil {
			t.Fatal(err)
		}
		st := countBlank(t, func(cs r1cs.System) error { return SynthesizeUpdatePoseidon(cs, s, nil) })
		t.Logf("%s (Poseidon): %v", tc.name, st)
		if st.Constraints != tc.constraints || st.Inputs != 5 {
			t.Errorf("%s: constraints = %d, inputs = %d; want %d and 5 (off by %d)", tc.name, st.Constraints, st.Inputs, tc.constraints, st.Constraints-tc.constraints)
		}
	}
}

// constants.rs per sector size, as the registered update proofs use them:
// partitions, challenges, the default h and the apex leaves
// (storage-proofs-update/src/constants.rs partition_count,
// challenge_count, h_default, apex_leaf_count).
func TestUpdateShapeConstants(t *testing.T) {
	for _, tc := range []struct {
		proof                           string
		partitions, challenges, h, apex int
		base, sub, top, treeRLevels     int
	}{
		{"StackedDrg2KiBV1", 1, 10, 1, 8, 8, 0, 0, 2},
		{"StackedDrg8MiBV1", 4, 10, 10, 128, 8, 0, 0, 6},
		{"StackedDrg512MiBV1", 16, 86, 10, 128, 8, 0, 0, 8},
		{"StackedDrg32GiBV1", 16, 86, 10, 128, 8, 8, 0, 10},
		{"StackedDrg64GiBV1", 16, 86, 10, 128, 8, 8, 2, 11},
	} {
		info, err := proofs.UpdateByName(tc.proof)
		if err != nil {
			t.Fatal(err)
		}
		s, err := UpdateShapeOf(info.SectorSize)
		if err != nil {
			t.Fatal(err)
		}
		got := []int{s.Partitions(), s.Challenges(), s.HDefault(), s.ApexLeaves(), s.Tree.Base, s.Tree.Sub, s.Tree.Top, s.TreeRPathLen()}
		want := []int{tc.partitions, tc.challenges, tc.h, tc.apex, tc.base, tc.sub, tc.top, tc.treeRLevels}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s: partitions, challenges, h, apex leaves, tree R arities and levels %v, want %v", tc.proof, got, want)
		}
		if info.PoRepID[0] != byte(info.Proof) || info.APIVersion != proofs.APIVersion1_1_0 {
			t.Errorf("%s: porep id %x, api %v", tc.proof, info.PoRepID, info.APIVersion)
		}
	}
	if _, err := UpdateShapeOf(3 << 10); err == nil {
		t.Error("a 3KiB update shape")
	}
}
