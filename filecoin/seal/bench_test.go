package seal

import (
	"context"
	"testing"

	"github.com/c2flow/c2flow/filecoin/c1"
	"github.com/c2flow/c2flow/filecoin/proofs"
)

// BenchmarkDecodeVerify measures decoding a C1's JSON and verifying it
// natively: go test -run XXX -bench DecodeVerify ./filecoin/seal/
func BenchmarkDecodeVerify(b *testing.B) {
	for _, c := range []struct {
		p      proofs.RegisteredSealProof
		sparse bool
	}{
		{proofs.StackedDrg2KiBV1_1, false},
		{proofs.StackedDrg8MiBV1_1, true},
		{proofs.StackedDrg32GiBV1_1, true},
	} {
		b.Run(c.p.String(), func(b *testing.B) {
			p := TestParams(c.p, testProver, 1)
			seal := Seal
			if c.sparse {
				seal = SealSparse
			}
			s, err := seal(context.Background(), p)
			if err != nil {
				b.Fatal(err)
			}
			raw, err := c1.Marshal(s.C1)
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(raw)))
			b.ReportAllocs()
			for b.Loop() {
				a, err := c1.DecodeBytes(raw)
				if err != nil {
					b.Fatal(err)
				}
				if err := Verify(context.Background(), a.C1, s.Public); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
