package snark_test

import (
	"context"
	"testing"

	"github.com/c2flow/c2flow/filecoin/r1cs"
	"github.com/c2flow/c2flow/filecoin/snark"
)

// BenchmarkDevSetup is the whole development setup of the 2KiB and 8MiB
// PoRep circuits from an empty cache, as a fresh machine makes it: the
// circuit recorded, bellperson's generator run, the pair written in
// Filecoin's format and linked into the parameter directory, its digests
// listed in parameters.json:
//
//	go test ./filecoin/snark -run '^$' -bench DevSetup -benchtime 1x -timeout 30m
func BenchmarkDevSetup(b *testing.B) {
	for _, proof := range []string{"StackedDrg2KiBV1_1", "StackedDrg8MiBV1_1"} {
		b.Run(proof, func(b *testing.B) {
			for b.Loop() {
				cache := r1cs.SetupCache{Dir: b.TempDir()}
				if _, err := snark.DevSetup(context.Background(), proof, b.TempDir(), cache, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
