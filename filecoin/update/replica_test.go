package update

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/c2flow/c2flow/filecoin/circuit"
	"github.com/c2flow/c2flow/filecoin/hash"
	"github.com/c2flow/c2flow/filecoin/merkle"
	"github.com/c2flow/c2flow/filecoin/proofs"
	"github.com/c2flow/c2flow/filecoin/r1cs"
	"github.com/c2flow/c2flow/filecoin/seal"
)

// testReplica encodes random new data into a random old replica of a
// sector of b bytes, as storage-proofs-update/tests/circuit.rs does (an
// old tree R of random labels, a random comm_c, random new data), at h
// = hs[3].
func testReplica(t testing.TB, b uint64) *Replica {
	t.Helper()
	s, err := circuit.UpdateShapeOf(b)
	if err != nil {
		t.Fatal(err)
	}
	r := newXorShift(testSeed)
	nodes := func() []merkle.Node {
		out := make([]merkle.Node, s.SectorNodes)
		for i := range out {
			out[i] = merkle.Node(hash.ElementToLE(randomFr(r)))
		}
		return out
	}
	old := nodes()
	commC := merkle.Node(hash.ElementToLE(randomFr(r)))
	rep, err := Encode(s, s.HDefault(), old, commC, nodes())
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// synthesize runs partition k's circuit over w with a checking witness
// builder and returns its first unsatisfied constraint (nil: satisfied)
// and its inputs.
func synthesize(t *testing.T, s circuit.UpdateShape, w *circuit.UpdateWitness) (error, []fr.Element) {
	t.Helper()
	cs := r1cs.NewWitness(r1cs.WitnessOptions{Check: true})
	if err := circuit.SynthesizeUpdate(cs, s, w); err != nil {
		t.Fatal(err)
	}
	return cs.Err(), cs.Inputs[1:]
}

// Updated sectors of 2KiB (one partition) and 16KiB (two, with 128 apex
// leaves and a partition path) satisfy the update circuit in every
// partition, and its inputs are the public inputs computed from public
// data.
func TestUpdatedSectorSatisfiesCircuit(t *testing.T) {
	for _, b := range []uint64{2 << 10, 16 << 10} {
		rep := testReplica(t, b)
		for k := range rep.Shape.Partitions() {
			w, err := rep.Witness(k)
			if err != nil {
				t.Fatal(err)
			}
			err, inputs := synthesize(t, rep.Shape, w)
			if err != nil {
				t.Fatalf("%d bytes, partition %d: %v", b, k, err)
			}
			want, _ := rep.PublicInputs(k)
			for i := range want {
				if !inputs[i].Equal(&want[i]) {
					t.Fatalf("%d bytes, partition %d: input %d differs from the public data's", b, k, i+1)
				}
			}
		}
	}
}

// Eight tamperings of a 16KiB partition's witness each fail, naming the
// first unsatisfied constraint where the tampered value is first used.
func TestTamperedUpdateUnsatisfied(t *testing.T) {
	rep := testReplica(t, 16<<10)
	one := fr.One()
	bump := func(e *fr.Element) { e.Add(e, &one) }
	for _, tc := range []struct {
		name   string
		tamper func(w *circuit.UpdateWitness)
		where  string
	}{
		{"comm_c", func(w *circuit.UpdateWitness) { bump(&w.CommC) }, "enforce comm_r_old_calc == comm_r_old"},
		{"root_r_new", func(w *circuit.UpdateWitness) { bump(&w.RootRNew) }, "enforce comm_r_new_calc == comm_r_new"},
		{"k_and_h_select beyond its bits", func(w *circuit.UpdateWitness) {
			var x fr.Element
			x.SetUint64(1 << 20)
			w.KAndHSelect.Add(&w.KAndHSelect, &x)
		}, "k_and_h_select binary decomp"},
		{"apex leaf", func(w *circuit.UpdateWitness) { bump(&w.ApexLeaves[3]) }, "apex_gadget/partition-tree por/calculated root == provided root"},
		{"leaf_r_old", func(w *circuit.UpdateWitness) { bump(&w.Challenges[2].LeafROld) }, "por tree_r_old (c_index=2)/calculated root == provided root"},
		{"leaf_d_new", func(w *circuit.UpdateWitness) { bump(&w.Challenges[4].LeafDNew) }, "por tree_r_new (c_index=4)/calculated root == provided root"},
		{"path_r_new sibling", func(w *circuit.UpdateWitness) { bump(&w.Challenges[7].PathRNew[1][5]) }, "por tree_r_new (c_index=7)/calculated root == provided root"},
		{"path_d_new sibling below the apex", func(w *circuit.UpdateWitness) { bump(&w.Challenges[9].PathDNew[0][0]) }, "por to_apex_leaf (c_index=9)/calculated root == provided root"},
	} {
		w, err := rep.Witness(1)
		if err != nil {
			t.Fatal(err)
		}
		tc.tamper(w)
		err, _ = synthesize(t, rep.Shape, w)
		var ue *r1cs.UnsatisfiedError
		if !errors.As(err, &ue) || !strings.HasSuffix(ue.Path, tc.where) {
			t.Errorf("%s: %v, want the first unsatisfied constraint to be %q", tc.name, err, tc.where)
		}
	}
}

// The test updater over a really sealed committed-capacity 2KiB sector
// (StackedDrg2KiBV1_1, filecoin/seal): its comm_r_old is the sector's
// comm_r, its vanilla proof verifies and its witness satisfies the
// circuit.
func TestUpdateSealedCC(t *testing.T) {
	p := seal.TestParams(proofs.StackedDrg2KiBV1_1, [32]byte{1}, 7)
	p.CC, p.KeepReplica = true, true
	sealed, err := seal.Seal(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	s, err := circuit.UpdateShapeOf(2 << 10)
	if err != nil {
		t.Fatal(err)
	}
	r := newXorShift(testSeed)
	data := make([]merkle.Node, s.SectorNodes)
	for i := range data {
		data[i] = merkle.Node(hash.ElementToLE(randomFr(r)))
	}
	rep, err := UpdateSealed(s, s.HDefault(), sealed, data)
	if err != nil {
		t.Fatal(err)
	}
	pp, err := rep.PartitionProof(0)
	if err != nil {
		t.Fatal(err)
	}
	if err := pp.Verify(s, 0, rep.Public()); err != nil {
		t.Fatal(err)
	}
	w, err := pp.Witness(s, 0, rep.Public())
	if err != nil {
		t.Fatal(err)
	}
	if err, _ := synthesize(t, s, w); err != nil {
		t.Fatal(err)
	}
	p.KeepReplica = false
	other, err := seal.Seal(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := UpdateSealed(s, s.HDefault(), other, data); err == nil || !strings.Contains(err.Error(), "not kept") {
		t.Errorf("an update of a sealed sector without its replica: %v", err)
	}
}
