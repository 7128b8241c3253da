package activities

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"

	groth16bls "github.com/consensys/gnark/backend/groth16/bls12-381"

	"github.com/c2flow/c2flow/gpu"
	"github.com/c2flow/c2flow/job"
	"github.com/c2flow/c2flow/params"
	"github.com/c2flow/c2flow/params/paramstest"
	"github.com/c2flow/c2flow/porep/poreptest"
	"github.com/c2flow/c2flow/prover"
	"github.com/c2flow/c2flow/storage"
	"github.com/c2flow/c2flow/storage/s3test"
)

func TestMain(m *testing.M) { s3test.Main(m) }

// StoreC2's refusals name the partition and the reason; none ends in a
// formatted nil error.
func TestStoreC2ErrorsNameThePartition(t *testing.T) {
	ctx := context.Background()
	const profile = "32KiB"
	paramstest.Keys(t, profile) // made once into the shared cache
	store := s3test.Start(t).Store("c2flow-test")
	if err := store.EnsureBucket(ctx); err != nil {
		t.Fatal(err)
	}
	c1 := poreptest.Sector(t, profile, 21).C1()
	if err := store.PutC1(ctx, c1); err != nil {
		t.Fatal(err)
	}
	pr, err := prover.New(paramstest.Keys(t, profile), nil)
	if err != nil {
		t.Fatal(err)
	}
	slots, err := gpu.CPUSlots(1, 0)
	if err != nil {
		t.Fatal(err)
	}
	c2, _, err := pr.ProveSector(ctx, slots, c1, nil)
	if err != nil {
		t.Fatal(err)
	}
	var proofs [][]byte
	for _, p := range c2.Proofs {
		b, err := (&prover.C2{Profile: profile, Proofs: []*groth16bls.Proof{p}}).MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		proofs = append(proofs, b)
	}
	budget, err := NewBudget(1)
	if err != nil {
		t.Fatal(err)
	}
	h := NewHost("store-test", store, &KeyCache{Store: params.DirStore{Root: paramstest.Dir()}}, slots, budget, slog.New(slog.NewTextHandler(io.Discard, nil)))
	ref := job.SectorRef{SectorID: c1.SectorID, C1Key: storage.C1Key(c1.SectorID)}

	// Two proofs where partition 1's one proof belongs.
	two, err := (&prover.C2{Profile: profile, Proofs: c2.Proofs[:2]}).MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	bad := append([][]byte(nil), proofs...)
	bad[1] = two
	_, err = h.StoreC2(ctx, job.StoreInput{SectorRef: ref, Profile: profile, Proofs: bad})
	assertNamed(t, err, "partition 1: 2 proofs")

	// Partition 2's proof swapped with partition 3's: verification names it.
	sw := append([][]byte(nil), proofs...)
	sw[2], sw[3] = sw[3], sw[2]
	_, err = h.StoreC2(ctx, job.StoreInput{SectorRef: ref, Profile: profile, Proofs: sw})
	assertNamed(t, err, "partition 2")

	// A stored C2 that does not verify: the error says why.
	junk, err := (&prover.C2{Profile: profile, Proofs: []*groth16bls.Proof{c2.Proofs[1], c2.Proofs[0], c2.Proofs[2], c2.Proofs[3]}}).MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.PutIfAbsent(ctx, storage.C2Key(c1.SectorID), junk); err != nil {
		t.Fatal(err)
	}
	_, err = h.StoreC2(ctx, job.StoreInput{SectorRef: ref, Profile: profile, Proofs: proofs})
	assertNamed(t, err, "partition 0")
}

func assertNamed(t *testing.T, err error, want string) {
	t.Helper()
	if err == nil {
		t.Fatalf("accepted; want an error naming %q", want)
	}
	if !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "<nil>") {
		t.Fatalf("error %q: want it to name %q and no nil error", err, want)
	}
}
