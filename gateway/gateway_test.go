package gateway

import (
	"context"
	"net"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/c2flow/c2flow/gateway/cuzkpb"
	"github.com/c2flow/c2flow/job"
	"github.com/c2flow/c2flow/registry"
	"github.com/c2flow/c2flow/scheme"
)

// cuzk's priorities map onto c2flow's keys (1 most urgent) within the
// class the kind's scheme declares (scheme.Policy): 1 is WinningPoSt's
// alone, whatever a PoRep asks.
func TestPriority(t *testing.T) {
	s := &Server{cfg: Config{Schemes: registry.Schemes(registry.Options{})}}
	prio := func(p cuzkpb.Priority, k cuzkpb.ProofKind) (int, int) {
		pol, ok := s.policy(k)
		if !ok {
			t.Fatalf("no policy for %v", k)
		}
		return priority(p, pol.Priorities)
	}
	for _, c := range []struct {
		p     cuzkpb.Priority
		k     cuzkpb.ProofKind
		want  int
		asked int
	}{
		{cuzkpb.Priority_CRITICAL, cuzkpb.ProofKind_POREP_SEAL_COMMIT, 3, 1},
		{cuzkpb.Priority_HIGH, cuzkpb.ProofKind_POREP_SEAL_COMMIT, 3, 2},
		{cuzkpb.Priority_NORMAL, cuzkpb.ProofKind_POREP_SEAL_COMMIT, 3, 0},
		{cuzkpb.Priority_LOW, cuzkpb.ProofKind_POREP_SEAL_COMMIT, 4, 0},
		{cuzkpb.Priority_PRIORITY_UNSPECIFIED, cuzkpb.ProofKind_POREP_SEAL_COMMIT, 3, 0},
		{cuzkpb.Priority_CRITICAL, cuzkpb.ProofKind_SNAP_DEALS_UPDATE, 3, 1},
		{cuzkpb.Priority_CRITICAL, cuzkpb.ProofKind_WINDOW_POST_PARTITION, 2, 1},
		{cuzkpb.Priority_LOW, cuzkpb.ProofKind_WINDOW_POST_PARTITION, 2, 0},
		{cuzkpb.Priority_PRIORITY_UNSPECIFIED, cuzkpb.ProofKind_WINDOW_POST_PARTITION, 2, 0},
		{cuzkpb.Priority_CRITICAL, cuzkpb.ProofKind_WINNING_POST, 1, 0},
		{cuzkpb.Priority_LOW, cuzkpb.ProofKind_WINNING_POST, 1, 0},
		{cuzkpb.Priority_PRIORITY_UNSPECIFIED, cuzkpb.ProofKind_WINNING_POST, 1, 0},
		{cuzkpb.Priority(9), cuzkpb.ProofKind_POREP_SEAL_COMMIT, 3, 0},
	} {
		if got, asked := prio(c.p, c.k); got != c.want || asked != c.asked {
			t.Errorf("priority(%v, %v) = %d, %d; want %d, %d", c.p, c.k, got, asked, c.want, c.asked)
		}
	}
	// Only WinningPoSt reaches the urgent lanes, at any priority, and
	// only it runs on the urgent timeouts.
	for k := range cuzkKinds {
		pol, _ := s.policy(k)
		for p := range cuzkpb.Priority_name {
			got, _ := priority(cuzkpb.Priority(p), pol.Priorities)
			if (got == job.PriorityUrgent) != (k == cuzkpb.ProofKind_WINNING_POST) {
				t.Errorf("priority(%v, %v) = %d", cuzkpb.Priority(p), k, got)
			}
		}
		if (pol.Timeouts() == job.UrgentTimeouts()) != (k == cuzkpb.ProofKind_WINNING_POST) {
			t.Errorf("%v runs on %+v", k, pol.Timeouts())
		}
	}
	// A kind no scheme of the gateway admits has no policy: it is not
	// proved here.
	if _, ok := (&Server{cfg: Config{Schemes: scheme.Set{}}}).policy(cuzkpb.ProofKind_POREP_SEAL_COMMIT); ok {
		t.Error("a policy without a scheme")
	}
}

// A job id names the proof and the sector's identity, and reads back.
func TestJobID(t *testing.T) {
	ref := job.Ref{ProverID: strings.Repeat("e8", 32), SectorID: 7, InputDigest: strings.Repeat("ab", 32), Proof: "StackedDrg2KiBV1_1"}
	snap := ref
	snap.Proof = "UpdateStackedDrg2KiBV1"
	set := registry.Schemes(registry.Options{})
	for _, j := range []proofJob{{kind: scheme.KindPoRep, ref: ref}, {kind: scheme.KindSnap, ref: snap}} {
		got, err := parseJobID(j.id(), set)
		if err != nil || got.ref != j.ref || got.kind != j.kind {
			t.Fatalf("parseJobID(%q) = %+v, %v", j.id(), got, err)
		}
	}
	for _, bad := range []string{"", "porep-1000-7", "porep/StackedDrg2KiBV1_1/" + ref.ProverID + "/x/" + ref.InputDigest,
		"wpost/StackedDrg2KiBV1_1/" + ref.Identity(),
		"porep/StackedDrg2KiBV1_1/abcd/7/" + ref.InputDigest, "fwd/a/b/c/d",
		// a proof of another kind, of no scheme, or in another case
		"porep/UpdateStackedDrg2KiBV1/" + ref.Identity(), "snap/StackedDrg2KiBV1_1/" + ref.Identity(), "porep/2KiB/" + ref.Identity(),
		"porep/StackedDrg2KiBV1_1/" + strings.ToUpper(ref.ProverID) + "/7/" + ref.InputDigest,
		// over the bound
		"porep/StackedDrg2KiBV1_1/" + ref.Identity() + strings.Repeat("/", 300)} {
		if _, err := parseJobID(bad, set); err == nil {
			t.Errorf("parseJobID(%q) accepted", bad)
		}
	}
	// A huge id is refused unread, and never echoed whole.
	if _, err := parseJobID(strings.Repeat("porep/", 1<<20), set); err == nil || len(err.Error()) > 300 {
		t.Errorf("a 6 MiB job id: error of %d bytes", len(err.Error()))
	}
}

// A plaintext listener beyond loopback needs --insecure-listen; loopback
// and Unix sockets need nothing.
func TestListen(t *testing.T) {
	if _, err := Listen("0.0.0.0:0", ListenOptions{}); err == nil || !strings.Contains(err.Error(), "--insecure-listen") {
		t.Errorf("plaintext on 0.0.0.0: %v", err)
	}
	l, err := Listen("0.0.0.0:0", ListenOptions{Insecure: true})
	if err != nil {
		t.Fatal(err)
	}
	l.Close()
	for _, addr := range []string{"127.0.0.1:0", "localhost:0", "unix://" + filepath.Join(t.TempDir(), "cuzk.sock"), "unix:" + filepath.Join(t.TempDir(), "c.sock")} {
		l, err := Listen(addr, ListenOptions{})
		if err != nil {
			t.Errorf("Listen(%s): %v", addr, err)
			continue
		}
		l.Close()
	}
	// A stale socket of an earlier run is replaced.
	sock := filepath.Join(t.TempDir(), "stale.sock")
	l1, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	l1.(*net.UnixListener).SetUnlinkOnClose(false)
	l1.Close()
	l2, err := Listen("unix://"+sock, ListenOptions{})
	if err != nil {
		t.Fatalf("over a stale socket: %v", err)
	}
	l2.Close()
	if _, err := Listen("nonsense", ListenOptions{}); err == nil {
		t.Error("Listen(nonsense) accepted")
	}
}

// Every kind of cuzk's is c2flow's own: a malformed SnapDeals or PoSt
// request is a FAILED result naming its fault, never Unimplemented; an
// unknown kind is an invalid argument.
func TestRefusedKinds(t *testing.T) {
	s := New(Config{Schemes: registry.Schemes(registry.Options{})})
	ctx := context.Background()
	snap, err := s.Prove(ctx, &cuzkpb.ProveRequest{Submit: &cuzkpb.SubmitProofRequest{ProofKind: cuzkpb.ProofKind_SNAP_DEALS_UPDATE, RegisteredProof: 3}})
	if err != nil || snap.GetResult().GetStatus() != cuzkpb.AwaitProofResponse_FAILED || !strings.Contains(snap.GetResult().GetErrorMessage(), "no vanilla_proofs") {
		t.Errorf("Prove(SNAP_DEALS_UPDATE) without vanilla proofs: %v, %v", snap, err)
	}
	snap, err = s.Prove(ctx, &cuzkpb.ProveRequest{Submit: &cuzkpb.SubmitProofRequest{ProofKind: cuzkpb.ProofKind_SNAP_DEALS_UPDATE, RegisteredProof: 9}})
	if err != nil || !strings.Contains(snap.GetResult().GetErrorMessage(), "registered update proof 9") {
		t.Errorf("Prove(SNAP_DEALS_UPDATE) of registered proof 9: %v, %v", snap, err)
	}
	// PoSt is c2flow's own too: a malformed request is a FAILED result
	// (Prove) or InvalidArgument (SubmitProof) naming its fault.
	for _, tc := range []struct {
		kind cuzkpb.ProofKind
		want string
	}{{cuzkpb.ProofKind_WINDOW_POST_PARTITION, "not a window proof"}, {cuzkpb.ProofKind_WINNING_POST, "randomness: 0 bytes"}} {
		res, err := s.Prove(ctx, &cuzkpb.ProveRequest{Submit: &cuzkpb.SubmitProofRequest{ProofKind: tc.kind}})
		if err != nil || res.GetResult().GetStatus() != cuzkpb.AwaitProofResponse_FAILED || !strings.Contains(res.GetResult().GetErrorMessage(), tc.want) {
			t.Errorf("Prove(%v) of nothing: %v, %v; want FAILED naming %q", tc.kind, res, err, tc.want)
		}
		if _, err := s.SubmitProof(ctx, &cuzkpb.SubmitProofRequest{ProofKind: tc.kind}); status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("SubmitProof(%v) of nothing: %v", tc.kind, err)
		}
	}
	if _, err := s.Prove(ctx, &cuzkpb.ProveRequest{Submit: &cuzkpb.SubmitProofRequest{ProofKind: 9}}); status.Code(err) != codes.InvalidArgument {
		t.Errorf("Prove of kind 9: %v", err)
	}
	if _, err := s.Prove(ctx, &cuzkpb.ProveRequest{}); status.Code(err) != codes.InvalidArgument {
		t.Errorf("Prove without submit: %v", err)
	}
	if _, err := s.AwaitProof(ctx, &cuzkpb.AwaitProofRequest{JobId: "fwd:x"}); status.Code(err) != codes.NotFound {
		t.Errorf("AwaitProof of a forwarded job without --forward: %v", err)
	}
}
