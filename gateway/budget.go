package gateway

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"runtime"
	"sync"
	"time"

	"golang.org/x/sync/semaphore"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/mem"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/c2flow/c2flow/gateway/cuzkpb"
)

// Request memory is a budget, charged by what arrives. grpc-go's own
// RecvMsg reads a whole message before it returns, so a call would have
// to be admitted for the largest message before its first byte: one
// client that opened a stream and sent nothing held the budget (issue 45).
// So the gateway reads each message itself from grpc's stream (its
// exported ReadMessageHeader and Read, messageReader): the 5-byte length
// prefix within Config.FirstByteTimeout (a stream that sends nothing is
// dropped, having held no memory), then up to 1 KiB to learn its kind,
// then it reserves what reading that length costs (readCost) in its
// kind's class, then reads the rest within Config.ReadTimeout; it holds
// the message's size until its input is stored. PoSt classes have
// reserves PoRep cannot take (class), so a WinningPoSt is admitted while
// PoReps wait; a peer's streams waiting for or reading their messages are
// bounded (peerStreams). Past the budget a call waits Config.AdmissionWait
// at most, then is refused with ResourceExhausted.

// DefaultRequestBudget is the request memory a gateway holds at once
// unless told otherwise: what reading one of the largest messages costs
// (336 MiB) in the PoRep class, beside the PoSt reserves (class).
const DefaultRequestBudget = 400 << 20

// Defaults of Config.AdmissionWait, Config.ReadTimeout,
// Config.FirstByteTimeout and Config.PeerStreams.
const (
	defaultAdmissionWait = 30 * time.Second
	// A 64GiB C1 envelope (~117 MB) takes about 94 s at 10 Mbit/s; a
	// client slower than that would hold its share of the budget.
	defaultReadTimeout = 2 * time.Minute
	// A client sends its message's first bytes with the stream's
	// headers; a stream silent for this long holds no memory, but a
	// goroutine and a place among its peer's streams.
	defaultFirstByte = 10 * time.Second
	// Curio keeps one stream per proof in flight (MaxPending) on one
	// connection, each past its message within a second.
	defaultPeerStreams = 64
)

// peekBytes is what is read of a message before it is admitted: enough for
// a request's kind (field 2 after a request_id of at most
// MaxRequestIDBytes).
const peekBytes = 1 << 10

// A class of requests draws on its own pool and every larger one: the
// pools nest (general within due within all), so the kinds no chain
// deadline bounds (PoRep, SnapDeals) and every other call hold at most the
// budget less both reserves, a chain-bound kind (WindowPoSt) at most the
// budget less the urgent kind's reserve, and an urgent kind (WinningPoSt)
// all of it. A flood of large PoReps therefore leaves a WinningPoSt its
// reserve. A kind's class follows its scheme's policy (classOf).
type class int

const (
	classGeneral class = iota // no due time: PoRep, SnapDeals, unknown kinds, other methods
	classDue                  // chain-bound (scheme.Policy.Due): WindowPoSt
	classUrgent               // urgent (scheme.Policy.Urgent): WinningPoSt
)

// The budget's shares kept from the classes below each, as divisors of the
// budget: the urgent class's (a 32GiB winning request is under 1 MB) and
// the due class's (a 2KiB to 8MiB window partition, or a part of a 32GiB
// one's 60 MB).
const (
	urgentReserve = 32 // 1/32
	dueReserve    = 8  // 1/8
)

// budget admits calls against the request memory.
type budget struct {
	pools [3]*semaphore.Weighted // by class: the class's own and those above
	caps  [3]int64
	limit int64
	wait  time.Duration
	read  time.Duration
	first time.Duration
	peers *peerStreams
}

// budgetConfig is what newBudget reads of Config (zero: the defaults).
type budgetConfig struct {
	limit             int64
	wait, read, first time.Duration
	peerStreams       int
}

func newBudget(c budgetConfig) *budget {
	if c.limit <= 0 {
		c.limit = DefaultRequestBudget
	}
	if c.wait <= 0 {
		c.wait = defaultAdmissionWait
	}
	if c.read <= 0 {
		c.read = defaultReadTimeout
	}
	if c.first <= 0 {
		c.first = defaultFirstByte
	}
	if c.peerStreams <= 0 {
		c.peerStreams = defaultPeerStreams
	}
	b := &budget{limit: c.limit, wait: c.wait, read: c.read, first: c.first, peers: newPeerStreams(c.peerStreams)}
	b.caps[classUrgent] = c.limit
	b.caps[classDue] = c.limit - c.limit/urgentReserve
	b.caps[classGeneral] = b.caps[classDue] - c.limit/dueReserve
	for i, n := range b.caps {
		b.pools[i] = semaphore.NewWeighted(n)
	}
	return b
}

// admission is one call's share of the budget, held in the pools of its
// class and above.
type admission struct {
	b     *budget
	class class
	mu    sync.Mutex
	held  int64
}

// keep lowers the share to n bytes.
func (a *admission) keep(n int64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if n < a.held {
		for _, p := range a.b.pools[a.class:] {
			p.Release(a.held - n)
		}
		a.held = n
	}
}

// collectAt is the size of a message whose copies are collected as soon
// as its share is given back: they would otherwise wait for the heap to
// double (GOGC), and the process's RSS would be twice the budget.
const collectAt = 32 << 20

// done gives the share back.
func (a *admission) done() {
	a.mu.Lock()
	big := a.held >= collectAt
	a.mu.Unlock()
	a.keep(0)
	if big {
		runtime.GC()
	}
}

type admissionKey struct{}

// inputStored gives back the share of the call of ctx: its message's
// bytes are no longer needed (Prove's input is stored; its await holds
// none of it).
func inputStored(ctx context.Context) {
	if a, ok := ctx.Value(admissionKey{}).(*admission); ok {
		a.done()
	}
}

// readCost is what reading one message of n bytes holds at its peak: the
// transport's frames, the contiguous copy and protobuf's copy of its
// bytes fields.
func readCost(n int64) int64 { return 3 * n }

// admit waits for room to read a message of n bytes in class c, at most
// the admission wait, and refuses the call past it.
func (b *budget) admit(ctx context.Context, method string, n int64, c class) (*admission, error) {
	need := min(readCost(n), b.caps[c])
	wctx, cancel := context.WithTimeout(ctx, b.wait)
	defer cancel()
	for i := c; i < class(len(b.pools)); i++ {
		if err := b.pools[i].Acquire(wctx, need); err != nil {
			for _, p := range b.pools[c:i] {
				p.Release(need)
			}
			if ctx.Err() != nil {
				return nil, status.FromContextError(ctx.Err()).Err()
			}
			return nil, status.Errorf(codes.ResourceExhausted, "%s: the gateway's request memory (%d MiB, --request-memory-mib) is taken by the requests being read and stored; a message of %d bytes not admitted within %v: retry later", method, b.limit>>20, n, b.wait)
		}
	}
	return &admission{b: b, class: c, held: need}, nil
}

// messageReader is what grpc-go's server stream (the ServerTransportStream
// of a handler's context) offers to read a message in parts: its length
// prefix, then its bytes.
type messageReader interface {
	ReadMessageHeader(header []byte) error
	Read(n int) (mem.BufferSlice, error)
}

// within runs f, giving up after d with DeadlineExceeded, saying what did
// not happen within limit: f goes on until the stream ends, which the
// handler's return brings about.
func within(d time.Duration, what string, limit time.Duration, f func() error) error {
	done := make(chan error, 1)
	go func() { done <- f() }()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case err := <-done:
		return err
	case <-t.C:
		return status.Errorf(codes.DeadlineExceeded, "request message %s within %v", what, limit)
	}
}

// readMessage reads the call's one message, admitted by its length and
// kind (the comment at the top of this file). The admission it returns
// holds the read's cost; the caller lowers it to what it keeps.
func (s *Server) readMessage(ss grpc.ServerStream, method string) ([]byte, *admission, error) {
	b := s.budget
	ctx := ss.Context()
	leave, err := b.peers.enter(ctx, method)
	if err != nil {
		return nil, nil, err
	}
	defer leave()
	r, ok := grpc.ServerTransportStreamFromContext(ctx).(messageReader)
	if !ok {
		return s.readWhole(ss, method)
	}
	var hdr [5]byte
	if err := within(b.first, "not begun", b.first, func() error { return r.ReadMessageHeader(hdr[:]) }); err != nil {
		return nil, nil, recvErr(err)
	}
	if hdr[0] != 0 {
		return nil, nil, status.Errorf(codes.Unimplemented, "%s: a compressed request message; c2flow's gateway reads them uncompressed, as Curio sends them", method)
	}
	n := int64(binary.BigEndian.Uint32(hdr[1:]))
	if n > MaxMessageBytes {
		return nil, nil, status.Errorf(codes.ResourceExhausted, "%s: a request message of %d bytes, over the gateway's limit of %d (a 64GiB C1's request)", method, n, MaxMessageBytes)
	}
	deadline := time.Now().Add(b.read)
	var peek mem.BufferSlice
	if err := within(b.read, "not received", b.read, func() (err error) {
		peek, err = r.Read(int(min(n, peekBytes)))
		return err
	}); err != nil {
		return nil, nil, recvErr(err)
	}
	head := peek.Materialize()
	peek.Free()
	a, err := b.admit(ctx, method, n, s.classOf(kindOf(method, head)))
	if err != nil {
		return nil, nil, err
	}
	raw := make([]byte, n)
	copy(raw, head)
	if rest := n - int64(len(head)); rest > 0 {
		if err := within(time.Until(deadline), "not received", b.read, func() error {
			body, err := r.Read(int(rest))
			if err == nil {
				body.CopyTo(raw[len(head):])
				body.Free()
			}
			return err
		}); err != nil {
			a.done()
			return nil, nil, recvErr(err)
		}
	}
	return raw, a, nil
}

// readWhole is readMessage where grpc's stream offers no messageReader (a
// grpc-go that changed it): admitted at the largest message's cost before
// its first byte, as before issue 45; TestIdleStreamsHoldNoMemory fails
// on such a grpc-go.
func (s *Server) readWhole(ss grpc.ServerStream, method string) ([]byte, *admission, error) {
	a, err := s.budget.admit(ss.Context(), method, MaxMessageBytes, classGeneral)
	if err != nil {
		return nil, nil, err
	}
	var raw rawMessage
	if err := within(s.budget.read, "not received", s.budget.read, func() error { return ss.RecvMsg(&raw) }); err != nil {
		a.done()
		return nil, nil, recvErr(err)
	}
	return raw, a, nil
}

// recvErr is a read's error as the call's status.
func recvErr(err error) error {
	if _, ok := status.FromError(err); ok {
		return err
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return status.Errorf(codes.InvalidArgument, "the request message ended early: %v", err)
	}
	return status.Errorf(codes.Unavailable, "read the request message: %v", err)
}

// kindOf is the proof kind a message's first bytes name, where they name
// one (SubmitProof's request, or Prove's wrapping it); else
// PROOF_KIND_UNSPECIFIED, which is admitted as PoRep.
func kindOf(method string, b []byte) cuzkpb.ProofKind {
	switch method {
	case "Prove":
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 || num != 1 || typ != protowire.BytesType {
			return cuzkpb.ProofKind_PROOF_KIND_UNSPECIFIED
		}
		b = b[n:]
		l, n := protowire.ConsumeVarint(b)
		if n < 0 {
			return cuzkpb.ProofKind_PROOF_KIND_UNSPECIFIED
		}
		b = b[n:]
		if uint64(len(b)) > l {
			b = b[:l]
		}
	case "SubmitProof":
	default:
		return cuzkpb.ProofKind_PROOF_KIND_UNSPECIFIED
	}
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			break
		}
		b = b[n:]
		if num == 2 && typ == protowire.VarintType {
			v, n := protowire.ConsumeVarint(b)
			if n < 0 {
				break
			}
			return cuzkpb.ProofKind(int32(v))
		}
		n = protowire.ConsumeFieldValue(num, typ, b)
		if n < 0 {
			break
		}
		b = b[n:]
	}
	return cuzkpb.ProofKind_PROOF_KIND_UNSPECIFIED
}

// peerStreams bounds the streams of one peer (its IP address; a Unix
// socket's clients are one peer) that wait for or read their messages.
type peerStreams struct {
	max int
	mu  sync.Mutex
	n   map[string]int
}

func newPeerStreams(max int) *peerStreams { return &peerStreams{max: max, n: map[string]int{}} }

// count is how many streams of peer key are counted.
func (p *peerStreams) count(key string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.n[key]
}

// enter counts a stream of ctx's peer, refusing it past the bound; leave
// uncounts it.
func (p *peerStreams) enter(ctx context.Context, method string) (leave func(), err error) {
	key := "unknown"
	if pr, ok := peer.FromContext(ctx); ok && pr.Addr != nil {
		key = pr.Addr.String()
		if h, _, err := net.SplitHostPort(key); err == nil {
			key = h
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.n[key] >= p.max {
		return nil, status.Errorf(codes.ResourceExhausted, "%s: %s already has %d calls sending their requests (at most %d at once): retry later", method, key, p.n[key], p.max)
	}
	p.n[key]++
	return func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		if p.n[key]--; p.n[key] == 0 {
			delete(p.n, key)
		}
	}, nil
}

// serviceDesc is cuzk's service with each method served as a stream
// admitted against the budget: the wire is the same (a unary call is a
// stream of one message each way), and each method's generated handler
// still decodes and dispatches, reading through the admission.
func (s *Server) serviceDesc() *grpc.ServiceDesc {
	d := cuzkpb.ProvingEngine_ServiceDesc
	d.Methods = nil
	d.Streams = nil
	for _, md := range cuzkpb.ProvingEngine_ServiceDesc.Methods {
		d.Streams = append(d.Streams, grpc.StreamDesc{StreamName: md.MethodName, Handler: s.admitted(md)})
	}
	return &d
}

// admitted serves a unary method as an admitted stream.
func (s *Server) admitted(md grpc.MethodDesc) grpc.StreamHandler {
	method := md.MethodName
	return func(srv any, ss grpc.ServerStream) error {
		raw, a, err := s.readMessage(ss, method)
		if err != nil {
			s.log.Warn("cuzk request refused before it was read", "method", method, "error", err)
			return err
		}
		defer a.done()
		ctx := context.WithValue(ss.Context(), admissionKey{}, a)
		dec := func(m any) error {
			if err := s.decodeBounded(raw, m); err != nil {
				return err
			}
			a.keep(int64(len(raw)))
			return nil
		}
		resp, err := md.Handler(srv, ctx, dec, nil)
		var be *boundError
		if errors.As(err, &be) && method == "Prove" {
			// As every bad request to Prove: a FAILED result naming it.
			resp, err = &cuzkpb.ProveResponse{Result: failed("", be)}, nil
		}
		if err != nil {
			return err
		}
		if err := ss.SendMsg(resp); err != nil {
			return fmt.Errorf("%s: send the response: %w", method, err)
		}
		return nil
	}
}
