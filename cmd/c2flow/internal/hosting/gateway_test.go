package hosting

import (
	"net"
	"strings"
	"testing"
)

// The banner says what c2flow does with each kind (SnapDeals are proved,
// never forwarded or refused), and never gives Curio, whose client dials
// plaintext, the address of a TLS listener.
func TestGatewayDescribe(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	for _, c := range []struct {
		g         gatewayFlags
		want, not []string
	}{
		{gatewayFlags{}, []string{"PoRep C2 and SnapDeals proved by c2flow", "WindowPoSt/WinningPoSt proved by c2flow ahead of PoRep and SnapDeals", `[Cuzk] Address = "` + l.Addr().String() + `"`}, []string{"SnapDeals/", "SnapDeals refused", "SnapDeals forwarded", "Unimplemented"}},
		{gatewayFlags{forward: "127.0.0.1:9821"}, []string{"SnapDeals proved by c2flow", "WindowPoSt/WinningPoSt forwarded to 127.0.0.1:9821"}, []string{"SnapDeals/"}},
		{gatewayFlags{cert: "c.pem", key: "k.pem"}, []string{"dials plaintext", "TLS-terminating proxy"}, []string{"[Cuzk] Address ="}},
	} {
		got := c.g.describe(l)
		for _, w := range c.want {
			if !strings.Contains(got, w) {
				t.Errorf("describe(%+v) = %q: lacks %q", c.g, got, w)
			}
		}
		for _, n := range c.not {
			if strings.Contains(got, n) {
				t.Errorf("describe(%+v) = %q: says %q", c.g, got, n)
			}
		}
	}
}
