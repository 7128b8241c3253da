package update

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/c2flow/c2flow/filecoin/circuit"
	"github.com/c2flow/c2flow/filecoin/hash"
	"github.com/c2flow/c2flow/filecoin/merkle"
	"github.com/c2flow/c2flow/filecoin/proofs"
	"github.com/c2flow/c2flow/filecoin/seal"
)

// sparseZero seals a CC sector of proof sparsely and updates it with
// zero data at h_default.
func sparseZero(t testing.TB, p proofs.RegisteredSealProof) (*seal.Sealed, *SparseUpdate) {
	t.Helper()
	sealed, err := seal.SealSparse(context.Background(), seal.TestParams(p, [32]byte{1}, 7))
	if err != nil {
		t.Fatal(err)
	}
	info, _ := proofs.Lookup(p)
	s, err := circuit.UpdateShapeOf(info.SectorSize)
	if err != nil {
		t.Fatal(err)
	}
	u, err := UpdateSparseZero(s, s.HDefault(), sealed)
	if err != nil {
		t.Fatal(err)
	}
	return sealed, u
}

// A sparse zero update of a 2KiB and an 8MiB sector keeps the sector's
// comm_r and comm_d; every partition's vanilla proof verifies natively,
// and a partition's witness satisfies the update circuit, the circuit's
// inputs the public inputs computed from public data. 8MiB (4
// partitions): the last partition's circuit, whose k is not zero (about
// 6 s; skipped in -short).
func TestSparseZeroUpdateSatisfies(t *testing.T) {
	for _, c := range []struct {
		p         proofs.RegisteredSealProof
		satisfied int
	}{{proofs.StackedDrg2KiBV1_1, 0}, {proofs.StackedDrg8MiBV1_1, 3}} {
		if testing.Short() && c.p == proofs.StackedDrg8MiBV1_1 {
			continue
		}
		sealed, u := sparseZero(t, c.p)
		pub := u.Public()
		if pub.CommRNew != pub.CommROld || [32]byte(merkleNode(pub.CommROld)) != sealed.Public.CommR || [32]byte(merkleNode(pub.CommDNew)) != sealed.Public.CommD {
			t.Fatalf("%s: comm_r old %x, new %x, comm_d_new %x; the sector's comm_r %x, comm_d %x", c.p,
				merkleNode(pub.CommROld), merkleNode(pub.CommRNew), merkleNode(pub.CommDNew), sealed.Public.CommR, sealed.Public.CommD)
		}
		for k := range u.Shape.Partitions() {
			p, err := u.PartitionProof(k)
			if err != nil {
				t.Fatal(err)
			}
			if err := p.Verify(u.Shape, k, pub); err != nil {
				t.Fatalf("%s: %v", c.p, err)
			}
		}
		k := c.satisfied
		w, err := u.Witness(k)
		if err != nil {
			t.Fatal(err)
		}
		err, inputs := synthesize(t, u.Shape, w)
		if err != nil {
			t.Fatalf("%s partition %d: %v", c.p, k, err)
		}
		want, err := u.PublicInputs(k)
		if err != nil {
			t.Fatal(err)
		}
		if len(inputs) != len(want) {
			t.Fatalf("%s partition %d: %d inputs, want %d", c.p, k, len(inputs), len(want))
		}
		for i := range want {
			if !inputs[i].Equal(&want[i]) {
				t.Fatalf("%s partition %d: input %d differs from the public data's", c.p, k, i+1)
			}
		}
	}
}

// The sparse sealer fills the labels it does not open with zeros, so a
// sector sealed in full has another tree R: the dense updater is given
// the leaf list the sparse tree R stands for instead. Those leaves build
// comm_r_last, and the dense updater (Encode) over them with zero data
// gives the sparse update's commitments, public inputs and partition
// proof, byte for byte. The dense updater over a sector sealed in full
// keeps its comm_r too, and has the same comm_d_new.
func TestSparseZeroMatchesDense(t *testing.T) {
	sealed, u := sparseZero(t, proofs.StackedDrg2KiBV1_1)
	s := u.Shape
	leaves := make([]merkle.Node, s.SectorNodes)
	for i := range leaves {
		p, err := sealed.ProveR(uint64(i))
		if err != nil {
			t.Fatal(err)
		}
		leaves[i] = p.Leaf
	}
	treeR, err := merkle.Build(merkle.PoseidonHasher{}, merkle.Shape{Base: s.Tree.Base, Sub: s.Tree.Sub, Top: s.Tree.Top}, leaves)
	if err != nil {
		t.Fatal(err)
	}
	if [32]byte(treeR.Root()) != sealed.CommRLast {
		t.Fatalf("tree R over the sparse tree's leaves: root %s, comm_r_last %x", treeR.Root(), sealed.CommRLast)
	}
	zeros := make([]merkle.Node, s.SectorNodes)
	dense, err := Encode(s, u.H, leaves, merkle.Node(sealed.CommC), zeros)
	if err != nil {
		t.Fatal(err)
	}
	if dense.Public() != u.Public() {
		t.Fatalf("dense update %+v, sparse %+v", dense.Public(), u.Public())
	}
	want, _ := dense.PublicInputs(0)
	got, _ := u.PublicInputs(0)
	for i := range want {
		if !got[i].Equal(&want[i]) {
			t.Fatalf("public input %d: sparse and dense differ", i+1)
		}
	}
	dp, err := dense.PartitionProof(0)
	if err != nil {
		t.Fatal(err)
	}
	sp, err := u.PartitionProof(0)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(dp.Bincode(), sp.Bincode()) {
		t.Fatal("partition 0: the sparse and dense vanilla proofs differ")
	}

	p := seal.TestParams(proofs.StackedDrg2KiBV1_1, [32]byte{1}, 7)
	p.CC, p.KeepReplica = true, true
	full, err := seal.Seal(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := UpdateSealed(s, u.H, full, zeros)
	if err != nil {
		t.Fatal(err)
	}
	if rep.CommRNew != rep.CommROld || rep.CommDNew != u.CommDNew {
		t.Fatalf("dense zero update of a fully sealed sector: comm_r old %x, new %x; comm_d_new %x, sparse %x",
			merkleNode(rep.CommROld), merkleNode(rep.CommRNew), merkleNode(rep.CommDNew), merkleNode(u.CommDNew))
	}
	if _, err := UpdateSparseZero(s, u.H, full); !errors.Is(err, seal.ErrUnsupported) {
		t.Errorf("a sparse update of a fully sealed sector: %v, want ErrUnsupported", err)
	}
}

// A sparse update refuses an h the shape does not allow and a sector of
// another size.
func TestSparseZeroRefuses(t *testing.T) {
	sealed, u := sparseZero(t, proofs.StackedDrg2KiBV1_1)
	if _, err := UpdateSparseZero(u.Shape, 10, sealed); err == nil {
		t.Error("h 10 for a 2KiB sector accepted")
	}
	s8, err := circuit.UpdateShapeOf(8 << 20)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := UpdateSparseZero(s8, s8.HDefault(), sealed); err == nil {
		t.Error("a 2KiB sector updated as an 8MiB one")
	}
}

func merkleNode(e fr.Element) merkle.Node { return merkle.Node(hash.ElementToLE(e)) }
