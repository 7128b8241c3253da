package gateway

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/c2flow/c2flow/gateway/cuzkpb"
	"github.com/c2flow/c2flow/gateway/gatewaytest"
	"github.com/c2flow/c2flow/registry"
)

type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// proveBody is a gRPC Prove request of a PoRep whose vanilla_proof is n
// zero bytes, streamed: the client holds none of it.
func proveBody(n int) io.Reader {
	field := func(m protoreflect.ProtoMessage, name string) protowire.Number {
		return m.ProtoReflect().Descriptor().Fields().ByName(protoreflect.Name(name)).Number()
	}
	sub := protowire.AppendTag(nil, field(&cuzkpb.SubmitProofRequest{}, "proof_kind"), protowire.VarintType)
	sub = protowire.AppendVarint(sub, uint64(cuzkpb.ProofKind_POREP_SEAL_COMMIT))
	// StackedDrg64GiBV1: its C1 bound (116,894,444 bytes) admits every
	// size sent here, so the message is read and decoded.
	sub = protowire.AppendTag(sub, field(&cuzkpb.SubmitProofRequest{}, "registered_proof"), protowire.VarintType)
	sub = protowire.AppendVarint(sub, 4)
	sub = protowire.AppendTag(sub, field(&cuzkpb.SubmitProofRequest{}, "vanilla_proof"), protowire.BytesType)
	sub = protowire.AppendVarint(sub, uint64(n))
	msg := protowire.AppendTag(nil, field(&cuzkpb.ProveRequest{}, "submit"), protowire.BytesType)
	msg = protowire.AppendVarint(msg, uint64(len(sub)+n))
	msg = append(msg, sub...)
	frame := binary.BigEndian.AppendUint32([]byte{0}, uint32(len(msg)+n))
	return io.MultiReader(bytes.NewReader(append(frame, msg...)), io.LimitReader(zeros{}, int64(n)))
}

// procKB reads a field (VmRSS, VmHWM) of /proc/self/status in KiB.
func procKB(t *testing.T, field string) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skipf("no /proc/self/status: %v", err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, field+":"); ok {
			n, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatalf("no %s in /proc/self/status", field)
	return 0
}

// peakGrowth runs f and returns the growth of the process's peak RSS
// over its RSS before (the peak reset first), in MiB, and what f says.
func peakGrowth(t *testing.T, f func() string) (int64, string) {
	t.Helper()
	runtime.GC()
	debug.FreeOSMemory()
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		t.Skipf("cannot reset the peak RSS: %v", err)
	}
	before := procKB(t, "VmRSS")
	out := f()
	return (procKB(t, "VmHWM") - before) >> 10, out
}

// h2c is an HTTP/2 client of plaintext gRPC, as Curio's is.
func h2c() *http2.Transport { return gatewaytest.H2C() }

// call sends one gRPC call of method with body (a framed message) and
// returns its grpc-status code and message (gatewaytest.Call).
func call(_ *testing.T, ctx context.Context, tr *http2.Transport, addr, method string, body io.Reader) string {
	return gatewaytest.Call(ctx, tr, addr, method, body)
}

// sendProves sends n concurrent Prove calls of size bytes each to addr,
// over one HTTP/2 connection as Curio's client does, and counts their
// grpc-status codes.
func sendProves(t *testing.T, addr string, n, size int) string {
	t.Helper()
	tr := h2c()
	defer tr.CloseIdleConnections()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var mu sync.Mutex
	codes := map[string]int{}
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			code, _, _ := strings.Cut(call(t, ctx, tr, addr, cuzkpb.ProvingEngine_Prove_FullMethodName, proveBody(size)), " ")
			mu.Lock()
			codes[code]++
			mu.Unlock()
		}()
	}
	wg.Wait()
	return fmt.Sprint(codes)
}

// Request memory is a budget: 8 concurrent requests over the message
// limit are refused by their length prefix, unread, and 8 under it are
// read as the default budget allows, one at a time; the process's peak
// RSS shows it (before: +4,654 MiB and +2,655 MiB).
func TestRequestMemoryBudget(t *testing.T) {
	if testing.Short() {
		t.Skip("sends 8 x 200 MiB and 8 x 110 MiB")
	}
	l, err := Listen("127.0.0.1:0", ListenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- Serve(ctx, l, New(Config{AdmissionWait: 4 * time.Minute, Schemes: registry.Schemes(registry.Options{})}), nil)
	}()
	defer func() { stop(); <-done }()

	growth, codes := peakGrowth(t, func() string { return sendProves(t, l.Addr().String(), 8, 200<<20) })
	t.Logf("8 concurrent 200 MiB Proves: peak RSS +%d MiB; grpc-status %s", growth, codes)
	if codes != "map[8:8]" { // ResourceExhausted
		t.Errorf("8 x 200 MiB: grpc-status %s, want 8 ResourceExhausted (8)", codes)
	}
	if growth > 128 {
		t.Errorf("8 x 200 MiB refused by their length: peak RSS +%d MiB", growth)
	}

	size := MaxMessageBytes - 2<<20
	growth, codes = peakGrowth(t, func() string { return sendProves(t, l.Addr().String(), 8, size) })
	t.Logf("8 concurrent %d MiB Proves, budget %d MiB (default): peak RSS +%d MiB; grpc-status %s", size>>20, DefaultRequestBudget>>20, growth, codes)
	if codes != "map[0:8]" { // answered: a FAILED result (not a C1)
		t.Errorf("8 x %d MiB: grpc-status %s, want 8 answered", size>>20, codes)
	}
	// Before: +2,655 MiB (8 read at once, each costing 3 times its size,
	// and the heap doubling before a collection).
	if limit := int64(5 * DefaultRequestBudget >> 21); growth > limit {
		t.Errorf("8 x %d MiB under the %d MiB budget: peak RSS +%d MiB, over %d", size>>20, DefaultRequestBudget>>20, growth, limit)
	}
}

// A call that finds its class's budget taken (here by a client that
// announced a large message and stalled) waits the admission wait, then
// is refused with ResourceExhausted naming the budget; a WinningPoSt is
// admitted from its reserve meanwhile; the stalled client is cut off
// after the read timeout, and its share comes back. The read timeout
// (10 s) is what the calls in between must fit in, on a loaded machine
// too.
func TestRequestBudgetRefuses(t *testing.T) {
	l, err := Listen("127.0.0.1:0", ListenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	srv := New(Config{Schemes: registry.Schemes(registry.Options{}), RequestBudget: 1 << 20, AdmissionWait: 200 * time.Millisecond, ReadTimeout: 10 * time.Second})
	go func() { done <- Serve(ctx, l, srv, nil) }()
	defer func() { stop(); <-done }()
	tr := h2c()
	defer tr.CloseIdleConnections()
	send := func(method string, body io.Reader) string { return call(t, ctx, tr, l.Addr().String(), method, body) }
	stalled, w := io.Pipe()
	defer w.Close()
	first := make(chan string, 1)
	// A 1 MiB PoRep announced, 2 KiB of it sent.
	go func() {
		first <- send(cuzkpb.ProvingEngine_Prove_FullMethodName, io.MultiReader(io.LimitReader(proveBody(1<<20), 2<<10), stalled))
	}()
	for srv.budget.heldBy(classGeneral) == 0 { // until the stalled call holds its class
		time.Sleep(10 * time.Millisecond)
	}
	framed := func(msg []byte) io.Reader {
		return bytes.NewReader(append(binary.BigEndian.AppendUint32([]byte{0}, uint32(len(msg))), msg...))
	}
	if got := send(cuzkpb.ProvingEngine_AwaitProof_FullMethodName, framed(make([]byte, 30<<10))); !strings.HasPrefix(got, "8 ") || !strings.Contains(got, "request memory") {
		t.Errorf("a call while its class's budget is taken: %q, want ResourceExhausted (8) naming the request memory", got)
	}
	// A 2KiB WinningPoSt (registered proof 0) of two entries: read from
	// its reserve, then refused for its count.
	winning := protowire.AppendVarint(protowire.AppendTag(nil, 2, protowire.VarintType), uint64(cuzkpb.ProofKind_WINNING_POST))
	for range 2 {
		winning = protowire.AppendBytes(protowire.AppendTag(winning, 11, protowire.BytesType), make([]byte, 100))
	}
	if got := send(cuzkpb.ProvingEngine_SubmitProof_FullMethodName, framed(winning)); !strings.Contains(got, "2 vanilla_proofs, at most 1") {
		t.Errorf("a WinningPoSt while PoRep's class is taken: %q, want it read (and refused for its 2 entries)", got)
	}
	if got := <-first; !strings.HasPrefix(got, "4 ") || !strings.Contains(got, "not received within 10s") {
		t.Errorf("the stalled call: %q, want DeadlineExceeded (4) after the read timeout", got)
	}
	if got := send(cuzkpb.ProvingEngine_AwaitProof_FullMethodName, framed(nil)); strings.HasPrefix(got, "8 ") {
		t.Errorf("a call after the stalled one was cut off: %q", got)
	}
}

// Streams that open and send nothing hold no request memory: with 8 of
// them open, a Prove is read and answered at once (before: the first held
// 336 of the 384 MiB from its open until the 2-minute read timeout, and
// every other call was refused); each silent one is dropped at the
// first-byte deadline. A peer's streams waiting for their messages are
// bounded. The deadline (10 s) must outlast the test's opening of all 10,
// on a loaded machine too.
func TestIdleStreamsHoldNoMemory(t *testing.T) {
	l, err := Listen("127.0.0.1:0", ListenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	srv := New(Config{Schemes: registry.Schemes(registry.Options{}), AdmissionWait: time.Second, FirstByteTimeout: 10 * time.Second, PeerStreams: 10})
	go func() { done <- Serve(ctx, l, srv, nil) }()
	defer func() { stop(); <-done }()
	tr := h2c()
	defer tr.CloseIdleConnections()
	send := func(body io.Reader) string {
		return call(t, ctx, tr, l.Addr().String(), cuzkpb.ProvingEngine_Prove_FullMethodName, body)
	}
	idle := make(chan string, 10)
	var pipes []*io.PipeWriter
	defer func() {
		for _, w := range pipes {
			w.Close()
		}
	}()
	for range 8 {
		r, w := io.Pipe()
		pipes = append(pipes, w)
		go func() { idle <- send(r) }()
	}
	for srv.budget.peers.count("127.0.0.1") < 8 { // every idle stream is in
		time.Sleep(10 * time.Millisecond)
	}
	// A Prove of a malformed request: read, answered with a FAILED result.
	if got := send(proveBody(10)); !strings.HasPrefix(got, "0 ") {
		t.Errorf("a Prove beside 8 idle streams: %q, want it read and answered (0)", got)
	}
	// The bound: 8 idle and 2 more waiting make 10; the 11th is refused.
	for range 2 {
		r, w := io.Pipe()
		pipes = append(pipes, w)
		go func() { idle <- send(r) }()
	}
	for srv.budget.peers.count("127.0.0.1") < 10 {
		time.Sleep(10 * time.Millisecond)
	}
	if got := send(proveBody(10)); !strings.HasPrefix(got, "8 ") || !strings.Contains(got, "at most 10") {
		t.Errorf("an 11th call of one peer: %q, want ResourceExhausted (8) naming the bound", got)
	}
	for range 10 {
		if got := <-idle; !strings.HasPrefix(got, "4 ") || !strings.Contains(got, "not begun within 10s") {
			t.Errorf("an idle stream: %q, want DeadlineExceeded (4) at the first-byte deadline", got)
		}
	}
	if n := srv.budget.peers.count("127.0.0.1"); n != 0 {
		t.Errorf("%d streams still counted after every call ended", n)
	}
}

// peekOf reads a request's kind from its first bytes, Prove's and
// SubmitProof's alike; anything else is admitted as PoRep.
func TestKindOfFirstBytes(t *testing.T) {
	sub := protowire.AppendString(protowire.AppendTag(nil, 1, protowire.BytesType), strings.Repeat("r", 200))
	sub = protowire.AppendVarint(protowire.AppendTag(sub, 2, protowire.VarintType), uint64(cuzkpb.ProofKind_WINNING_POST))
	sub = protowire.AppendBytes(protowire.AppendTag(sub, 11, protowire.BytesType), make([]byte, 4000))
	prove := protowire.AppendBytes(protowire.AppendTag(nil, 1, protowire.BytesType), sub)
	for _, c := range []struct {
		method string
		b      []byte
		want   cuzkpb.ProofKind
	}{
		{"SubmitProof", sub[:peekBytes], cuzkpb.ProofKind_WINNING_POST},
		{"Prove", prove[:peekBytes], cuzkpb.ProofKind_WINNING_POST},
		{"Prove", prove[:100], cuzkpb.ProofKind_PROOF_KIND_UNSPECIFIED}, // the kind not yet reached
		{"AwaitProof", sub[:peekBytes], cuzkpb.ProofKind_PROOF_KIND_UNSPECIFIED},
		{"Prove", []byte{0xff, 0xff}, cuzkpb.ProofKind_PROOF_KIND_UNSPECIFIED},
	} {
		if got := peekOf(c.method, c.b).kind; got != c.want {
			t.Errorf("peekOf(%s, %d bytes).kind = %v, want %v", c.method, len(c.b), got, c.want)
		}
	}
	// The class follows the kind's declared policy.
	s := &Server{cfg: Config{Schemes: registry.Schemes(registry.Options{})}}
	for k, want := range map[cuzkpb.ProofKind]class{cuzkpb.ProofKind_PROOF_KIND_UNSPECIFIED: classGeneral,
		cuzkpb.ProofKind_POREP_SEAL_COMMIT: classGeneral, cuzkpb.ProofKind_SNAP_DEALS_UPDATE: classGeneral,
		cuzkpb.ProofKind_WINDOW_POST_PARTITION: classDue, cuzkpb.ProofKind_WINNING_POST: classUrgent} {
		if got := s.classOf(k); got != want {
			t.Errorf("classOf(%v) = %v, want %v", k, got, want)
		}
	}
}

// A request is bounded by its kind and registered proof before protobuf
// decodes it: a SnapDeals request of 20 million empty vanilla_proofs (a
// 40 MB message; decoding it cost +1.8 GB), a WindowPoSt partition of more
// sectors than its proof has, a PoSt entry over a sector's bound and a
// 2KiB PoRep envelope over a 2KiB C1's are refused (SubmitProof: as
// invalid arguments; Prove: as FAILED results) naming the count or size
// and the bound, undecoded.
func TestMessageBoundedByProof(t *testing.T) {
	l, err := Listen("127.0.0.1:0", ListenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, l, New(Config{Schemes: registry.Schemes(registry.Options{})}), nil) }()
	defer func() { stop(); <-done }()
	tr := h2c()
	defer tr.CloseIdleConnections()
	frame := func(msg []byte) io.Reader {
		return bytes.NewReader(append(binary.BigEndian.AppendUint32([]byte{0}, uint32(len(msg))), msg...))
	}
	head := func(kind cuzkpb.ProofKind, rp uint64) []byte {
		b := protowire.AppendVarint(protowire.AppendTag(nil, 2, protowire.VarintType), uint64(kind))
		return protowire.AppendVarint(protowire.AppendTag(b, 4, protowire.VarintType), rp)
	}
	entries := func(b []byte, n, size int) []byte {
		e := protowire.AppendBytes(protowire.AppendTag(nil, 11, protowire.BytesType), make([]byte, size))
		for range n {
			b = append(b, e...)
		}
		return b
	}
	snap := entries(head(cuzkpb.ProofKind_SNAP_DEALS_UPDATE, 3), 20_000_000, 0)
	for _, c := range []struct {
		name string
		sub  []byte
		want string
	}{
		{"20M empty update entries", snap, "vanilla_proofs: more than 4096 entries"},
		{"3 sectors of a 2KiB window partition", entries(head(cuzkpb.ProofKind_WINDOW_POST_PARTITION, 10), 3, 10), "3 vanilla_proofs, at most 2"},
		{"a 1 MiB winning entry", entries(head(cuzkpb.ProofKind_WINNING_POST, 0), 1, 1<<20), "the largest legitimate SubmitProof request of WINNING_POST and registered_proof 0 is"},
		{"a 40 KB winning entry", entries(head(cuzkpb.ProofKind_WINNING_POST, 0), 1, 40_000), "entry of 40000 bytes, at most 36816"},
		{"a 2 MiB 2KiB C1", protowire.AppendBytes(protowire.AppendTag(head(cuzkpb.ProofKind_POREP_SEAL_COMMIT, 0), 10, protowire.BytesType), make([]byte, 2<<20)), "the largest legitimate SubmitProof request of POREP_SEAL_COMMIT"},
		{"an unknown PoSt proof", head(cuzkpb.ProofKind_WINNING_POST, 99), "registered PoSt proof 99"},
	} {
		var res string
		growth, _ := peakGrowth(t, func() string {
			res = call(t, ctx, tr, l.Addr().String(), cuzkpb.ProvingEngine_SubmitProof_FullMethodName, frame(c.sub))
			return res
		})
		t.Logf("%s (%d bytes): peak RSS +%d MiB: %s", c.name, len(c.sub), growth, res)
		if !strings.HasPrefix(res, "3 ") || !strings.Contains(res, c.want) || !strings.Contains(res, "not decoded") && !strings.Contains(res, "not read") {
			t.Errorf("%s: %q, want InvalidArgument naming %q", c.name, res, c.want)
		}
		if growth > 400 {
			t.Errorf("%s: peak RSS +%d MiB: the message was decoded (before the bound: +1.8 GB for 20M entries)", c.name, growth)
		}
	}
}
