package gateway

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/peer"
)

func peerCtx(addr net.Addr) context.Context {
	return peer.NewContext(context.Background(), &peer.Peer{Addr: addr})
}

// A client is an IPv4 address, an IPv6 /64 or every Unix-socket client:
// addresses of one /64 or ports of one host are one client.
func TestClientKey(t *testing.T) {
	tcp := func(s string) net.Addr { a, _ := net.ResolveTCPAddr("tcp", s); return a }
	for _, c := range []struct {
		addr net.Addr
		want string
	}{
		{tcp("192.0.2.7:4000"), "192.0.2.7"},
		{tcp("[2001:db8:1:2:aaaa::1]:4000"), "2001:db8:1:2::/64"},
		{tcp("[2001:db8:1:2:ffff::9]:5000"), "2001:db8:1:2::/64"},
		{tcp("[2001:db8:1:3::1]:4000"), "2001:db8:1:3::/64"},
		{tcp("[::ffff:192.0.2.7]:1"), "192.0.2.7"},
		{&net.UnixAddr{Name: "@", Net: "unix"}, "unix"},
	} {
		if got := clientKey(peerCtx(c.addr)); got != c.want {
			t.Errorf("clientKey(%v) = %q, want %q", c.addr, got, c.want)
		}
	}
}

// The defaults serve one Curio node's work (8 PoReps, a WindowPoSt and a
// WinningPoSt in flight, and more) without refusing any; past the bound a
// call is refused naming it and the flag, and a call that ends makes room.
// Urgent requests are bounded per minute, per client.
func TestClientBounds(t *testing.T) {
	c := newClients(0, 0)
	ctx := peerCtx(&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 1})
	var leaves []func()
	for i := range DefaultClientCalls {
		leave, err := c.calls.enter(ctx, "Prove")
		if err != nil {
			t.Fatalf("call %d of one client refused: %v", i+1, err)
		}
		leaves = append(leaves, leave)
	}
	if _, err := c.calls.enter(ctx, "Prove"); err == nil || !strings.Contains(err.Error(), "--client-calls") {
		t.Errorf("call %d: %v, want refused naming --client-calls", DefaultClientCalls+1, err)
	}
	other := peerCtx(&net.TCPAddr{IP: net.IPv4(127, 0, 0, 2), Port: 1})
	if _, err := c.calls.enter(other, "Prove"); err != nil {
		t.Errorf("another client refused: %v", err)
	}
	leaves[0]()
	if _, err := c.calls.enter(ctx, "Prove"); err != nil {
		t.Errorf("a call after one ended: %v", err)
	}
	now := time.Now()
	for i := range DefaultUrgentPerMinute {
		if err := c.urgentRequest(ctx, "Prove", now.Add(time.Duration(i)*time.Millisecond)); err != nil {
			t.Fatalf("urgent request %d refused: %v", i+1, err)
		}
	}
	if err := c.urgentRequest(ctx, "Prove", now.Add(time.Second)); err == nil || !strings.Contains(err.Error(), "--client-urgent-per-minute") {
		t.Errorf("urgent request %d in a minute: %v, want refused", DefaultUrgentPerMinute+1, err)
	}
	if err := c.urgentRequest(other, "Prove", now.Add(time.Second)); err != nil {
		t.Errorf("another client's urgent request: %v", err)
	}
	if err := c.urgentRequest(ctx, "Prove", now.Add(time.Minute+time.Second)); err != nil {
		t.Errorf("an urgent request a minute later: %v", err)
	}
}
