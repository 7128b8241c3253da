package integration

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/c2flow/c2flow/activities"
	"github.com/c2flow/c2flow/batch"
	"github.com/c2flow/c2flow/filecoin/snark"
	"github.com/c2flow/c2flow/filecoin/update"
	"github.com/c2flow/c2flow/job"
	"github.com/c2flow/c2flow/registry"
	"github.com/c2flow/c2flow/scheme"
)

const update2KiB = snark.UpdatePrefix + "StackedDrg2KiBV1"

// publishFilecoinDevParams publishes the DEVELOPMENT setups in dir
// (parameters.json, the marker, every pair) to the stack's S3, where
// workers download what they lack.
func (s *stack) publishFilecoinDevParams(ctx context.Context, dir string) {
	s.t.Helper()
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		n := e.Name()
		if n == snark.ParametersJSON || n == snark.DevMarker || strings.HasSuffix(n, ".params") || strings.HasSuffix(n, ".vk") {
			if err := s.store.UploadFile(ctx, snark.RemotePrefix+n, filepath.Join(dir, n)); err != nil {
				s.t.Fatal(err)
			}
		}
	}
}

// putUpdate makes 2KiB update inputs of filecoinProver's sectors from
// first (the test updater) and stores the k-th, changed by corrupt if
// set, under its identity.
func (s *stack) putUpdate(first uint64, corrupt func(*snark.UpdateInput, []*update.PartitionProof)) (job.Ref, []byte) {
	s.t.Helper()
	files, err := snark.New(snark.Params{}, nil).Update().SealTest(context.Background(),
		scheme.SealRequest{Proof: update2KiB, Prover: filecoinProver, First: first, N: 1, Dir: s.t.TempDir()})
	if err != nil {
		s.t.Fatal(err)
	}
	raw, err := os.ReadFile(files[0])
	if err != nil {
		s.t.Fatal(err)
	}
	if corrupt != nil {
		in, parts, err := snark.DecodeUpdateInput(raw)
		if err != nil {
			s.t.Fatal(err)
		}
		corrupt(in, parts)
		if raw, err = in.Encode(); err != nil {
			s.t.Fatal(err)
		}
	}
	ref := job.NewRef(filecoinProver, first, raw)
	ref.Proof = update2KiB
	if err := s.store.PutC1(context.Background(), ref, raw); err != nil {
		s.t.Fatal(err)
	}
	return ref, raw
}

// One batch of PoRep C2 and SnapDeals update sectors (Filecoin 2KiB), one
// update's vanilla proof corrupt: it fails alone, non-retryably, its
// error naming the partition, challenge and tree; the others are proved;
// the stored update proof is one 192-byte proof that the update .vk
// accepts against the update's commitments, checked by a scheme of its
// own. The workers download both circuits' parameters from S3.
func TestUpdatesAndPoRepInOneBatch(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	dir := filecoinDevParams(t)
	if err := snark.Schemes(snark.Params{Dir: dir}, nil).EnsureKeys(ctx, []string{update2KiB}, true, os.Stderr); err != nil {
		t.Fatal(err)
	}
	s := newStack(t, "2KiB")
	s.publishFilecoinDevParams(ctx, dir)
	w := s.startWorkerKeys("w", activities.Config{PartitionWorkers: 2}, registry.Options{FilecoinParams: t.TempDir()})

	porepRef, porepRaw := s.putFilecoinC1(61, nil)
	upRef, upRaw := s.putUpdate(62, nil)
	badRef, _ := s.putUpdate(63, func(in *snark.UpdateInput, parts []*update.PartitionProof) {
		// A new-replica leaf of challenge 5 that is not the encoding of
		// its old label and new data.
		p := parts[0].Challenges[5].RNew
		p.Leaf[3] ^= 1
		in.Vanilla[0] = parts[0].Bincode()
	})
	res := s.run(ctx, batch.Options{BatchID: "porep-and-updates", Timeouts: faultTimeouts}, []job.Ref{porepRef, upRef, badRef})
	by := map[uint64]job.SectorResult{}
	for _, r := range res.Sectors {
		by[r.SectorID] = r
	}
	if r := by[63]; r.Status != job.StatusFailed || !strings.Contains(r.Error, "BadC1") || !strings.Contains(r.Error, "partition 0: challenge 5") || !strings.Contains(r.Error, "tree R new") {
		t.Errorf("corrupt update: %s %q, want BadC1 naming partition 0, challenge 5, tree R new", r.Status, r.Error)
	}
	for _, id := range []uint64{61, 62} {
		if r := by[id]; r.Status != job.StatusProved {
			t.Fatalf("sector %d: %s %s", id, r.Status, r.Error)
		}
	}
	s.verifyFilecoinStored(dir, porepRef, porepRaw)

	// The stored update proof, read back through its manifest, verified by
	// a scheme of this process over the .vk alone.
	_, proof, err := s.store.GetC2(ctx, upRef)
	if err != nil {
		t.Fatal(err)
	}
	us := snark.Schemes(snark.Params{Dir: dir, ShapeDir: t.TempDir()}, nil)[1]
	sec, err := us.Decode(upRaw, upRef)
	if err != nil {
		t.Fatal(err)
	}
	v, err := us.Verifier(ctx, update2KiB)
	if err != nil {
		t.Fatal(err)
	}
	if len(proof) != 192 {
		t.Fatalf("stored update proof of %d bytes", len(proof))
	}
	if err := v.VerifyC2(sec, proof); err != nil {
		t.Fatalf("stored update proof: %v", err)
	}
	in := sec.(*snark.UpdateSector).Input()
	other, err := snark.UpdatePublic(in.Proof, in.CommROld, in.CommROld, in.CommDNew)
	if err != nil {
		t.Fatal(err)
	}
	if v.VerifyC2(other, proof) == nil {
		t.Error("the update proof verified against another comm_r_new")
	}
	if err := w.stop(); err != nil {
		t.Fatal(err)
	}
	st := w.readStats()
	if st.Host.BadC1 != 1 || st.Host.Invalid != 0 || st.Host.Stored != 2 {
		t.Errorf("host stats %+v: want 1 bad input, 0 invalid proofs, 2 stored", st.Host)
	}
}
