package gateway

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"time"

	"golang.org/x/sync/semaphore"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/c2flow/c2flow/gateway/cuzkpb"
)

// Request memory is a budget. grpc-go reads a message's 5-byte length
// prefix, refuses it over MaxMessageBytes, and then reads the whole
// payload (and the codec copies it twice more) before any handler runs: a
// limit per message bounds each request but not how many are read at
// once. So every method is served as a stream whose handler admits the
// call against the budget before it reads the message, holding what
// reading the largest message costs (the length is unknown until the
// read; readCost) while it reads, then the message's size until its input
// is stored; past the budget a
// call waits Config.AdmissionWait at most, then is refused with
// ResourceExhausted.

// DefaultRequestBudget is the request memory a gateway holds at once
// unless told otherwise: what reading one of the largest messages costs
// (336 MiB), and room beside it for the requests being stored.
const DefaultRequestBudget = 384 << 20

// Defaults of Config.AdmissionWait and Config.ReadTimeout.
const (
	defaultAdmissionWait = 30 * time.Second
	// A 64GiB C1 envelope (~117 MB) takes about 94 s at 10 Mbit/s; a
	// client slower than that, or one that never sends its message, would
	// hold its share of the budget.
	defaultReadTimeout = 2 * time.Minute
)

// budget admits calls against the request memory.
type budget struct {
	sem   *semaphore.Weighted
	limit int64
	wait  time.Duration
	read  time.Duration
}

func newBudget(limit int64, wait, read time.Duration) *budget {
	if limit <= 0 {
		limit = DefaultRequestBudget
	}
	if wait <= 0 {
		wait = defaultAdmissionWait
	}
	if read <= 0 {
		read = defaultReadTimeout
	}
	return &budget{sem: semaphore.NewWeighted(limit), limit: limit, wait: wait, read: read}
}

// admission is one call's share of the budget.
type admission struct {
	b    *budget
	mu   sync.Mutex
	held int64
}

// keep lowers the share to n bytes.
func (a *admission) keep(n int64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if n < a.held {
		a.b.sem.Release(a.held - n)
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
// transport's frames, grpc's contiguous copy and protobuf's copy of its
// bytes fields.
func readCost(n int64) int64 { return 3 * n }

// admit waits for room to read one message of the largest size, at most
// the admission wait, and refuses the call past it.
func (b *budget) admit(ctx context.Context, method string) (*admission, error) {
	need := min(readCost(MaxMessageBytes), b.limit)
	wctx, cancel := context.WithTimeout(ctx, b.wait)
	defer cancel()
	if err := b.sem.Acquire(wctx, need); err != nil {
		if ctx.Err() != nil {
			return nil, status.FromContextError(ctx.Err()).Err()
		}
		return nil, status.Errorf(codes.ResourceExhausted, "%s: the gateway's request memory (%d MiB, --request-memory-mib) is taken by the requests being read and stored; not admitted within %v: retry later", method, b.limit>>20, b.wait)
	}
	return &admission{b: b, held: need}, nil
}

// recv reads one message of ss into m within the read timeout: a client
// that sends it slower, or never, is cut off and its share returned.
func (b *budget) recv(ss grpc.ServerStream, m any) error {
	done := make(chan error, 1)
	go func() { done <- ss.RecvMsg(m) }()
	t := time.NewTimer(b.read)
	defer t.Stop()
	select {
	case err := <-done:
		return err
	case <-t.C:
		return status.Errorf(codes.DeadlineExceeded, "request message not received within %v", b.read)
	}
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
		a, err := s.budget.admit(ss.Context(), method)
		if err != nil {
			s.log.Warn("cuzk request refused: request memory", "method", method, "error", err)
			return err
		}
		defer a.done()
		ctx := context.WithValue(ss.Context(), admissionKey{}, a)
		dec := func(m any) error {
			n, err := s.recvBounded(ss, m)
			if err != nil {
				return err
			}
			a.keep(n)
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
