package update

import (
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/c2flow/c2flow/filecoin/circuit"
	"github.com/c2flow/c2flow/filecoin/r1cs"
)

// The circuit's input assignment is PublicInputs of the public data: the
// circuit, given a witness whose public part is set (the rest blank),
// allocates exactly those inputs after ONE, for every partition of a
// 32KiB sector (two partitions) and each h it allows.
func TestPublicInputsAreTheCircuitsInputs(t *testing.T) {
	r := newXorShift(testSeed)
	commROld, commDNew, commRNew := randomFr(r), randomFr(r), randomFr(r)
	for _, b := range []uint64{2 << 10, 32 << 10} {
		s, err := circuit.UpdateShapeOf(b)
		if err != nil {
			t.Fatal(err)
		}
		for k := range s.Partitions() {
			for _, h := range []int{s.Hs()[0], s.HDefault()} {
				want, err := PublicInputs(s, k, h, commROld, commDNew, commRNew)
				if err != nil {
					t.Fatal(err)
				}
				w := circuit.BlankUpdateWitness(s)
				w.KAndHSelect, w.CommROld, w.CommDNew, w.CommRNew = want[0], commROld, commDNew, commRNew
				wb := r1cs.NewWitness(r1cs.WitnessOptions{})
				if err := circuit.SynthesizeUpdate(wb, s, w); err != nil {
					t.Fatal(err)
				}
				if len(wb.Inputs) != 1+len(want) {
					t.Fatalf("%d inputs, want %d", len(wb.Inputs), 1+len(want))
				}
				for i := range want {
					if !wb.Inputs[1+i].Equal(&want[i]) {
						t.Errorf("%d bytes, k %d, h %d: input %d is %v, public data give %v", b, k, h, i+1, wb.Inputs[1+i].String(), want[i].String())
					}
				}
			}
		}
	}
	s, _ := circuit.UpdateShapeOf(32 << 30)
	if _, err := PublicInputs(s, 16, 10, fr.Element{}, fr.Element{}, fr.Element{}); err == nil {
		t.Error("partition 16 of 16 accepted")
	}
	if _, err := PublicInputs(s, 0, 13, fr.Element{}, fr.Element{}, fr.Element{}); err == nil {
		t.Error("h 13 accepted")
	}
	in, _ := PublicInputs(s, 5, 10, fr.Element{}, fr.Element{}, fr.Element{})
	if v := in[0]; !v.Equal(new(fr.Element).SetUint64(5 | 8<<4)) { // h 10 is hs[3]: h_select 8
		t.Errorf("k_and_h_select for k 5, h 10: %v", v.String())
	}
}
