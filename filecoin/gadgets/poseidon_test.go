package gadgets

import (
	"fmt"
	"testing"

	"github.com/c2flow/c2flow/filecoin/hash"
	"github.com/c2flow/c2flow/filecoin/r1cs"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
)

// neptuneCounts are the constraint counts neptune's own test asserts for
// the legacy circuit with Standard strength: argumentcomputer/neptune
// src/circuit.rs test_poseidon_hash at tag v11.0.0 (commit
// ef8a821f8eba755ca8487c224f704fddbbc94e47), the version rust-fil-proofs
// pins.
var neptuneCounts = map[int]int{2: 311, 4: 377, 8: 505, 16: 761, 24: 1009, 36: 1385}

// filecoinCounts are the counts rust-fil-proofs asserts for its column
// hashes: storage-proofs-porep/src/stacked/circuit/hash.rs at commit
// 87348a749d80447d00c595af834a8ed73c09e4d9 (test_hash2_circuit: 311,
// test_hash_single_column_circuit with 11 labels: 598).
var filecoinCounts = map[int]int{2: 311, 11: 598}

// neptuneFormula is the count the same test derives: 3 per S-box but the
// tag's first, plus one linear-combination allocation per S-box input that
// is not already allocated.
func neptuneFormula(arity, full, partial int) int {
	width := arity + 1
	sBoxes := width*full + partial - 1
	mds := width*full + partial - arity
	return 3*sBoxes + mds
}

func TestPoseidonCircuit(t *testing.T) {
	rng := newRand()
	arities := []int{1, 2, 3, 4, 5, 8, 11, 16, 24, 36}
	for _, arity := range arities {
		t.Run(fmt.Sprintf("arity%d", arity), func(t *testing.T) {
			c, err := PoseidonConstantsFor(arity)
			if err != nil {
				t.Fatal(err)
			}
			hc, err := hash.ConstantsFor(arity, hash.Standard)
			if err != nil {
				t.Fatal(err)
			}
			pre := make([]fr.Element, arity)
			for i := range pre {
				pre[i] = randFr(rng)
			}
			want, err := hc.Hash(pre)
			if err != nil {
				t.Fatal(err)
			}
			var got AllocatedNum
			w, _ := synth(t, func(cs r1cs.System) {
				nums := make([]AllocatedNum, arity)
				for i := range nums {
					cs.PushIndexed("data", i)
					nums[i] = AllocNum(cs, pre[i])
					cs.Pop()
				}
				var err error
				if got, err = PoseidonHash(cs, nums, c); err != nil {
					t.Fatal(err)
				}
			})
			if !got.Value.Equal(&want) {
				t.Fatalf("circuit output %s, native Poseidon %s", got.Value.String(), want.String())
			}
			n := w.NumConstraints()
			if f := neptuneFormula(arity, c.FullRounds, c.PartialRounds); n != f {
				t.Fatalf("%d constraints, neptune's formula gives %d", n, f)
			}
			if exp, ok := neptuneCounts[arity]; ok && n != exp {
				t.Fatalf("%d constraints, neptune asserts %d", n, exp)
			}
			if exp, ok := filecoinCounts[arity]; ok && n != exp {
				t.Fatalf("%d constraints, rust-fil-proofs asserts %d", n, exp)
			}
			// The output variable holds the hash.
			if !w.Aux[got.Var.Index()].Equal(&want) {
				t.Fatal("result variable does not hold the hash")
			}
		})
	}
}

func TestPoseidonTamper(t *testing.T) {
	c, err := PoseidonConstantsFor(2)
	if err != nil {
		t.Fatal(err)
	}
	rng := newRand()
	a, b := randFr(rng), randFr(rng)
	circuit := func(cs r1cs.System) {
		cs.Push("poseidon")
		x, y := AllocNum(cs, a), AllocNum(cs, b)
		PoseidonHash(cs, []AllocatedNum{x, y}, c)
		cs.Pop()
	}
	ue := tampered(t, "poseidon/initial full round 1/quintic s-box 2/l^2", addOne, circuit)
	if ue.Path != "poseidon/initial full round 1/quintic s-box 2/l^2/squaring constraint" {
		t.Fatalf("tampered square reported at %q", ue.Path)
	}
	ue = tampered(t, "poseidon/partial round 7/solitary quintic s-box/S-box input/allocate for Elt::Num", addOne, circuit)
	if ue.Path != "poseidon/partial round 7/solitary quintic s-box/S-box input/enforce num allocation preserves lc" {
		t.Fatalf("tampered allocation reported at %q", ue.Path)
	}
	if _, err := PoseidonHash(r1cs.NewCounter(), []AllocatedNum{{}}, c); err == nil {
		t.Fatal("one element accepted for arity 2")
	}
}

func TestPoseidonConstantsShape(t *testing.T) {
	for _, arity := range []int{2, 4, 8, 11} {
		c, err := PoseidonConstantsFor(arity)
		if err != nil {
			t.Fatal(err)
		}
		// neptune asserts full_rounds * width + partial_rounds compressed
		// constants (poseidon.rs new_with_strength_and_type).
		if len(c.CompressedRoundConstants) != c.FullRounds*c.Width+c.PartialRounds {
			t.Fatalf("arity %d: %d compressed constants", arity, len(c.CompressedRoundConstants))
		}
		if len(c.Sparse) != c.PartialRounds {
			t.Fatalf("arity %d: %d sparse matrices", arity, len(c.Sparse))
		}
		// Every M'' is (pre-sparse · ∏ sparse) consistent: the product of
		// the pre-sparse matrix and the sparse ones (in application
		// order) equals M^(partial+1), since the factoring is exact.
		prod := c.PreSparse
		for _, s := range c.Sparse {
			prod = matMul(prod, sparseToMatrix(s))
		}
		mp := c.MDS
		for i := 0; i < c.PartialRounds; i++ {
			mp = matMul(mp, c.MDS)
		}
		for i := range prod {
			for j := range prod[i] {
				if !prod[i][j].Equal(&mp[i][j]) {
					t.Fatalf("arity %d: factored matrices do not multiply back to M^%d", arity, c.PartialRounds+1)
				}
			}
		}
		again, _ := PoseidonConstantsFor(arity)
		if again != c {
			t.Fatal("constants not memoized")
		}
	}
}

func sparseToMatrix(s SparseMatrix) [][]fr.Element {
	n := len(s.WHat)
	m := make([][]fr.Element, n)
	for i := range m {
		m[i] = make([]fr.Element, n)
		m[i][i].SetOne()
		m[i][0] = s.WHat[i]
	}
	copy(m[0][1:], s.VRest)
	return m
}
