package bench

import (
	"context"
	"testing"
)

// A 2KiB update partition (a sparse CC sector updated with zero data)
// synthesizes packed with the public data's inputs, and every row of its
// recorded system holds: a·b = c.
func TestUpdateWitness2KiB(t *testing.T) {
	ctx := context.Background()
	wc, err := UpdateWitness(ctx, "StackedDrg2KiBV1")
	if err != nil {
		t.Fatal(err)
	}
	if wc.Partitions != 1 || wc.Counts.Inputs != 5 {
		t.Fatalf("%d partitions, %d inputs; want 1 and 5", wc.Partitions, wc.Counts.Inputs)
	}
	r, err := Witness(ctx, wc, WitnessOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if r.BadRow != -1 || r.StaticBytes == 0 || r.Wires != wc.Counts.Inputs+wc.Counts.Aux {
		t.Fatalf("bad row %d, static bytes %d, %d wires of %d+%d: %s", r.BadRow, r.StaticBytes, r.Wires, wc.Counts.Inputs, wc.Counts.Aux, r.Line())
	}
	if _, err := UpdateWitness(ctx, "StackedDrg2KiBV1_1"); err == nil {
		t.Error("a seal proof's name taken for an update proof")
	}
}
