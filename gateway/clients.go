package gateway

import (
	"context"
	"net"
	"sync"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"
)

// Work per client is bounded, by a key a client cannot multiply: an IPv4
// address, an IPv6 /64 (one host's share of a network; an address per
// call would otherwise be a new client), and every Unix-socket client
// together (they are the box's own processes). A Curio node is one
// client for all its work: its proofs in flight are its MaxPending, a few
// dozen at most, well within the calls bound; its urgent (WinningPoSt)
// requests are one an epoch for each miner that wins.
const (
	// DefaultClientCalls bounds a client's calls in flight, Prove's
	// waits included (--client-calls).
	DefaultClientCalls = 256
	// DefaultUrgentPerMinute bounds a client's urgent requests a minute
	// (--client-urgent-per-minute):
	// a flood of cheap WinningPoSt (vanilla proofs over an all-zero tree
	// verify; the gateway cannot check comm_r against the chain) would
	// otherwise take the urgent lanes from PoRep and from real ones.
	DefaultUrgentPerMinute = 60
)

// clientKey is the key of ctx's client.
func clientKey(ctx context.Context) string {
	pr, ok := peer.FromContext(ctx)
	if !ok || pr.Addr == nil {
		return "unknown"
	}
	if pr.Addr.Network() == "unix" {
		return "unix"
	}
	host, _, err := net.SplitHostPort(pr.Addr.String())
	if err != nil {
		host = pr.Addr.String()
	}
	ip := net.ParseIP(host)
	switch {
	case ip == nil:
		return host
	case ip.To4() != nil:
		return ip.To4().String()
	}
	return ip.Mask(net.CIDRMask(64, 128)).String() + "/64"
}

// clientCounts bounds what each client (clientKey) has at once: its calls
// in flight, or its streams still sending their messages.
type clientCounts struct {
	max         int
	what, bound string // the counted calls and the bound, as a refusal names them
	mu          sync.Mutex
	n           map[string]int
}

func newClientCounts(max int, what, bound string) *clientCounts {
	return &clientCounts{max: max, what: what, bound: bound, n: map[string]int{}}
}

// count is how many calls of client key are counted.
func (c *clientCounts) count(key string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[key]
}

// enter counts a call of ctx's client, refusing it past the bound; leave
// uncounts it.
func (c *clientCounts) enter(ctx context.Context, method string) (leave func(), err error) {
	key := clientKey(ctx)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n[key] >= c.max {
		return nil, status.Errorf(codes.ResourceExhausted, "%s: client %s already has %d %s (at most %d%s): retry later", method, key, c.n[key], c.what, c.max, c.bound)
	}
	c.n[key]++
	return func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.n[key]--; c.n[key] <= 0 {
			delete(c.n, key)
		}
	}, nil
}

// clients bounds each client's calls in flight and urgent requests.
type clients struct {
	calls     *clientCounts
	maxUrgent int
	window    time.Duration
	mu        sync.Mutex
	urgent    map[string][]time.Time // the client's urgent requests in the window, oldest first
}

func newClients(maxCalls, maxUrgent int) *clients {
	if maxCalls <= 0 {
		maxCalls = DefaultClientCalls
	}
	if maxUrgent <= 0 {
		maxUrgent = DefaultUrgentPerMinute
	}
	return &clients{calls: newClientCounts(maxCalls, "calls in flight", ", --client-calls"), maxUrgent: maxUrgent,
		window: time.Minute, urgent: map[string][]time.Time{}}
}

// urgentRequest counts an urgent request of ctx's client, refusing it
// past the bound of the window.
func (c *clients) urgentRequest(ctx context.Context, method string, now time.Time) error {
	key := clientKey(ctx)
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.urgent) > maxUrgentClients {
		c.forgetLocked(now)
	}
	ts := c.urgent[key]
	for len(ts) > 0 && now.Sub(ts[0]) >= c.window {
		ts = ts[1:]
	}
	if len(ts) >= c.maxUrgent {
		c.urgent[key] = ts
		return status.Errorf(codes.ResourceExhausted, "%s: client %s sent %d urgent requests in the last %v (at most %d, --client-urgent-per-minute): retry later", method, key, len(ts), c.window, c.maxUrgent)
	}
	c.urgent[key] = append(ts, now)
	return nil
}

// maxUrgentClients is how many clients' windows are kept before the
// ended ones are dropped.
const maxUrgentClients = 1024

// forgetLocked drops the windows that ended: a client that stopped sending
// holds no memory (c.mu held).
func (c *clients) forgetLocked(now time.Time) {
	for k, ts := range c.urgent {
		if len(ts) == 0 || now.Sub(ts[len(ts)-1]) >= c.window {
			delete(c.urgent, k)
		}
	}
}
