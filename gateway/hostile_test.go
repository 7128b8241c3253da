package gateway

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/c2flow/c2flow/filecoin/proofs"
	"github.com/c2flow/c2flow/gateway/cuzkpb"
	"github.com/c2flow/c2flow/gateway/gatewaytest"
	"github.com/c2flow/c2flow/registry"
)

// serveTest serves a gateway of cfg (the registry's schemes) on a
// loopback port for the test and returns its address.
func serveTest(t *testing.T, cfg Config) (string, *Server) {
	t.Helper()
	l, err := Listen("127.0.0.1:0", ListenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cfg.Schemes = registry.Schemes(registry.Options{})
	srv := New(cfg)
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, l, srv, nil) }()
	t.Cleanup(func() { stop(); <-done })
	return l.Addr().String(), srv
}

// submitFields is a SubmitProofRequest's head: proof_kind and
// registered_proof as Curio sends them, first.
func submitFields(kind cuzkpb.ProofKind, rp uint64) []byte {
	b := protowire.AppendString(protowire.AppendTag(nil, 1, protowire.BytesType), "hostile")
	if kind != 0 {
		b = protowire.AppendVarint(protowire.AppendTag(b, fieldKind, protowire.VarintType), uint64(kind))
	}
	if rp != 0 {
		b = protowire.AppendVarint(protowire.AppendTag(b, fieldRegisteredProof, protowire.VarintType), rp)
	}
	return b
}

// withEntries appends n vanilla_proofs entries of size bytes.
func withEntries(b []byte, n, size int) []byte {
	e := protowire.AppendBytes(protowire.AppendTag(nil, fieldVanillaProofs, protowire.BytesType), make([]byte, size))
	b = bytes.Clone(b)
	for range n {
		b = append(b, e...)
	}
	return b
}

// proveOf wraps SubmitProofRequests in one ProveRequest, a submit field
// each.
func proveOf(subs ...[]byte) []byte {
	var b []byte
	for _, s := range subs {
		b = protowire.AppendBytes(protowire.AppendTag(b, fieldSubmit, protowire.BytesType), s)
	}
	return b
}

// framed is msg as one gRPC message.
func framed(msg []byte) io.Reader { return bytes.NewReader(gatewaytest.Frame(msg)) }

// Every message is shaped before it is decoded, whatever its kind (issue
// 55): a Prove of no kind with 20 million empty vanilla_proofs (a 40 MB
// message; decoded whole before: +1.9 GB), a Prove of two submit fields
// (the first 20M empty entries; protobuf would merge them into the second,
// a valid request, and prove it), one that names proof_kind twice
// (WINNING_POST to be admitted from the urgent reserve, POREP_SEAL_COMMIT
// to be proved) and a call of two messages are each refused by name, the
// process's peak RSS growing little; a message that claims WinningPoSt and
// is larger than WinningPoSt's largest request is refused unread.
func TestHostileMessagesRefusedByName(t *testing.T) {
	addr, _ := serveTest(t, Config{})
	tr := h2c()
	defer tr.CloseIdleConnections()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	porep := submitFields(cuzkpb.ProofKind_POREP_SEAL_COMMIT, uint64(proofs.StackedDrg2KiBV1_1))
	porep = protowire.AppendBytes(protowire.AppendTag(porep, fieldVanillaProof, protowire.BytesType), []byte(`{"SectorNum":1}`))
	twice := protowire.AppendVarint(protowire.AppendTag(submitFields(cuzkpb.ProofKind_WINNING_POST, 0), fieldKind, protowire.VarintType), uint64(cuzkpb.ProofKind_POREP_SEAL_COMMIT))
	for _, c := range []struct {
		name, method string
		body         io.Reader
		want         string
	}{
		{"kind 0, 20M empty entries", "Prove", framed(proveOf(withEntries(submitFields(0, 0), 20_000_000, 0))), "no proof_kind"},
		{"two submits, 20M empty entries first", "Prove", framed(proveOf(withEntries(submitFields(cuzkpb.ProofKind_POREP_SEAL_COMMIT, uint64(proofs.StackedDrg64GiBV1_1)), 20_000_000, 0), porep)), "more than 4096 entries"},
		{"two submits", "Prove", framed(proveOf(withEntries(submitFields(cuzkpb.ProofKind_POREP_SEAL_COMMIT, uint64(proofs.StackedDrg64GiBV1_1)), 10, 0), porep)), "ProveRequest.submit appears more than once"},
		{"proof_kind twice", "SubmitProof", framed(twice), "SubmitProofRequest.proof_kind appears more than once"},
		{"a WinningPoSt of 20 MB", "SubmitProof", framed(withEntries(submitFields(cuzkpb.ProofKind_WINNING_POST, uint64(proofs.StackedDrgWinning32GiBV1)), 1, 20_000_000)), "the largest legitimate SubmitProof request of WINNING_POST"},
		{"an unknown kind", "Prove", framed(proveOf(submitFields(77, 0))), "proof_kind 77 is not one of cuzk's kinds"},
		{"two messages", "CancelProof", io.MultiReader(framed(nil), framed(nil)), "a second request message"},
		{"an AwaitProof of 1 MiB", "AwaitProof", framed(make([]byte, 1<<20)), "the largest legitimate AwaitProof request is 65536"},
	} {
		var res string
		growth, _ := peakGrowth(t, func() string {
			res = call(t, ctx, tr, addr, "/cuzk.v1.ProvingEngine/"+c.method, c.body)
			return res
		})
		t.Logf("%s: peak RSS +%d MiB: %s", c.name, growth, res)
		// A Prove's bad request is a FAILED result where it was read,
		// InvalidArgument where it was refused unread.
		if !(strings.HasPrefix(res, "3 ") || strings.HasPrefix(res, "0 FAILED ")) || !strings.Contains(res, c.want) {
			t.Errorf("%s: %q, want it refused naming %q", c.name, res, c.want)
		}
		if growth > 200 {
			t.Errorf("%s: peak RSS +%d MiB: decoded (before: +1.9 GB for 20M entries)", c.name, growth)
		}
	}
}

// largestC1 is the largest PoRep request's C1 envelope, a 64GiB
// sector's (c1.MaxInputSize).
const largestC1 = 116_894_444

// waitUntil waits for cond, failing the test after a minute.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(time.Minute); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("%s: not within a minute", what)
		}
	}
}

// queued is how many calls wait in class c's queue.
func (b *budget) queued(c class) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.queue[c])
}

// The reserves hold a real 32GiB window partition at the default budget:
// while the largest PoRep (a 64GiB C1's 112 MiB) is being read and a
// second one waits for room, the largest legitimate 32GiB WindowPoSt
// request (2349 sectors of 24,960 bytes, 58.6 MB) is admitted at once and
// read (then refused for its zero vanilla proofs), where before it was
// refused: its reserve was 50 MiB, its read cost 3n, and the waiting PoRep
// stood at the head of WindowPoSt's pool.
func TestWindowPoStBesideLargestPoRep(t *testing.T) {
	if testing.Short() {
		t.Skip("reads a 58.6 MB request beside 112 MiB ones")
	}
	addr, srv := serveTest(t, Config{ReadTimeout: time.Minute})
	tr := h2c()
	defer tr.CloseIdleConnections()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var pipes []*io.PipeWriter
	defer func() {
		for _, w := range pipes {
			w.Close()
		}
	}()
	stalls := make(chan string, 2)
	stall := func() {
		r, w := io.Pipe()
		pipes = append(pipes, w)
		go func() {
			stalls <- call(t, ctx, tr, addr, cuzkpb.ProvingEngine_Prove_FullMethodName, io.MultiReader(io.LimitReader(proveBody(largestC1), 4<<10), r))
		}()
	}
	stall()
	waitUntil(t, "the first PoRep admitted", func() bool { return srv.budget.heldBy(classGeneral) > 0 })
	stall()
	waitUntil(t, "the second PoRep queued", func() bool { return srv.budget.queued(classGeneral) > 0 })
	info, err := proofs.LookupPoSt(proofs.StackedDrgWindow32GiBV1_2)
	if err != nil {
		t.Fatal(err)
	}
	window := withEntries(submitFields(cuzkpb.ProofKind_WINDOW_POST_PARTITION, uint64(info.Proof)), info.SectorCount, 24_960)
	t0 := time.Now()
	got := call(t, ctx, tr, addr, cuzkpb.ProvingEngine_SubmitProof_FullMethodName, framed(window))
	t.Logf("a %d-byte WindowPoSt beside a 112 MiB PoRep read and another waiting: %v: %s", len(window), time.Since(t0).Round(time.Millisecond), got)
	if strings.HasPrefix(got, "8 ") || strings.Contains(got, "request memory") || strings.Contains(got, "not read") {
		t.Errorf("the largest WindowPoSt beside the largest PoRep: %q, want it admitted and read", got)
	}
	if n := srv.budget.queued(classGeneral); n != 1 {
		t.Errorf("%d PoReps waiting, want the second still waiting", n)
	}
}
