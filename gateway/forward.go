package gateway

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/c2flow/c2flow/gateway/cuzkpb"
)

// hopHeader lists, in a forwarded request's metadata, the gateways it
// passed: a gateway that finds itself there (--forward pointing back at
// it, directly or through others) refuses the request instead of passing
// it round for ever.
const hopHeader = "c2flow-gateway-hop"

// maxHops bounds a request's path through gateways.
const maxHops = 8

// newGatewayID names one gateway process in hopHeader.
func newGatewayID() string {
	b := make([]byte, 8)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// hopClient is the --forward client: each call carries the hops of the
// request it serves plus this gateway, and a loop is refused before it is
// sent.
type hopClient struct {
	up   cuzkpb.ProvingEngineClient
	self string
	addr string
}

// hop is the outgoing context of a call forwarded on behalf of the
// incoming request of ctx.
func (h hopClient) hop(ctx context.Context) (context.Context, error) {
	md, _ := metadata.FromIncomingContext(ctx)
	hops := md.Get(hopHeader)
	if slices.Contains(hops, h.self) {
		return nil, status.Errorf(codes.FailedPrecondition, "forward loop: this request already passed this gateway (%d hops): --forward %s leads back to it", len(hops), h.addr)
	}
	if len(hops) >= maxHops {
		return nil, status.Errorf(codes.FailedPrecondition, "forward loop: this request passed %d gateways already: a chain of --forward too long or circular", len(hops))
	}
	hops = append(slices.Clone(hops), h.self)
	// Passed on now: the upstream's flow control paces it, and a forwarded
	// call (a PoSt, for minutes) must not hold the budget meanwhile.
	inputStored(ctx)
	return metadata.NewOutgoingContext(ctx, metadata.Pairs(hopHeader, strings.Join(hops, ","))), nil
}

func (h hopClient) SubmitProof(ctx context.Context, in *cuzkpb.SubmitProofRequest, opts ...grpc.CallOption) (*cuzkpb.SubmitProofResponse, error) {
	ctx, err := h.hop(ctx)
	if err != nil {
		return nil, err
	}
	return h.up.SubmitProof(ctx, in, opts...)
}

func (h hopClient) AwaitProof(ctx context.Context, in *cuzkpb.AwaitProofRequest, opts ...grpc.CallOption) (*cuzkpb.AwaitProofResponse, error) {
	ctx, err := h.hop(ctx)
	if err != nil {
		return nil, err
	}
	return h.up.AwaitProof(ctx, in, opts...)
}

func (h hopClient) Prove(ctx context.Context, in *cuzkpb.ProveRequest, opts ...grpc.CallOption) (*cuzkpb.ProveResponse, error) {
	ctx, err := h.hop(ctx)
	if err != nil {
		return nil, err
	}
	return h.up.Prove(ctx, in, opts...)
}

func (h hopClient) CancelProof(ctx context.Context, in *cuzkpb.CancelProofRequest, opts ...grpc.CallOption) (*cuzkpb.CancelProofResponse, error) {
	ctx, err := h.hop(ctx)
	if err != nil {
		return nil, err
	}
	return h.up.CancelProof(ctx, in, opts...)
}

func (h hopClient) GetStatus(ctx context.Context, in *cuzkpb.GetStatusRequest, opts ...grpc.CallOption) (*cuzkpb.GetStatusResponse, error) {
	ctx, err := h.hop(ctx)
	if err != nil {
		return nil, err
	}
	return h.up.GetStatus(ctx, in, opts...)
}

func (h hopClient) GetMetrics(ctx context.Context, in *cuzkpb.GetMetricsRequest, opts ...grpc.CallOption) (*cuzkpb.GetMetricsResponse, error) {
	ctx, err := h.hop(ctx)
	if err != nil {
		return nil, err
	}
	return h.up.GetMetrics(ctx, in, opts...)
}

func (h hopClient) PreloadSRS(ctx context.Context, in *cuzkpb.PreloadSrsRequest, opts ...grpc.CallOption) (*cuzkpb.PreloadSrsResponse, error) {
	ctx, err := h.hop(ctx)
	if err != nil {
		return nil, err
	}
	return h.up.PreloadSRS(ctx, in, opts...)
}

func (h hopClient) EvictSRS(ctx context.Context, in *cuzkpb.EvictSrsRequest, opts ...grpc.CallOption) (*cuzkpb.EvictSrsResponse, error) {
	ctx, err := h.hop(ctx)
	if err != nil {
		return nil, err
	}
	return h.up.EvictSRS(ctx, in, opts...)
}

// CheckForward refuses a --forward address that is l's own: the gateway
// would pass the kinds it does not prove to itself. A host name is
// resolved; a listener on every address (0.0.0.0, ::) is reached through
// loopback and each of this host's addresses.
func CheckForward(ctx context.Context, l net.Listener, forward string) error {
	self := func() error {
		return fmt.Errorf("--forward %s is this gateway's own address (%s %s): it would forward requests to itself", forward, l.Addr().Network(), l.Addr())
	}
	target := strings.TrimPrefix(forward, "dns:///")
	if path, ok := unixPath(target); ok {
		ua, isUnix := l.Addr().(*net.UnixAddr)
		if !isUnix {
			return nil
		}
		if filepath.Clean(path) == filepath.Clean(ua.Name) {
			return self()
		}
		a, errA := os.Stat(path)
		b, errB := os.Stat(ua.Name)
		if errA == nil && errB == nil && os.SameFile(a, b) {
			return self()
		}
		return nil
	}
	ta, ok := l.Addr().(*net.TCPAddr)
	if !ok {
		return nil
	}
	host, port, err := net.SplitHostPort(target)
	if err != nil {
		return fmt.Errorf("--forward %q: want HOST:PORT or unix:///PATH: %w", forward, err)
	}
	if port != fmt.Sprint(ta.Port) {
		return nil
	}
	rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	var ips []net.IP
	if ip := net.ParseIP(host); ip != nil {
		ips = []net.IP{ip}
	} else if host == "" {
		ips = []net.IP{net.IPv4zero}
	} else {
		addrs, err := net.DefaultResolver.LookupIPAddr(rctx, host)
		if err != nil {
			return fmt.Errorf("--forward %s: %w", forward, err)
		}
		for _, a := range addrs {
			ips = append(ips, a.IP)
		}
	}
	for _, ip := range ips {
		if ip.Equal(ta.IP) || (ta.IP.IsUnspecified() && local(ip)) {
			return self()
		}
	}
	return nil
}

// local says whether ip reaches this host: loopback, unspecified, or one
// of its interfaces' addresses.
func local(ip net.IP) bool {
	if ip.IsLoopback() || ip.IsUnspecified() {
		return true
	}
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return false
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.Equal(ip) {
			return true
		}
	}
	return false
}
