package hosting

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"

	"go.temporal.io/sdk/client"

	"github.com/c2flow/c2flow/cmd/c2flow/internal/cli"
	"github.com/c2flow/c2flow/cmd/internal/cliflags"
	"github.com/c2flow/c2flow/cmd/internal/procflags"
	"github.com/c2flow/c2flow/gateway"
	"github.com/c2flow/c2flow/internal/yield"
	"github.com/c2flow/c2flow/registry"
	"github.com/c2flow/c2flow/storage"
)

// gatewayFlags are the flags of the cuzk gateway (c2flow gateway, and
// c2flow dev --cuzk).
type gatewayFlags struct {
	listen         string
	forward        string
	insecure       bool
	published      string // gateway --published-on: the host address docker publishes the port on
	cert, key, ca  string
	filecoinParams string
	memoryMiB      int64
	clientCalls    int
	clientUrgent   int
}

// add registers the flags; listenFlag names the listen address's flag
// (gateway --listen, dev --cuzk) and def its default.
func (g *gatewayFlags) add(fs *flag.FlagSet, listenFlag, def, usage string) {
	fs.StringVar(&g.listen, listenFlag, def, usage)
	fs.StringVar(&g.forward, "forward", "", "HOST:PORT or unix:///PATH of a cuzk-protocol server (a cuzk daemon) that gets the WindowPoSt and WinningPoSt requests, unchanged, instead of the fleet (not needed: without it c2flow proves them itself, at the highest priority)")
	fs.BoolVar(&g.insecure, "insecure-listen", false, "allow a plaintext gateway on an address beyond loopback (Curio's client has no authentication: whoever reaches it can submit and cancel proofs)")
	fs.StringVar(&g.cert, "grpc-tls-cert", procflags.Env("C2FLOW_GATEWAY_TLS_CERT", ""), "serve the gateway over TLS with this certificate (PEM, $C2FLOW_GATEWAY_TLS_CERT) (for clients other than Curio, whose client speaks plaintext; without --grpc-client-ca any client that reaches it can submit and cancel proofs)")
	fs.StringVar(&g.key, "grpc-tls-key", procflags.Env("C2FLOW_GATEWAY_TLS_KEY", ""), "private key (PEM) of --grpc-tls-cert ($C2FLOW_GATEWAY_TLS_KEY)")
	fs.StringVar(&g.ca, "grpc-client-ca", procflags.Env("C2FLOW_GATEWAY_CLIENT_CA", ""), "with --grpc-tls-cert: require client certificates of these CAs (PEM) ($C2FLOW_GATEWAY_CLIENT_CA)")
	fs.Int64Var(&g.memoryMiB, "request-memory-mib", gateway.DefaultRequestBudget>>20, "request memory budget of the gateway in MiB: what the requests being read and stored may hold at once (reading one message costs twice its size; the largest, a 64GiB C1, is about 112 MiB; 3% is kept for WinningPoSt, 29% for WindowPoSt); past it a request waits 30 s, then is refused with ResourceExhausted")
	fs.IntVar(&g.clientCalls, "client-calls", gateway.DefaultClientCalls, "calls in flight one client may have (an IPv4 address, an IPv6 /64, or every Unix-socket client together); a Curio node has its proofs in flight, a few dozen")
	fs.IntVar(&g.clientUrgent, "client-urgent-per-minute", gateway.DefaultUrgentPerMinute, "urgent (WinningPoSt) requests one client may send a minute")
	fs.StringVar(&g.filecoinParams, "gateway-filecoin-params", filepath.Join(registry.FilecoinParamsDir(), "c2flow-gateway"), "where the gateway keeps the .vk files it verifies proofs with (downloaded from storage's params/filecoin/)")
}

// tlsConfig is the listener's TLS, nil for plaintext.
func (g *gatewayFlags) tlsConfig() (*tls.Config, error) {
	switch {
	case g.cert == "" && g.key == "" && g.ca == "":
		return nil, nil
	case g.cert == "" || g.key == "":
		return nil, errors.New("--grpc-tls-cert and --grpc-tls-key go together")
	}
	cert, err := tls.LoadX509KeyPair(g.cert, g.key)
	if err != nil {
		return nil, fmt.Errorf("gateway TLS: %w", err)
	}
	c := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	if g.ca != "" {
		pem, err := os.ReadFile(g.ca)
		if err != nil {
			return nil, fmt.Errorf("--grpc-client-ca: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("--grpc-client-ca %s: no PEM certificates", g.ca)
		}
		c.ClientCAs, c.ClientAuth = pool, tls.RequireAndVerifyClientCert
	}
	return c, nil
}

// absPaths makes the flags' paths absolute (the embedded S3 server of
// c2flow dev changes the working directory).
func (g *gatewayFlags) absPaths() error {
	return absPaths(&g.cert, &g.key, &g.ca, &g.filecoinParams)
}

// start opens the gateway's listener and serves it in the background
// until ctx ends; the returned channel gives Serve's error. gate is the
// urgency gate of a worker in the same process (gateway.Config.Gate), or
// nil.
func (g *gatewayFlags) start(ctx context.Context, c client.Client, namespace string, store *storage.Store, gate *yield.Gate, log *slog.Logger) (net.Listener, <-chan error, error) {
	tc, err := g.tlsConfig()
	if err != nil {
		return nil, nil, err
	}
	if g.memoryMiB < 1 {
		return nil, nil, fmt.Errorf("--request-memory-mib %d: at least 1", g.memoryMiB)
	}
	if g.clientCalls < 1 || g.clientUrgent < 1 {
		return nil, nil, fmt.Errorf("--client-calls %d, --client-urgent-per-minute %d: at least 1 each", g.clientCalls, g.clientUrgent)
	}
	cfg := gateway.Config{Temporal: c, Namespace: namespace, Store: store, Log: log, RequestBudget: g.memoryMiB << 20,
		ClientCalls: g.clientCalls, ClientUrgentPerMinute: g.clientUrgent, Gate: gate,
		Schemes: registry.Schemes(registry.Options{FilecoinParams: g.filecoinParams, Remote: store, Log: log})}
	if g.forward != "" {
		fw, conn, err := gateway.Dial(g.forward)
		if err != nil {
			return nil, nil, err
		}
		context.AfterFunc(ctx, func() { conn.Close() })
		cfg.Forward, cfg.ForwardAddr = fw, g.forward
	}
	l, err := gateway.Listen(g.listen, gateway.ListenOptions{TLS: tc, Insecure: g.insecure, Published: g.published, Log: log})
	if err != nil {
		return nil, nil, err
	}
	if g.forward != "" {
		if err := gateway.CheckForward(ctx, l, g.forward); err != nil {
			l.Close()
			return nil, nil, err
		}
	}
	done := make(chan error, 1)
	go func() { done <- gateway.Serve(ctx, l, gateway.New(cfg), tc) }()
	return l, done, nil
}

// describe says where the gateway listens, how Curio reaches it and what
// it does with each proof kind.
func (g *gatewayFlags) describe(l net.Listener) string {
	post := "WindowPoSt/WinningPoSt proved by c2flow ahead of PoRep and SnapDeals"
	if g.forward != "" {
		post = "WindowPoSt/WinningPoSt forwarded to " + g.forward
	}
	curio := fmt.Sprintf("Curio: [Cuzk] Address = %q", curioAddress(l))
	if g.published != "" {
		// In a container: Curio dials the published port, not this one.
		curio = fmt.Sprintf("Curio: [Cuzk] Address = %q and the port docker publishes", g.published)
	}
	if g.cert != "" {
		// Curio's cuzk client dials plaintext: an address it would dial
		// here fails its handshake.
		curio = "TLS: Curio's cuzk client dials plaintext, so Curio reaches this gateway only through a TLS-terminating proxy, not at this address"
	}
	return fmt.Sprintf("cuzk.v1.ProvingEngine on %s %s (%s); PoRep C2 and SnapDeals proved by c2flow; %s", l.Addr().Network(), l.Addr(), curio, post)
}

// curioAddress is what Curio's [Cuzk] Address says to reach l.
func curioAddress(l net.Listener) string {
	if l.Addr().Network() == "unix" {
		return "unix://" + l.Addr().String()
	}
	return l.Addr().String()
}

func RunGateway(ctx context.Context, args []string) error {
	fs := cli.NewFlags("gateway")
	var tf cliflags.Temporal
	var sf cliflags.S3
	var lf procflags.Log
	var g gatewayFlags
	tf.Add(fs)
	sf.Add(fs)
	lf.Add(fs, "info")
	g.add(fs, "listen", gateway.DefaultListen, "HOST:PORT or unix:///PATH to serve cuzk's gRPC protocol on (loopback unless --grpc-tls-* or --insecure-listen)")
	fs.StringVar(&g.published, "published-on", "", "in a container listening on its own 0.0.0.0: the host address its port is published on (docker-compose.yml passes $C2FLOW_GATEWAY_BIND); the loopback rule applies to it, so a port published off the box needs --grpc-tls-*. Refused outside a container")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("gateway: unexpected arguments %v", fs.Args())
	}
	log, err := lf.Logger()
	if err != nil {
		return err
	}
	store, err := sf.Open(ctx)
	if err != nil {
		return err
	}
	c, err := tf.Dial(ctx, log)
	if err != nil {
		return err
	}
	defer c.Close()
	l, done, err := g.start(ctx, c, tf.Namespace, store, nil, log)
	if err != nil {
		return err
	}
	fmt.Fprintln(os.Stderr, "c2flow gateway: "+g.describe(l))
	return <-done
}
