package post

import (
	"math/rand/v2"
	"testing"

	"github.com/c2flow/c2flow/filecoin/proofs"
)

// VanillaBytes is exact: curio's post.vproof, a real 32GiB sector's proof
// (testdata/PROVENANCE.md; tree R 8-8-0, a sub path), is 24,960 bytes, and
// the proofs generated over 2KiB and 8MiB trees are as long as it says.
// A request's PoSt entries are bounded by it before they are decoded.
func TestVanillaBytesExact(t *testing.T) {
	g := loadGolden(t)
	if n, err := VanillaBytes(g.info); err != nil || n != int64(len(g.raw)) {
		t.Fatalf("VanillaBytes(%s) = %d, %v; post.vproof is %d bytes", g.info.Name, n, err, len(g.raw))
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for _, p := range []proofs.RegisteredPoStProof{proofs.StackedDrgWindow2KiBV1_2, proofs.StackedDrgWinning2KiBV1, proofs.StackedDrgWindow8MiBV1_2} {
		info, err := proofs.LookupPoSt(p)
		if err != nil {
			t.Fatal(err)
		}
		got := len(makeVanilla(t, rng, info, [32]byte{1}, 7, 0).Bincode())
		if n, err := VanillaBytes(info); err != nil || n != int64(got) {
			t.Errorf("VanillaBytes(%s) = %d, %v; a generated proof is %d bytes", info.Name, n, err, got)
		}
	}
}
