package gateway

import (
	"context"
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/c2flow/c2flow/gateway/cuzkpb"
	"github.com/c2flow/c2flow/registry"
)

// --forward at the gateway's own address is refused at start, by any
// name of it; another address is not.
func TestCheckForward(t *testing.T) {
	ctx := context.Background()
	l, err := Listen("127.0.0.1:0", ListenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	port := l.Addr().(*net.TCPAddr).Port
	for _, fw := range []string{fmt.Sprintf("127.0.0.1:%d", port), fmt.Sprintf("localhost:%d", port), fmt.Sprintf("dns:///localhost:%d", port)} {
		if err := CheckForward(ctx, l, fw); err == nil || !strings.Contains(err.Error(), "own address") {
			t.Errorf("--forward %s to a gateway on %s: %v", fw, l.Addr(), err)
		}
	}
	for _, fw := range []string{fmt.Sprintf("127.0.0.1:%d", port+1), "unix:///tmp/other.sock"} {
		if err := CheckForward(ctx, l, fw); err != nil {
			t.Errorf("--forward %s to a gateway on %s: %v", fw, l.Addr(), err)
		}
	}
	all, err := Listen("0.0.0.0:0", ListenOptions{Insecure: true})
	if err != nil {
		t.Fatal(err)
	}
	defer all.Close()
	if err := CheckForward(ctx, all, fmt.Sprintf("127.0.0.1:%d", all.Addr().(*net.TCPAddr).Port)); err == nil {
		t.Errorf("--forward to loopback of a gateway on %s accepted", all.Addr())
	}
	sock := filepath.Join(t.TempDir(), "gw.sock")
	u, err := Listen("unix://"+sock, ListenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer u.Close()
	for _, fw := range []string{"unix://" + sock, "unix:" + sock, "unix://" + filepath.Dir(sock) + "/./gw.sock"} {
		if err := CheckForward(ctx, u, fw); err == nil {
			t.Errorf("--forward %s to a gateway on %s accepted", fw, sock)
		}
	}
}

// A gateway whose --forward leads back to itself refuses the forwarded
// request at its first return, naming the loop, instead of passing it
// round for ever.
func TestForwardLoop(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	l, err := Listen("127.0.0.1:0", ListenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	fw, conn, err := Dial(l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	done := make(chan error, 1)
	sctx, stop := context.WithCancel(ctx)
	go func() { done <- Serve(sctx, l, New(Config{Forward: fw, ForwardAddr: l.Addr().String()}), nil) }()
	defer func() { stop(); <-done }()
	cc, err := grpc.NewClient(l.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	c := cuzkpb.NewProvingEngineClient(cc)
	_, err = c.Prove(ctx, &cuzkpb.ProveRequest{Submit: &cuzkpb.SubmitProofRequest{ProofKind: cuzkpb.ProofKind_WINDOW_POST_PARTITION}})
	if status.Code(err) != codes.FailedPrecondition || !strings.Contains(err.Error(), "forward loop") {
		t.Errorf("Prove(WindowPoSt) forwarded to itself: %v", err)
	}
	_, err = c.AwaitProof(ctx, &cuzkpb.AwaitProofRequest{JobId: "fwd:fwd:x"})
	if status.Code(err) != codes.FailedPrecondition {
		t.Errorf("AwaitProof of a forwarded job, forwarded to itself: %v", err)
	}
}

// PreloadSRS and EvictSRS forward the circuits of the kinds --forward
// takes (their schemes' policies say Forwardable), and any circuit c2flow
// does not know, but never a PoRep's or a SnapDeals', which c2flow proves.
func TestForwardsCircuitByKindTable(t *testing.T) {
	none := &Server{}
	if none.forwardsCircuit("wpost-32g") {
		t.Error("without --forward, wpost-32g is forwarded")
	}
	s := &Server{cfg: Config{Forward: cuzkpb.NewProvingEngineClient(nil), Schemes: registry.Schemes(registry.Options{})}}
	for id, want := range map[string]bool{"porep-32g": false, "snap-32g": false, "wpost-32g": true, "winning-32g": true, "ni-porep-32g": true} {
		if got := s.forwardsCircuit(id); got != want {
			t.Errorf("forwardsCircuit(%q) = %v, want %v", id, got, want)
		}
	}
}
