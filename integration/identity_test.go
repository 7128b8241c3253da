package integration

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/c2flow/c2flow/activities"
	"github.com/c2flow/c2flow/batch"
	"github.com/c2flow/c2flow/job"
	"github.com/c2flow/c2flow/scheme/testscheme/porep"
	"github.com/c2flow/c2flow/scheme/testscheme/porep/poreptest"
	"github.com/c2flow/c2flow/storage"
)

// sealFor seals test sector id of the given prover (first byte), with an
// optional ticket change: another C1 of the same sector.
func sealFor(t *testing.T, prover byte, id uint64, ticket byte) *porep.C1 {
	t.Helper()
	p, err := porep.LookupProfile("2KiB")
	if err != nil {
		t.Fatal(err)
	}
	info := poreptest.Info(id)
	info.ProverID[0], info.Ticket[1] = prover, ticket
	s, err := porep.Seal(p, info)
	if err != nil {
		t.Fatal(err)
	}
	return s.C1()
}

// A sector is (prover, number, C1 digest): two provers' sector 1 are two
// sectors, in one batch and in two; the same sector with another C1 is a
// new proof; a rerun proves what is missing, a stored C2 that does not
// verify is proved again, and one that verifies is reported, not redone.
func TestSectorIdentity(t *testing.T) {
	s := newStack(t, "2KiB")
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	w := s.startWorker("w", activities.Config{PartitionWorkers: 2})
	a, b := sealFor(t, 0xaa, 1, 0), sealFor(t, 0xbb, 1, 0)
	ra, rb := s.putC1(a), s.putC1(b)
	if ra.Identity() == rb.Identity() || storage.C2Key(ra) == storage.C2Key(rb) {
		t.Fatalf("two provers' sector 1 share an identity: %s", ra.Identity())
	}

	// One batch: two sectors, two proofs, each of its own C1.
	refs := []job.Ref{ra, rb}
	res := s.run(ctx, batch.Options{BatchID: batch.ID(refs)}, refs)
	byProver := map[string]job.SectorResult{}
	for _, r := range res.Sectors {
		byProver[r.ProverID] = r
	}
	for _, c := range []struct {
		ref job.Ref
		c1  *porep.C1
	}{{ra, a}, {rb, b}} {
		r := byProver[c.ref.ProverID]
		if r.Status != job.StatusProved || r.C2Key != storage.C2Key(c.ref) {
			t.Fatalf("%s: %s %q -> %s", c.ref, r.Status, r.Error, r.C2Key)
		}
		if err := s.verifyStored(c.c1); err != nil {
			t.Fatalf("%s: %v", c.ref, err)
		}
	}
	// Each proof is of its own C1: A's proof does not verify for B.
	_, pa, err := s.store.GetC2(ctx, ra)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.store.Put(ctx, storage.C2Key(rb), pa); err != nil {
		t.Fatal(err)
	}
	if err := s.verifyStored(b); err == nil {
		t.Fatal("prover A's proof verifies as prover B's")
	}

	// B again in another batch: its stored C2 (now A's bytes) is checked,
	// found bad, and B is proved again; A, in the same batch, is reported.
	again := s.run(ctx, batch.Options{BatchID: "identity-again"}, refs)
	for _, r := range again.Sectors {
		want := job.StatusDuplicate
		if r.ProverID == rb.ProverID {
			want = job.StatusProved
		}
		if r.Status != want {
			t.Fatalf("rerun: prover %s..: %s %q, want %s", r.ProverID[:4], r.Status, r.Error, want)
		}
	}
	if err := s.verifyStored(b); err != nil {
		t.Fatalf("B after its bad C2 was proved again: %v", err)
	}

	// A's C2 deleted; the first batch rerun (same id) proves A only.
	if err := s.store.Delete(ctx, storage.C2Key(ra)); err != nil {
		t.Fatal(err)
	}
	rerun := s.run(ctx, batch.Options{BatchID: batch.ID(refs)}, refs)
	for _, r := range rerun.Sectors {
		want := job.StatusDuplicate
		if r.ProverID == ra.ProverID {
			want = job.StatusProved
		}
		if r.Status != want {
			t.Fatalf("rerun after delete: prover %s..: %s %q, want %s", r.ProverID[:4], r.Status, r.Error, want)
		}
	}
	if err := s.verifyStored(a); err != nil {
		t.Fatal(err)
	}

	// A's sector 1 with another C1 (another ticket): a new sector, a new
	// proof, not a replay of the old one.
	a2 := sealFor(t, 0xaa, 1, 9)
	ra2 := s.putC1(a2)
	if ra2.Identity() == ra.Identity() || !strings.HasPrefix(ra2.Identity(), ra.ProverID+"/1/") {
		t.Fatalf("identity of the new C1: %s", ra2.Identity())
	}
	fresh := s.run(ctx, batch.Options{BatchID: batch.ID([]job.Ref{ra2})}, []job.Ref{ra2})
	if r := fresh.Sectors[0]; r.Status != job.StatusProved || r.C2Key != storage.C2Key(ra2) {
		t.Fatalf("new C1 of a proved sector: %s %q -> %s", r.Status, r.Error, r.C2Key)
	}
	if err := s.verifyStored(a2); err != nil {
		t.Fatal(err)
	}
	if err := w.stop(); err != nil {
		t.Fatal(err)
	}
}

// A C1 far larger than its declared profile allows, put straight into S3
// by another client, is refused from its size before the worker reads it:
// bounded memory whoever wrote the object.
func TestOversizeC1RefusedBeforeReading(t *testing.T) {
	s := newStack(t, "2KiB")
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	w := s.startWorker("w", activities.Config{PartitionWorkers: 1})
	idle := w.waitStats(time.Minute, func(st activities.Stats) bool { return st.PeakRSS > 0 })

	var raw bytes.Buffer
	if err := poreptest.Sector(t, "32GiB", 801).C1().Encode(&raw); err != nil {
		t.Fatal(err)
	}
	relabelled := bytes.Replace(raw.Bytes(), []byte(`"registered_proof": "32GiB"`), []byte(`"registered_proof": "2KiB"`), 1)
	if bytes.Equal(relabelled, raw.Bytes()) {
		t.Fatal("the test C1 has no registered_proof to relabel")
	}
	ref := job.NewRef(poreptest.Info(801).ProverID, 801, relabelled)
	ref.Proof = "2KiB"
	if err := s.store.PutC1(ctx, ref, relabelled); err != nil {
		t.Fatal(err)
	}
	res := s.run(ctx, batch.Options{BatchID: "oversize"}, []job.Ref{ref})
	r := res.Sectors[0]
	if r.Status != job.StatusFailed || !strings.Contains(r.Error, "BadC1") || !strings.Contains(r.Error, "the object has") {
		t.Fatalf("oversize C1: %s %q", r.Status, r.Error)
	}
	if err := w.stop(); err != nil {
		t.Fatal(err)
	}
	st := w.readStats()
	grew := st.PeakRSS - idle.PeakRSS
	t.Logf("%d-byte C1 declared 2KiB: refused; worker peak RSS %d MiB, +%d MiB over idle", len(relabelled), st.PeakRSS>>20, grew>>20)
	if grew > 256<<20 {
		t.Fatalf("worker peak RSS grew by %d MiB refusing one C1", grew>>20)
	}
}
