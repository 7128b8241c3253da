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
	// defaultClientCalls bounds a client's calls in flight, Prove's
	// waits included.
	defaultClientCalls = 256
	// defaultUrgentPerMinute bounds a client's urgent requests a minute:
	// a flood of cheap WinningPoSt (vanilla proofs over an all-zero tree
	// verify; the gateway cannot check comm_r against the chain) would
	// otherwise take the urgent lanes from PoRep and from real ones.
	defaultUrgentPerMinute = 60
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

// clients bounds each client's calls in flight and urgent requests.
type clients struct {
	maxCalls, maxUrgent int
	window              time.Duration
	mu                  sync.Mutex
	calls               map[string]int
	urgent              map[string][]time.Time // the client's urgent requests in the window, oldest first
}

func newClients(maxCalls, maxUrgent int) *clients {
	if maxCalls <= 0 {
		maxCalls = defaultClientCalls
	}
	if maxUrgent <= 0 {
		maxUrgent = defaultUrgentPerMinute
	}
	return &clients{maxCalls: maxCalls, maxUrgent: maxUrgent, window: time.Minute, calls: map[string]int{}, urgent: map[string][]time.Time{}}
}

// enter counts a call of ctx's client, refusing it past the bound; leave
// uncounts it.
func (c *clients) enter(ctx context.Context, method string) (leave func(), err error) {
	key := clientKey(ctx)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.calls[key] >= c.maxCalls {
		return nil, status.Errorf(codes.ResourceExhausted, "%s: client %s already has %d calls in flight (at most %d, --client-calls): retry later", method, key, c.calls[key], c.maxCalls)
	}
	c.calls[key]++
	return func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.calls[key]--; c.calls[key] <= 0 {
			delete(c.calls, key)
		}
	}, nil
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
