package gadgets

import (
	"testing"

	"github.com/c2flow/c2flow/filecoin/r1cs"
)

// TestMultipacking is bellperson's test_multipacking (src/gadgets/
// multipack.rs at tag v0.27.0, commit
// bb36c30260f88b7417cad6573b381db9362db46e): for every length below 1500
// the packed inputs equal compute_multipacking and the system is
// satisfied.
func TestMultipacking(t *testing.T) {
	rng := newRand()
	step := 1
	if testing.Short() {
		step = 37
	}
	for n := 0; n < 1500; n += step {
		vals := make([]bool, n)
		for i := range vals {
			vals[i] = rng.Uint32()%2 != 0
		}
		w := r1cs.NewWitness(r1cs.WitnessOptions{Check: true})
		bits := allocBits(w, "bit", vals)
		w.Push("pack")
		PackIntoInputs(w, bits)
		w.Pop()
		if err := w.Err(); err != nil {
			t.Fatalf("%d bits: %v", n, err)
		}
		want := ComputeMultipacking(vals)
		if len(w.Inputs) != len(want)+1 {
			t.Fatalf("%d bits: %d inputs, want %d", n, len(w.Inputs)-1, len(want))
		}
		for i := range want {
			if !w.Inputs[i+1].Equal(&want[i]) {
				t.Fatalf("%d bits: input %d differs", n, i)
			}
		}
		if w.NumConstraints() != n+len(want) {
			t.Fatalf("%d bits: %d constraints", n, w.NumConstraints())
		}
	}
}

func TestPackBitsAndBytes(t *testing.T) {
	b := []byte{0x80, 0x01}
	if got := BytesToBits(b); !got[0] || got[7] || !got[15] {
		t.Fatal("bytes_to_bits")
	}
	if got := BytesToBitsLE(b); got[0] || !got[7] || !got[8] {
		t.Fatal("bytes_to_bits_le")
	}
	vals := BytesToBitsLE([]byte{0xff, 0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc, 0xde, 0xf0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24})
	var got AllocatedNum
	w, _ := synth(t, func(cs r1cs.System) {
		got = PackBits(cs, allocBits(cs, "bit", vals))
	})
	want := ComputeMultipacking(vals[:FieldCapacity])
	if !got.Value.Equal(&want[0]) || w.NumConstraints() != len(vals)+1 {
		t.Fatal("pack_bits")
	}
}
