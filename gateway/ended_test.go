package gateway

import (
	"context"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/c2flow/c2flow/filecoin/post/posttest"
	"github.com/c2flow/c2flow/filecoin/proofs"
	"github.com/c2flow/c2flow/gateway/cuzkpb"
	"github.com/c2flow/c2flow/job"
	"github.com/c2flow/c2flow/registry"
	"github.com/c2flow/c2flow/scheme"
	"github.com/c2flow/c2flow/storage"
	"github.com/c2flow/c2flow/storage/s3test"
)

func TestMain(m *testing.M) { s3test.Main(m) }

// A call whose deadline passes while its request is checked (a PoSt's
// native verification) stores nothing and starts nothing: before, 5 of 6
// Prove calls that ended on their deadline left their input in S3 with no
// proof, and some started batches nobody waited for.
func TestEndedCallStoresNothing(t *testing.T) {
	srv := s3test.Start(t)
	store, err := storage.Open(context.Background(), srv.Config("gw-ended"))
	if err != nil {
		t.Fatal(err)
	}
	if err := store.EnsureBucket(context.Background()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	// The call ends while its request is checked.
	set := registry.Schemes(registry.Options{})
	post, err := set.Admitter(scheme.KindWinningPoSt)
	if err != nil {
		t.Fatal(err)
	}
	gw := New(Config{Schemes: scheme.Set{endingAdmitter{post, cancel}}, Store: store}) // no Temporal: nothing may start
	info, err := proofs.LookupPoSt(proofs.StackedDrgWinning2KiBV1)
	if err != nil {
		t.Fatal(err)
	}
	var r [32]byte
	vs, err := posttest.Bincodes(info, r, 15)
	if err != nil {
		t.Fatal(err)
	}
	req := &cuzkpb.SubmitProofRequest{RequestId: "ended", ProofKind: cuzkpb.ProofKind_WINNING_POST, SectorSize: info.SectorSize,
		RegisteredProof: uint64(proofs.StackedDrgWinning2KiBV1), VanillaProofs: vs, MinerId: 1000, Randomness: r[:]}
	if _, err := gw.start(ctx, req, true); status.Code(err) != codes.Canceled {
		t.Errorf("a call that ended before its input was stored: %v, want Canceled", err)
	}
	keys, err := store.List(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != 0 {
		t.Errorf("an ended call stored %v", keys)
	}
}

// endingAdmitter admits as its scheme does, then ends the call.
type endingAdmitter struct {
	scheme.Admitter
	end context.CancelFunc
}

func (a endingAdmitter) Admit(ctx context.Context, r scheme.Request) (job.Ref, []byte, error) {
	ref, raw, err := a.Admitter.Admit(ctx, r)
	a.end()
	return ref, raw, err
}
