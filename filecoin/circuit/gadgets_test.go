package circuit

import (
	"errors"
	"fmt"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/c2flow/c2flow/filecoin/gadgets"
	"github.com/c2flow/c2flow/filecoin/hash"
	"github.com/c2flow/c2flow/filecoin/merkle"
	"github.com/c2flow/c2flow/filecoin/proofs"
	"github.com/c2flow/c2flow/filecoin/r1cs"
	"github.com/c2flow/c2flow/filecoin/sdr"
)

// testElement returns a deterministic pseudo-random field element.
func testElement(i uint64) fr.Element {
	var e, k fr.Element
	e.SetUint64(i*0x9e3779b97f4a7c15 + 1)
	k.SetUint64(0xc2f10e)
	e.Mul(&e, &e).Mul(&e, &k).Square(&e)
	return e
}

func checked() *r1cs.Witness { return r1cs.NewWitness(r1cs.WitnessOptions{Check: true}) }

// TestInsert checks insertion.rs's counts (its test_insert: 2, 8, 22 for
// sizes 2, 4, 8 and size·(size−1) otherwise; rust-fil-proofs commit
// 87348a749d80447d00c595af834a8ed73c09e4d9) and results for every
// position.
func TestInsert(t *testing.T) {
	for logSize := 1; logSize <= 4; logSize++ {
		size := 1 << logSize
		want := map[int]int{2: 2, 4: 8, 8: 22}[size]
		if want == 0 {
			want = size * (size - 1)
		}
		for index := range size {
			cs := checked()
			elems := make([]gadgets.AllocatedNum, size-1)
			for i := range elems {
				elems[i] = gadgets.AllocNum(cs, testElement(uint64(i)))
			}
			x := gadgets.AllocNum(cs, testElement(99))
			bits := make([]gadgets.Boolean, logSize)
			for i := range bits {
				bits[i] = gadgets.Is(gadgets.AllocBit(cs, index>>i&1 == 1))
			}
			before := cs.NumConstraints()
			out, err := insert(cs, x, bits, elems)
			if err != nil {
				t.Fatal(err)
			}
			if got := cs.NumConstraints() - before; got != want {
				t.Errorf("size %d: %d constraints, want %d", size, got, want)
			}
			if err := cs.Err(); err != nil {
				t.Fatalf("size %d index %d: %v", size, index, err)
			}
			for pos := range size {
				var exp fr.Element
				switch {
				case pos < index:
					exp = elems[pos].Value
				case pos == index:
					exp = x.Value
				default:
					exp = elems[pos-1].Value
				}
				if !out[pos].Value.Equal(&exp) {
					t.Fatalf("size %d index %d: position %d wrong", size, index, pos)
				}
			}
		}
	}
}

// TestSelect checks insertion.rs test_select: size−1 constraints.
func TestSelect(t *testing.T) {
	for logSize := 1; logSize <= 4; logSize++ {
		size := 1 << logSize
		for index := range size {
			cs := checked()
			from := make([]gadgets.AllocatedNum, size)
			for i := range from {
				from[i] = gadgets.AllocNum(cs, testElement(uint64(i)))
			}
			bits := make([]gadgets.Boolean, logSize)
			for i := range bits {
				bits[i] = gadgets.Is(gadgets.AllocBit(cs, index>>i&1 == 1))
			}
			before := cs.NumConstraints()
			got := selectNum(cs, from, bits)
			if n := cs.NumConstraints() - before; n != size-1 {
				t.Errorf("size %d: %d constraints, want %d", size, n, size-1)
			}
			if err := cs.Err(); err != nil || !got.Value.Equal(&from[index].Value) {
				t.Fatalf("size %d index %d: err %v or wrong value", size, index, err)
			}
		}
	}
}

func treeHasherFor(h merkle.Hasher, s merkle.Shape) (treeHasher, error) {
	if _, ok := h.(merkle.SHA254Hasher); ok {
		return sha254Tree{}, nil
	}
	p := poseidonTree{consts: map[int]*gadgets.PoseidonConstants{}}
	for _, a := range []int{s.Base, s.Sub, s.Top} {
		if a > 0 {
			c, err := gadgets.PoseidonConstantsFor(a)
			if err != nil {
				return nil, err
			}
			p.consts[a] = c
		}
	}
	return p, nil
}

// porCircuit is PoRCircuit::synthesize with allocated leaf and root: the
// inclusion, and for a public root its input ("root").
func porCircuit(cs r1cs.System, h treeHasher, s Shape, path Path, leafV, rootV fr.Element, public bool) error {
	b, su, tp := s.TreePathLens()
	ts := treeShape{arity: [3]int{s.Tree.Base, s.Tree.Sub, s.Tree.Top}, lens: [3]int{b, su, tp}}
	if err := ts.checkPath(path); err != nil {
		return err
	}
	leaf := gadgets.AllocNum(cs, leafV)
	root := gadgets.AllocNum(cs, rootV)
	if err := enforceInclusion(cs, h, ts, path, root, leaf); err != nil {
		return err
	}
	if public {
		root.Inputize(cs)
	}
	return nil
}

// TestPoRCounts checks the constraint counts of storage-proofs-core
// tests/por_circuit.rs (rust-fil-proofs commit
// 87348a749d80447d00c595af834a8ed73c09e4d9; 64 x base-tree-count leaves):
// test_por_circuit (public root, 3 inputs) and
// test_por_circuit_private_root (2 inputs).
func TestPoRCounts(t *testing.T) {
	for _, tc := range []struct {
		h           merkle.Hasher
		shape       merkle.Shape
		public      bool
		constraints int
	}{
		{merkle.SHA254Hasher{}, merkle.Shape{Base: 2}, true, 272_295},
		{merkle.SHA254Hasher{}, merkle.Shape{Base: 4}, true, 216_258},
		{merkle.SHA254Hasher{}, merkle.Shape{Base: 8}, true, 250_987},
		{merkle.PoseidonHasher{}, merkle.Shape{Base: 2}, true, 1_887},
		{merkle.PoseidonHasher{}, merkle.Shape{Base: 4}, true, 1_164},
		{merkle.PoseidonHasher{}, merkle.Shape{Base: 8}, true, 1_063},
		{merkle.PoseidonHasher{}, merkle.Shape{Base: 8, Sub: 2}, true, 1_377},
		{merkle.PoseidonHasher{}, merkle.Shape{Base: 8, Sub: 4, Top: 2}, true, 1_764},
		{merkle.PoseidonHasher{}, merkle.Shape{Base: 8, Sub: 8}, true, 1_593},
		{merkle.PoseidonHasher{}, merkle.Shape{Base: 8, Sub: 8, Top: 2}, true, 1_907},
		{merkle.PoseidonHasher{}, merkle.Shape{Base: 8, Sub: 2, Top: 4}, true, 1_764},
		{merkle.PoseidonHasher{}, merkle.Shape{Base: 2}, false, 1_886},
		{merkle.PoseidonHasher{}, merkle.Shape{Base: 4}, false, 1_163},
		{merkle.PoseidonHasher{}, merkle.Shape{Base: 8}, false, 1_062},
	} {
		name := fmt.Sprintf("%s_%s_public=%v", tc.h.Name(), tc.shape, tc.public)
		t.Run(name, func(t *testing.T) {
			s := Shape{Nodes: 64 * uint64(tc.shape.BaseTrees()), Layers: 2, Tree: tc.shape, Challenges: 1}
			h, err := treeHasherFor(tc.h, tc.shape)
			if err != nil {
				t.Fatal(err)
			}
			cs := r1cs.NewCounter()
			if err := porCircuit(cs, h, s, BlankWitness(s).Proofs[0].CommCPath, fr.Element{}, fr.Element{}, tc.public); err != nil {
				t.Fatal(err)
			}
			st := cs.Stats()
			wantInputs := 2
			if tc.public {
				wantInputs = 3
			}
			if st.Constraints != tc.constraints || st.Inputs != wantInputs {
				t.Errorf("%d constraints, %d inputs; want %d, %d", st.Constraints, st.Inputs, tc.constraints, wantInputs)
			}
		})
	}
}

// TestPoRSatisfied opens leaves of real trees (filecoin/merkle) of every
// shape in the circuit: the witness satisfies it, and the path input is
// the opened node (PoRCompound::generate_public_inputs); a wrong sibling
// fails "enforce root is correct".
func TestPoRSatisfied(t *testing.T) {
	for _, tc := range []struct {
		h     merkle.Hasher
		shape merkle.Shape
	}{
		{merkle.SHA254Hasher{}, merkle.Shape{Base: 2}},
		{merkle.PoseidonHasher{}, merkle.Shape{Base: 2}},
		{merkle.PoseidonHasher{}, merkle.Shape{Base: 4}},
		{merkle.PoseidonHasher{}, merkle.Shape{Base: 8}},
		{merkle.PoseidonHasher{}, merkle.Shape{Base: 8, Sub: 2}},
		{merkle.PoseidonHasher{}, merkle.Shape{Base: 8, Sub: 8}},
		{merkle.PoseidonHasher{}, merkle.Shape{Base: 8, Sub: 4, Top: 2}},
		{merkle.PoseidonHasher{}, merkle.Shape{Base: 8, Sub: 8, Top: 2}},
	} {
		t.Run(tc.h.Name()+"_"+tc.shape.String(), func(t *testing.T) {
			nodes := 64 * uint64(tc.shape.BaseTrees())
			leaves := make([]merkle.Node, nodes)
			for i := range leaves {
				leaves[i] = merkle.Node(hash.Trim(hash.ElementToLE(testElement(uint64(i)))))
			}
			tree, err := merkle.Build(tc.h, tc.shape, leaves)
			if err != nil {
				t.Fatal(err)
			}
			h, err := treeHasherFor(tc.h, tc.shape)
			if err != nil {
				t.Fatal(err)
			}
			s := Shape{Nodes: nodes, Layers: 2, Tree: tc.shape, Challenges: 1}
			root, err := hash.ElementFromLE(tree.Root())
			if err != nil {
				t.Fatal(err)
			}
			for _, node := range []uint64{0, 1, nodes/2 + 3, nodes - 1} {
				pr, err := tree.Prove(node)
				if err != nil {
					t.Fatal(err)
				}
				path, err := PathOf(pr)
				if err != nil {
					t.Fatal(err)
				}
				leaf, err := hash.ElementFromLE(leaves[node])
				if err != nil {
					t.Fatal(err)
				}
				cs := checked()
				if err := porCircuit(cs, h, s, path, leaf, root, false); err != nil {
					t.Fatal(err)
				}
				if err := cs.Err(); err != nil {
					t.Fatalf("node %d: %v", node, err)
				}
				var want fr.Element
				want.SetUint64(node)
				if len(cs.Inputs) != 2 || !cs.Inputs[1].Equal(&want) {
					t.Fatalf("node %d: path input %v, want %v", node, cs.Inputs[1:], want.String())
				}
				// A wrong sibling at the last level.
				last := &path[len(path)-1]
				last.Siblings[0].Add(&last.Siblings[0], &frOne)
				cs = checked()
				if err := porCircuit(cs, h, s, path, leaf, root, false); err != nil {
					t.Fatal(err)
				}
				var ue *r1cs.UnsatisfiedError
				if err := cs.Err(); !errors.As(err, &ue) || ue.Path != "enforce root is correct" {
					t.Fatalf("node %d tampered: got %v, want failure at enforce root is correct", node, err)
				}
			}
		})
	}
}

// TestCreateLabel checks create_label.rs test_create_label (rust-fil-proofs
// commit 87348a749d80447d00c595af834a8ed73c09e4d9): with the replica id and
// the 37 parents allocated as bits (bytes_into_boolean_vec_be), layer 3 and
// node 22 as constants, the system has 532,025 constraints; and the label
// equals the native one (filecoin/sdr LabelHash).
func TestCreateLabel(t *testing.T) {
	cs := checked()
	allocBytes := func(b [32]byte) []gadgets.Boolean {
		out := make([]gadgets.Boolean, 0, 256)
		for _, x := range b {
			for i := 7; i >= 0; i-- {
				out = append(out, gadgets.Is(gadgets.AllocBit(cs, x>>i&1 == 1)))
			}
		}
		return out
	}
	id := hash.ElementToLE(testElement(1000))
	idBits := allocBytes(id)
	parents := make([][32]byte, proofs.TotalParents)
	parentBits := make([][]gadgets.Boolean, proofs.TotalParents)
	for i := range parents {
		parents[i] = hash.ElementToLE(testElement(uint64(i)))
		parentBits[i] = allocBytes(parents[i])
	}
	var node uint64Bits
	for i := range node {
		node[i] = gadgets.Constant(22>>i&1 == 1)
	}
	label, err := createLabel(cs, idBits, parentBits, 3, &node)
	if err != nil {
		t.Fatal(err)
	}
	if err := cs.Err(); err != nil {
		t.Fatal(err)
	}
	if n := cs.NumConstraints(); n != 532_025 {
		t.Errorf("%d constraints, want 532,025", n)
	}
	want, err := hash.ElementFromLE(sdr.LabelHash(id, 3, 22, parents))
	if err != nil {
		t.Fatal(err)
	}
	if !label.Value.Equal(&want) {
		t.Errorf("label %s, native %s", label.Value.String(), want.String())
	}
}

// TestColumnHash checks stacked/circuit/hash.rs's tests: 311 constraints
// for hash2 and 598 for an 11-row column (rust-fil-proofs commit
// 87348a749d80447d00c595af834a8ed73c09e4d9), with the native column hash.
func TestColumnHash(t *testing.T) {
	for _, tc := range []struct{ rows, constraints int }{{2, 311}, {11, 598}} {
		cs := checked()
		vals := make([]fr.Element, tc.rows)
		nums := make([]gadgets.AllocatedNum, tc.rows)
		for i := range vals {
			vals[i] = testElement(uint64(i + 7))
			nums[i] = gadgets.AllocNum(cs, vals[i])
		}
		c, err := gadgets.PoseidonConstantsFor(tc.rows)
		if err != nil {
			t.Fatal(err)
		}
		out, err := gadgets.PoseidonHash(cs, nums, c)
		if err != nil {
			t.Fatal(err)
		}
		if err := cs.Err(); err != nil {
			t.Fatal(err)
		}
		if cs.NumConstraints() != tc.constraints {
			t.Errorf("%d rows: %d constraints, want %d", tc.rows, cs.NumConstraints(), tc.constraints)
		}
		want, err := hash.ColumnHash(vals)
		if err != nil {
			t.Fatal(err)
		}
		if !out.Value.Equal(&want) {
			t.Errorf("%d rows: circuit %s, native %s", tc.rows, out.Value.String(), want.String())
		}
	}
}
