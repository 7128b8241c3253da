package circuit

import (
	"testing"
	"time"

	"github.com/c2flow/c2flow/filecoin/proofs"
	"github.com/c2flow/c2flow/filecoin/r1cs"
)

// TestCount32GiB counts one 32GiB partition's circuit and compares it with
// curio's measurement of the circuit rust-fil-proofs synthesizes
// (filecoin-project/curio extern/cuzk/cuzk-project.md, "PCE Extraction",
// commit e0294b0f948132d41e8f42f59fa949495d5fd3af): num_inputs 328,
// num_aux 130,169,893, num_constraints 130,278,869 and A nnz 309,405,051
// (both with bellperson's 328 per-input constraints input·0 = 0, which add
// one A entry each), B nnz 130,327,340, C nnz 282,656,500, densities
// a_aux 129,753,292, b_input 1, b_aux 33,112,281.
//
// It runs in every test run: the counter's memory is bounded (240 MB, about
// 21 s on two cores).
func TestCount32GiB(t *testing.T) {
	s, err := ShapeFor(proofs.StackedDrg32GiBV1_1)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	cs := r1cs.NewCounter()
	if err := Synthesize(cs, s, nil); err != nil {
		t.Fatal(err)
	}
	st := cs.Stats()
	t.Logf("%v: %v in %v", s, st, time.Since(start))
	const perInput = 328
	want := r1cs.Stats{
		Constraints: 130_278_869 - perInput, Inputs: 328, Aux: 130_169_893,
		ANNZ: 309_405_051 - perInput, BNNZ: 130_327_340, CNNZ: 282_656_500,
		AAuxDensity: 129_753_292, BInputDensity: 1, BAuxDensity: 33_112_281,
	}
	if st != want {
		t.Errorf("got  %v\nwant %v", st, want)
	}
}
