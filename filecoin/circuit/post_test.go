package circuit

import (
	"slices"
	"strings"
	"testing"

	"github.com/c2flow/c2flow/filecoin/merkle"
	"github.com/c2flow/c2flow/filecoin/proofs"
	"github.com/c2flow/c2flow/filecoin/r1cs"
	"github.com/c2flow/c2flow/prover/packed"
)

// TestPoStCircuitCounts checks the counts of rust-fil-proofs
// storage-proofs-post/tests/fallback_circuit.rs (commit
// 87348a749d80447d00c595af834a8ed73c09e4d9): test_fallback_post(total,
// sector_count, partitions, inputs, constraints) over 64 × base-tree-count
// leaves with challenge_count 5, Poseidon trees; TestConstraintSystem's
// num_inputs (ONE included) and num_constraints. The partition's circuit
// depends on sector_count only (total and partitions only change the
// values), so the blank circuit is counted. And
// test_fallback_post_circuit_poseidon_base_8_bench_cs: a 32GiB sector,
// base-8 tree, challenge_count 10, sector_count 5: BenchCS's 266,665.
func TestPoStCircuitCounts(t *testing.T) {
	for _, tc := range []struct {
		name                string
		nodes               uint64
		tree                merkle.Shape
		sectors, challenges int
		inputs, constraints int
	}{
		{"single_partition_base_8", 64, merkle.Shape{Base: 8}, 3, 5, 19, 16_869},
		{"single_partition_sub_8_4", 64 * 4, merkle.Shape{Base: 8, Sub: 4}, 3, 5, 19, 22_674},
		{"single_partition_top_8_4_2", 64 * 8, merkle.Shape{Base: 8, Sub: 4, Top: 2}, 3, 5, 19, 27_384},
		{"two_partitions_base_8", 64, merkle.Shape{Base: 8}, 2, 5, 13, 11_246},
		{"base_8_bench_cs", (32 << 30) / 32, merkle.Shape{Base: 8}, 5, 10, 0, 266_665},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := PoStShape{SectorNodes: tc.nodes, Tree: tc.tree, Sectors: tc.sectors, Challenges: tc.challenges}
			st := countBlank(t, func(cs r1cs.System) error { return SynthesizePoSt(cs, s, nil) })
			t.Logf("%v: %v", s, st)
			if tc.inputs != 0 && (st.Inputs != tc.inputs || s.NumInputs() != tc.inputs) {
				t.Errorf("inputs = %d (NumInputs %d), want %d", st.Inputs, s.NumInputs(), tc.inputs)
			}
			if st.Constraints != tc.constraints {
				t.Errorf("constraints = %d, want %d (off by %d)", st.Constraints, tc.constraints, st.Constraints-tc.constraints)
			}
		})
	}
}

// TestPoStCountWinning32GiB counts the 32GiB winning circuit (66
// one-challenge sectors, 8-8-0 tree); cuzk measured about 370K
// (curio extern/cuzk/cuzk-project.md, "370K constraints vs 130M for
// PoRep", commit e0294b0f948132d41e8f42f59fa949495d5fd3af): ours is
// 370,590, pinned here exactly.
func TestPoStCountWinning32GiB(t *testing.T) {
	info, err := proofs.LookupPoSt(proofs.StackedDrgWinning32GiBV1)
	if err != nil {
		t.Fatal(err)
	}
	s := PoStShapeOf(info)
	st := countBlank(t, func(cs r1cs.System) error { return SynthesizePoSt(cs, s, nil) })
	t.Logf("%s: %v", info.Name, st)
	if st.Inputs != 1+66*2 || s.NumInputs() != st.Inputs || st.Constraints != 370_590 {
		t.Errorf("%v; want 133 inputs and 370,590 constraints", st)
	}
}

// postWindowPartitions are filecoin-proofs constants.rs
// WINDOW_POST_SECTOR_COUNT's comments: one window partition of 32GiB
// (2349 sectors) and 64GiB (2300) sectors "gives 125,279,217" and
// "129,887,900 constraints" (rust-fil-proofs commit
// 87348a749d80447d00c595af834a8ed73c09e4d9).
var postWindowPartitions = []struct {
	proof       proofs.RegisteredPoStProof
	constraints int
}{
	{proofs.StackedDrgWindow32GiBV1_2, 125_279_217},
	{proofs.StackedDrgWindow64GiBV1_2, 129_887_900},
}

// TestPoStCountWindowPartitions checks those counts in every run: a
// partition is its sectors' circuits one after another (circuit.rs
// synthesize_default; nothing else), so it has sectors × one sector's
// constraints and inputs. One sector of each size is counted with the
// counter; TestPoStSectorsAdd checks that sectors add up, and the opt-in
// TestPoStCountWindowPartitionsFull (large) counts the whole partitions.
func TestPoStCountWindowPartitions(t *testing.T) {
	for _, tc := range postWindowPartitions {
		info, err := proofs.LookupPoSt(tc.proof)
		if err != nil {
			t.Fatal(err)
		}
		s := PoStShapeOf(info)
		one := s
		one.Sectors = 1
		st := countBlank(t, func(cs r1cs.System) error { return SynthesizePoSt(cs, one, nil) })
		got := s.Sectors * st.Constraints
		t.Logf("%s: one sector %v; x %d = %d constraints", info.Name, st, s.Sectors, got)
		if got != tc.constraints || 1+s.Sectors*(st.Inputs-1) != s.NumInputs() {
			t.Errorf("%s: %d x %d = %d constraints, want %d (off by %d)", info.Name, s.Sectors, st.Constraints, got, tc.constraints, got-tc.constraints)
		}
	}
}

// TestPoStSectorsAdd: n sectors count n times one sector's constraints,
// aux variables and nonzeros, and n times its inputs besides ONE.
func TestPoStSectorsAdd(t *testing.T) {
	for _, s := range []PoStShape{
		{SectorNodes: 64, Tree: merkle.Shape{Base: 8}, Challenges: 10},
		{SectorNodes: 512, Tree: merkle.Shape{Base: 8, Sub: 4, Top: 2}, Challenges: 3},
		{SectorNodes: (32 << 30) / 32, Tree: merkle.Shape{Base: 8, Sub: 8}, Challenges: 10},
	} {
		s.Sectors = 1
		one := countBlank(t, func(cs r1cs.System) error { return SynthesizePoSt(cs, s, nil) })
		s.Sectors = 3
		three := countBlank(t, func(cs r1cs.System) error { return SynthesizePoSt(cs, s, nil) })
		if three.Constraints != 3*one.Constraints || three.Inputs-1 != 3*(one.Inputs-1) || three.Aux != 3*one.Aux ||
			three.ANNZ != 3*one.ANNZ || three.BNNZ != 3*one.BNNZ || three.CNNZ != 3*one.CNNZ {
			t.Errorf("%v: one sector %v, three %v", s, one, three)
		}
	}
}

// TestCountPoSt pins every registered PoSt circuit's sizes (CountPoSt);
// the 32GiB and 64GiB window constraints are constants.rs's, the 2KiB
// window's are checked against a full count, and TestPoStSectorsAdd
// checks the multiplication.
func TestCountPoSt(t *testing.T) {
	want := map[string]PoStCounts{
		"StackedDrgWinning2KiBV1":   {Inputs: 133, Aux: 91_674, Constraints: 90_750},
		"StackedDrgWinning8MiBV1":   {Inputs: 133, Aux: 233_442, Constraints: 230_670},
		"StackedDrgWinning512MiBV1": {Inputs: 133, Aux: 304_326, Constraints: 300_630},
		"StackedDrgWinning32GiBV1":  {Inputs: 133, Aux: 375_210, Constraints: 370_590},
		"StackedDrgWinning64GiBV1":  {Inputs: 133, Aux: 396_000, Constraints: 391_314},
		"StackedDrgWindow2KiBV1":    {Inputs: 23, Aux: 22_128, Constraints: 21_866},
		"StackedDrgWindow8MiBV1":    {Inputs: 23, Aux: 65_088, Constraints: 64_266},
		"StackedDrgWindow512MiBV1":  {Inputs: 23, Aux: 86_568, Constraints: 85_466},
		"StackedDrgWindow32GiBV1":   {Inputs: 1 + 2349*11, Aux: 2349 * 54_024, Constraints: 125_279_217},
		"StackedDrgWindow64GiBV1":   {Inputs: 1 + 2300*11, Aux: 2300 * 57_174, Constraints: 129_887_900},
	}
	for _, info := range proofs.AllPoSt() {
		c, err := CountPoSt(PoStShapeOf(info))
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %+v", info.Name, c)
		w, ok := want[strings.TrimSuffix(info.Name, "_2")]
		if !ok || c != w {
			t.Errorf("%s: %+v, want %+v", info.Name, c, w)
		}
	}
	info, _ := proofs.LookupPoSt(proofs.StackedDrgWindow2KiBV1_2)
	s := PoStShapeOf(info)
	st := countBlank(t, func(cs r1cs.System) error { return SynthesizePoSt(cs, s, nil) })
	if c, _ := CountPoSt(s); c != (PoStCounts{Inputs: st.Inputs, Aux: st.Aux, Constraints: st.Constraints}) {
		t.Errorf("2KiB window: CountPoSt %+v, counter %v", c, st)
	}
}

// A PoSt partition's repeated system, read row by row, is its whole
// recorded shape: the same digest and the same wires left out of A and
// B. The digest and density of a 32GiB window partition so come from
// its 3.6 MB system, never from its 12 GB shape.
func TestPoStSystemIsTheShape(t *testing.T) {
	for _, s := range []PoStShape{
		{SectorNodes: 64, Tree: merkle.Shape{Base: 8}, Challenges: 5, Sectors: 3},
		{SectorNodes: 512, Tree: merkle.Shape{Base: 8, Sub: 4, Top: 2}, Challenges: 3, Sectors: 2},
	} {
		sh := r1cs.NewShape()
		if err := SynthesizePoSt(sh, s, nil); err != nil {
			t.Fatal(err)
		}
		sh.AppendInputConstraints()
		want, err := sh.Digest()
		if err != nil {
			t.Fatal(err)
		}
		sys, err := PoStSystem(s)
		if err != nil {
			t.Fatal(err)
		}
		got, err := r1cs.SystemDigest(sys, sh.NumInputs)
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("%v: the repeated system's digest %.16s, the shape's %.16s", s, got, want)
		}
		whole, err := sh.System()
		if err != nil {
			t.Fatal(err)
		}
		for m := packed.A; m <= packed.B; m++ {
			if !slices.Equal(packed.UnusedOf(sys, m), whole.Unused(m)) {
				t.Errorf("%v: matrix %d: the repeated system leaves other wires out", s, m)
			}
		}
	}
}
