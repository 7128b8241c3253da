package activities

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	groth16bls "github.com/consensys/gnark/backend/groth16/bls12-381"
	"go.temporal.io/sdk/temporal"

	"github.com/c2flow/c2flow/gpu"
	"github.com/c2flow/c2flow/job"
	"github.com/c2flow/c2flow/prover"
	"github.com/c2flow/c2flow/scheme"
	"github.com/c2flow/c2flow/scheme/testscheme"
	"github.com/c2flow/c2flow/scheme/testscheme/params"
	"github.com/c2flow/c2flow/scheme/testscheme/params/paramstest"
	"github.com/c2flow/c2flow/scheme/testscheme/porep"
	"github.com/c2flow/c2flow/scheme/testscheme/porep/poreptest"
	"github.com/c2flow/c2flow/scheme/testscheme/schemetest"
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
	ref, err := schemetest.PutC1(ctx, store, c1)
	if err != nil {
		t.Fatal(err)
	}
	pr, err := testscheme.NewProver(paramstest.Keys(t, profile))
	if err != nil {
		t.Fatal(err)
	}
	slots, err := gpu.CPUSlots(1, 0)
	if err != nil {
		t.Fatal(err)
	}
	c2, proofs := partitionProofs(t, pr, slots, c1, profile)
	budget, err := NewBudget(1)
	if err != nil {
		t.Fatal(err)
	}
	phases := &ProverPhases{Artifacts: store, Schemes: scheme.Set{testscheme.New(params.DirStore{Root: paramstest.Dir()})}, Log: slog.New(slog.DiscardHandler)}
	h := NewHost("store-test", phases, slots, budget, slog.New(slog.DiscardHandler))

	// Two proofs where partition 1's one proof belongs.
	two, err := (&testscheme.C2{Profile: profile, Proofs: c2.Proofs[:2]}).MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	bad := append([][]byte(nil), proofs...)
	bad[1] = two
	_, err = h.StoreC2(ctx, job.StoreInput{Ref: ref, Proofs: bad})
	assertNamed(t, err, "partition 1: 2 proofs")

	// Partition 2's proof swapped with partition 3's: verification names it.
	sw := append([][]byte(nil), proofs...)
	sw[2], sw[3] = sw[3], sw[2]
	_, err = h.StoreC2(ctx, job.StoreInput{Ref: ref, Proofs: sw})
	assertNamed(t, err, "partition 2")

	// A stored C2 that does not verify is not trusted: the lookup says
	// why, and the next StoreC2 replaces it with a checked one.
	junk, err := (&testscheme.C2{Profile: profile, Proofs: []*groth16bls.Proof{c2.Proofs[1], c2.Proofs[0], c2.Proofs[2], c2.Proofs[3]}}).MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.PutIfAbsent(ctx, storage.C2Key(ref), junk); err != nil {
		t.Fatal(err)
	}
	lo, err := h.LookupC2(ctx, ref)
	if err != nil || !lo.Found || lo.Valid || !strings.Contains(lo.Reason, "manifest") {
		t.Fatalf("lookup of a C2 without manifest: %+v %v", lo, err)
	}
	if err := store.PutManifest(ctx, storage.Manifest{Ref: job.Ref{ProverID: ref.ProverID, SectorID: ref.SectorID, InputDigest: ref.InputDigest}}, junk); err != nil {
		t.Fatal(err)
	}
	lo, err = h.LookupC2(ctx, ref)
	if err != nil || !lo.Found || lo.Valid || !strings.Contains(lo.Reason, "partition 0") {
		t.Fatalf("lookup of a C2 that does not verify: %+v %v", lo, err)
	}
	if _, err := h.StoreC2(ctx, job.StoreInput{Ref: ref, Proofs: proofs}); err != nil {
		t.Fatalf("replacing a bad stored C2: %v", err)
	}
	lo, err = h.LookupC2(ctx, ref)
	if err != nil || !lo.Valid {
		t.Fatalf("lookup after the replacement: %+v %v", lo, err)
	}
	m, _, err := store.GetC2(ctx, ref)
	if err != nil || m.InputDigest != ref.InputDigest || m.VKDigest == "" || m.VKDigest == m.CircuitDigest || m.PKDigest == "" || m.PKDigest == m.VKDigest {
		t.Fatalf("manifest %+v %v: want the C1 digest and the vk file's digest", m, err)
	}

	// The C1 object replaced after submission (another client overwrote
	// it with a valid C1 of another sector): refused, not proved.
	var other bytes.Buffer
	if err := poreptest.Sector(t, profile, 22).C1().Encode(&other); err != nil {
		t.Fatal(err)
	}
	if err := store.Put(ctx, storage.C1Key(ref), other.Bytes()); err != nil {
		t.Fatal(err)
	}
	_, err = h.ValidateC1(ctx, job.SectorInput{Ref: ref})
	if err == nil || !strings.Contains(err.Error(), "bad C1") || !strings.Contains(err.Error(), "pinned") {
		t.Fatalf("a C1 object whose bytes are not the pinned ones: %v", err)
	}
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

// An activity canceled on its worker (not by Temporal) is reported as a
// host loss; a cancel Temporal delivered, or any other error, is left as
// it is.
func TestHostCanceledIsHostLost(t *testing.T) {
	local, cancel := context.WithCancelCause(context.Background())
	cancel(errors.New("heartbeat RPC gave up"))
	err := hostCanceled(local, "h1", "DevicePhase", context.Canceled)
	var ae *temporal.ApplicationError
	if !errors.As(err, &ae) || ae.Type() != job.ErrHostLost || !strings.Contains(err.Error(), "heartbeat RPC gave up") {
		t.Fatalf("worker-side cancel: %v", err)
	}
	byServer, cancel2 := context.WithCancelCause(context.Background())
	cancel2(temporal.NewCanceledError())
	if err := hostCanceled(byServer, "h1", "DevicePhase", context.Canceled); err != context.Canceled {
		t.Fatalf("cancel requested by Temporal: %v", err)
	}
	other := errors.New("device error")
	if err := hostCanceled(local, "h1", "DevicePhase", other); err != other {
		t.Fatalf("another error on a canceled context: %v", err)
	}
	if err := hostCanceled(context.Background(), "h1", "DevicePhase", context.Canceled); err != context.Canceled {
		t.Fatalf("context.Canceled on a live context: %v", err)
	}
}

// A stored C2 rotted on the server's disk (one flipped byte) is not
// trusted by the lookup, and the next StoreC2 replaces it: the new proof
// is stored and verifies, and the rotten bytes are gone.
func TestStoreC2ReplacesACorruptStoredC2(t *testing.T) {
	ctx := context.Background()
	const profile = "2KiB"
	keys := paramstest.Keys(t, profile)
	srv := s3test.Start(t)
	store := srv.Store("c2flow-test")
	c1 := poreptest.Sector(t, profile, 31).C1()
	ref, err := schemetest.PutC1(ctx, store, c1)
	if err != nil {
		t.Fatal(err)
	}
	pr, err := testscheme.NewProver(keys)
	if err != nil {
		t.Fatal(err)
	}
	slots, err := gpu.CPUSlots(1, 0)
	if err != nil {
		t.Fatal(err)
	}
	budget, err := NewBudget(1)
	if err != nil {
		t.Fatal(err)
	}
	phases := &ProverPhases{Artifacts: store, Schemes: scheme.Set{testscheme.New(params.DirStore{Root: paramstest.Dir()})}, Log: slog.New(slog.DiscardHandler)}
	h := NewHost("store-test", phases, slots, budget, slog.New(slog.DiscardHandler))
	prove := func() [][]byte { _, proofs := partitionProofs(t, pr, slots, c1, profile); return proofs }
	if _, err := h.StoreC2(ctx, job.StoreInput{Ref: ref, Proofs: prove()}); err != nil {
		t.Fatal(err)
	}
	key := storage.C2Key(ref)
	f := filepath.Join(srv.Dir, "c2flow-test", filepath.FromSlash(key))
	old, err := os.ReadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	old[len(old)/2] ^= 0x01 // bit rot: same size, one byte changed
	if err := os.WriteFile(f, old, 0o644); err != nil {
		t.Fatal(err)
	}
	lo, err := h.LookupC2(ctx, ref)
	if err != nil || !lo.Found || lo.Valid {
		t.Fatalf("lookup of a rotten C2: %+v %v", lo, err)
	}
	out, err := h.StoreC2(ctx, job.StoreInput{Ref: ref, Proofs: prove()})
	if err != nil {
		t.Fatalf("storing over a rotten C2: %v", err)
	}
	if !out.Created {
		t.Fatal("the rotten C2 was kept")
	}
	lo, err = h.LookupC2(ctx, ref)
	if err != nil || !lo.Valid {
		t.Fatalf("lookup after the replacement: %+v %v", lo, err)
	}
	_, now, err := store.GetC2(ctx, ref)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(now, old) {
		t.Fatal("the rotten bytes are still stored")
	}
}

// partitionProofs proves c1's sector directly and returns its C2 and each
// partition's proof as the pipeline carries it to StoreC2.
func partitionProofs(t *testing.T, pr *prover.Prover, slots *gpu.Slots, c1 *porep.C1, profile string) (*testscheme.C2, [][]byte) {
	t.Helper()
	c2, _, err := schemetest.ProveSector(context.Background(), pr, paramstest.Keys(t, profile), slots, c1, nil)
	if err != nil {
		t.Fatal(err)
	}
	var proofs [][]byte
	for _, p := range c2.Proofs {
		b, err := (&testscheme.C2{Profile: profile, Proofs: []*groth16bls.Proof{p}}).MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		proofs = append(proofs, b)
	}
	return c2, proofs
}

// A lapsed job's input is dropped from storage, once or again, unless a
// proof of its identity is stored.
func TestDropInput(t *testing.T) {
	ctx := context.Background()
	store := s3test.Start(t).Store("c2flow-drop")
	if err := store.EnsureBucket(ctx); err != nil {
		t.Fatal(err)
	}
	ref, err := schemetest.PutC1(ctx, store, poreptest.Sector(t, "2KiB", 22).C1())
	if err != nil {
		t.Fatal(err)
	}
	h := NewHost("drop-test", &ProverPhases{Artifacts: store, Log: slog.New(slog.DiscardHandler)}, nil, nil, slog.New(slog.DiscardHandler))
	for range 2 {
		if err := h.DropInput(ctx, ref); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := store.GetC1(ctx, ref); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("the dropped input: %v, want ErrNotFound", err)
	}
	// A job whose proof is stored keeps its input (issue 55: AwaitProof
	// re-verifies a stored proof against it).
	if ref, err = schemetest.PutC1(ctx, store, poreptest.Sector(t, "2KiB", 23).C1()); err != nil {
		t.Fatal(err)
	}
	if err := store.Put(ctx, storage.C2Key(ref), []byte("a stored proof")); err != nil {
		t.Fatal(err)
	}
	if err := h.DropInput(ctx, ref); err != nil {
		t.Fatal(err)
	}
	if _, err := store.GetC1(ctx, ref); err != nil {
		t.Errorf("the input of a job whose proof is stored: %v, want it kept", err)
	}
}
