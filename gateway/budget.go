package gateway

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"runtime"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/mem"
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
// dropped, having held no memory), then up to 1 KiB to learn its kind and
// registered proof (admissionOf: a message over its kind's largest request
// is refused unread), then it reserves what reading that length costs (readCost) in its
// kind's class, then reads the rest within Config.ReadTimeout; it holds
// the message's size until its input is stored. PoSt classes have
// reserves PoRep cannot take (class), so a WinningPoSt is admitted while
// PoReps wait; a client's streams waiting for or reading their messages
// are bounded (budget.peers). Past the budget a call waits Config.AdmissionWait
// at most, then is refused with ResourceExhausted.

// DefaultRequestBudget is the request memory a gateway holds at once
// unless told otherwise: what reading one of the largest messages costs
// (224 MiB) in the PoRep class, beside the PoSt reserves (class).
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

// The budget's shares kept from the classes below each, in hundredths of
// the budget (at the default 400 MiB): the urgent class's 3 (12 MiB: 38 of
// the largest WinningPoSt requests, a 64GiB sector's 168 KB, read at
// readCost) and the due class's 29 (116 MiB: the largest 32GiB or 64GiB
// window partition's request, 58.7 MB, read at readCost, 112 MiB). The
// general class keeps 68 (272 MiB): the largest PoRep request (a 64GiB
// C1, 112 MiB) costs 224 MiB to read, and beside it a whole window
// partition is still admitted from the due class.
const (
	urgentReserve = 3
	dueReserve    = 29
)

// budget admits calls against the request memory. The pools nest: class
// c's admission counts in the pools of c and every class above it, and
// each pool has its cap (caps). Each class queues apart, first come first
// served within it, so a large PoRep waiting for room never holds back a
// WindowPoSt or WinningPoSt that fits.
type budget struct {
	mu      sync.Mutex
	caps    [3]int64 // pool i's cap: what classes up to i hold together
	held    [3]int64 // what class i's admissions hold
	queue   [3][]*waiter
	limit   int64
	wait    time.Duration
	read    time.Duration
	first   time.Duration
	peers   *clientCounts
	clients *clients
}

// waiter is a call queued for room in its class.
type waiter struct {
	need    int64
	ready   chan struct{}
	granted bool
}

// budgetConfig is what newBudget reads of Config (zero: the defaults).
type budgetConfig struct {
	limit                     int64
	wait, read, first         time.Duration
	peerStreams               int
	clientCalls, clientUrgent int
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
	b := &budget{limit: c.limit, wait: c.wait, read: c.read, first: c.first, peers: newClientCounts(c.peerStreams, "calls sending their requests", " at once"),
		clients: newClients(c.clientCalls, c.clientUrgent)}
	b.caps[classUrgent] = c.limit
	b.caps[classDue] = c.limit - c.limit*urgentReserve/100
	b.caps[classGeneral] = b.caps[classDue] - c.limit*dueReserve/100
	return b
}

// fits says whether need more in class c stays within every pool it
// counts in (b.mu held).
func (b *budget) fits(c class, need int64) bool {
	var sum int64
	for i := range class(len(b.caps)) {
		sum += b.held[i]
		if i >= c && sum+need > b.caps[i] {
			return false
		}
	}
	return true
}

// grant admits the head of each class's queue while it fits, the urgent
// class first (b.mu held).
func (b *budget) grant() {
	for c := classUrgent; c >= classGeneral; c-- {
		for len(b.queue[c]) > 0 && b.fits(c, b.queue[c][0].need) {
			w := b.queue[c][0]
			b.queue[c] = b.queue[c][1:]
			b.held[c] += w.need
			w.granted = true
			close(w.ready)
		}
	}
}

// release gives n bytes of class c back.
func (b *budget) release(c class, n int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.held[c] -= n
	b.grant()
}

// heldBy is what class c's admissions hold.
func (b *budget) heldBy(c class) int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.held[c]
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
		a.b.release(a.class, a.held-n)
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
// contiguous copy and protobuf's copy of its bytes fields. The transport's
// frames are copied out a chunk (readChunk) at a time, so they hold at
// most a chunk beyond it.
func readCost(n int64) int64 { return 2 * n }

// readChunk is how much of a message is taken from the transport at once.
const readChunk = 1 << 20

// admit waits for room to read a message of n bytes in class c, at most
// the admission wait, and refuses the call past it.
func (b *budget) admit(ctx context.Context, method string, n int64, c class) (*admission, error) {
	need := min(readCost(n), b.caps[c])
	b.mu.Lock()
	if len(b.queue[c]) == 0 && b.fits(c, need) {
		b.held[c] += need
		b.mu.Unlock()
		return &admission{b: b, class: c, held: need}, nil
	}
	w := &waiter{need: need, ready: make(chan struct{})}
	b.queue[c] = append(b.queue[c], w)
	b.mu.Unlock()
	t := time.NewTimer(b.wait)
	defer t.Stop()
	select {
	case <-w.ready:
		return &admission{b: b, class: c, held: need}, nil
	case <-ctx.Done():
	case <-t.C:
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if w.granted {
		return &admission{b: b, class: c, held: need}, nil
	}
	for i, q := range b.queue[c] {
		if q == w {
			b.queue[c] = append(b.queue[c][:i:i], b.queue[c][i+1:]...)
			break
		}
	}
	b.grant() // the next in the queue may fit where this one did not
	if ctx.Err() != nil {
		return nil, status.FromContextError(ctx.Err()).Err()
	}
	return nil, status.Errorf(codes.ResourceExhausted, "%s: the gateway's request memory (%d MiB, --request-memory-mib) is taken by the requests being read and stored; a message of %d bytes not admitted within %v: retry later", method, b.limit>>20, n, b.wait)
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
func (s *Server) readMessage(ss grpc.ServerStream, method string) ([]byte, *admission, peeked, error) {
	b := s.budget
	ctx := ss.Context()
	leave, err := b.peers.enter(ctx, method)
	if err != nil {
		return nil, nil, peeked{}, err
	}
	defer leave()
	r, ok := grpc.ServerTransportStreamFromContext(ctx).(messageReader)
	if !ok {
		raw, a, err := s.readWhole(ss, method)
		if err != nil {
			return nil, nil, peeked{}, err
		}
		return raw, a, peekOf(method, raw), nil
	}
	var hdr [5]byte
	if err := within(b.first, "not begun", b.first, func() error { return r.ReadMessageHeader(hdr[:]) }); err != nil {
		return nil, nil, peeked{}, recvErr(err)
	}
	if hdr[0] != 0 {
		return nil, nil, peeked{}, status.Errorf(codes.Unimplemented, "%s: a compressed request message; c2flow's gateway reads them uncompressed, as Curio sends them", method)
	}
	n := int64(binary.BigEndian.Uint32(hdr[1:]))
	if n > MaxMessageBytes {
		return nil, nil, peeked{}, status.Errorf(codes.ResourceExhausted, "%s: a request message of %d bytes, over the gateway's limit of %d (a 64GiB C1's request)", method, n, MaxMessageBytes)
	}
	deadline := time.Now().Add(b.read)
	var peek mem.BufferSlice
	if err := within(b.read, "not received", b.read, func() (err error) {
		peek, err = r.Read(int(min(n, peekBytes)))
		return err
	}); err != nil {
		return nil, nil, peeked{}, recvErr(err)
	}
	head := peek.Materialize()
	peek.Free()
	pk := peekOf(method, head)
	c, limit, err := s.admissionOf(method, pk)
	if err != nil {
		return nil, nil, pk, err
	}
	if c == classUrgent {
		if err := b.clients.urgentRequest(ctx, method, time.Now()); err != nil {
			return nil, nil, pk, err
		}
	}
	if n > limit {
		return nil, nil, pk, &boundError{fmt.Errorf("%s: a request message of %d bytes; the largest legitimate %s is %d: not read", method, n, pk.what(method), limit)}
	}
	a, err := b.admit(ctx, method, n, c)
	if err != nil {
		return nil, nil, pk, err
	}
	raw := make([]byte, n)
	copy(raw, head)
	if err := within(time.Until(deadline), "not received", b.read, func() error {
		for off := int64(len(head)); off < n; {
			body, err := r.Read(int(min(n-off, readChunk)))
			if err != nil {
				return err
			}
			off += int64(body.CopyTo(raw[off:]))
			body.Free()
		}
		return nil
	}); err != nil {
		a.done()
		return nil, nil, pk, recvErr(err)
	}
	// One message a call, as every cuzk method is unary: bytes after it
	// would be read by no one, unbounded.
	if err := within(b.first, "not ended", b.first, func() error {
		var next [5]byte
		if err := r.ReadMessageHeader(next[:]); err != io.EOF {
			if err == nil {
				return status.Errorf(codes.InvalidArgument, "%s: a second request message: a call sends one", method)
			}
			return err
		}
		return nil
	}); err != nil {
		a.done()
		return nil, nil, pk, recvErr(err)
	}
	return raw, a, pk, nil
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

// peeked is what a request's first bytes (peekBytes) say of it: its kind
// and registered proof (0 where absent, as protobuf encodes 0), by which it
// is admitted. checkBound holds the whole message to them.
type peeked struct {
	kind            cuzkpb.ProofKind
	registeredProof uint64
}

// what names a request by its peeked kind and proof.
func (p peeked) what(method string) string {
	switch method {
	case "Prove", "SubmitProof":
		return fmt.Sprintf("%s request of %s and registered_proof %d", method, p.kind, p.registeredProof)
	}
	return method + " request"
}

// peekOf reads a request's kind and registered proof from its first
// bytes, SubmitProof's request or Prove's wrapping it; other methods'
// messages have none.
func peekOf(method string, b []byte) peeked {
	var p peeked
	switch method {
	case "Prove":
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 || num != fieldSubmit || typ != protowire.BytesType {
			return p
		}
		b = b[n:]
		l, n := protowire.ConsumeVarint(b)
		if n < 0 {
			return p
		}
		b = b[n:]
		if uint64(len(b)) > l {
			b = b[:l]
		}
	case "SubmitProof":
	default:
		return p
	}
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			break
		}
		b = b[n:]
		if typ == protowire.VarintType && (num == fieldKind || num == fieldRegisteredProof) {
			v, n := protowire.ConsumeVarint(b)
			if n < 0 {
				break
			}
			b = b[n:]
			if num == fieldKind {
				p.kind = cuzkpb.ProofKind(int32(v))
			} else {
				p.registeredProof = v
			}
			continue
		}
		n = protowire.ConsumeFieldValue(num, typ, b)
		if n < 0 {
			break
		}
		b = b[n:]
	}
	return p
}

// otherRequestBytes bounds the messages of the methods that carry no
// proof input (AwaitProof, CancelProof, GetStatus, PreloadSRS, ...): a
// job id or a circuit id at most.
const otherRequestBytes = 64 << 10

// admissionOf is the class a request is read in and the largest message
// of its kind and registered proof (maxRequestBytes of its scheme.Bound):
// a message that claims an urgent kind is no larger than that kind's
// largest request, so a faked kind reserves no more than a real one. A
// kind cuzk does not have is refused unread; a kind no scheme here bounds
// (one only --forward serves) is read up to the message limit.
func (s *Server) admissionOf(method string, p peeked) (class, int64, error) {
	switch method {
	case "Prove", "SubmitProof":
	default:
		return classGeneral, otherRequestBytes, nil
	}
	if p.kind == cuzkpb.ProofKind_PROOF_KIND_UNSPECIFIED {
		return 0, 0, &boundError{fmt.Errorf("%s: no proof_kind in the message's first %d bytes: it comes first, as cuzk's clients send it: not read", method, peekBytes)}
	}
	bd, ok, err := s.boundOf(p.kind, p.registeredProof)
	if err != nil {
		return 0, 0, &boundError{fmt.Errorf("%s: %w", method, err)}
	}
	c := s.classOf(p.kind)
	if !ok {
		if c != classGeneral {
			return c, (s.budget.caps[c] - s.budget.caps[c-1]) / 2, nil
		}
		return c, MaxMessageBytes, nil
	}
	return c, min(maxRequestBytes(bd), MaxMessageBytes), nil
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
		leave, err := s.budget.clients.calls.enter(ss.Context(), method)
		if err != nil {
			s.log.Warn("cuzk call refused", "method", method, "error", err)
			return err
		}
		defer leave()
		raw, a, pk, err := s.readMessage(ss, method)
		if err != nil {
			s.log.Warn("cuzk request refused before it was read", "method", method, "error", err)
			var be *boundError
			if errors.As(err, &be) && method == "Prove" {
				// As every bad request to Prove: a FAILED result naming it.
				if err := ss.SendMsg(&cuzkpb.ProveResponse{Result: failed("", be)}); err != nil {
					return fmt.Errorf("%s: send the response: %w", method, err)
				}
				return nil
			}
			return err
		}
		defer a.done()
		ctx := context.WithValue(ss.Context(), admissionKey{}, a)
		dec := func(m any) error {
			if err := s.decodeBounded(raw, m, pk); err != nil {
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
