package gateway

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"strings"
	"sync"
	"syscall"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/c2flow/c2flow/gateway/cuzkpb"
)

// DefaultListen is cuzk's documented TCP address (curio
// extern/cuzk/cuzk.example.toml), on loopback: Curio's client dials
// plaintext with no authentication.
const DefaultListen = "127.0.0.1:9820"

// ListenOptions say how the gateway may be exposed.
type ListenOptions struct {
	// TLS serves TLS (with client certificates where its ClientAuth says
	// so); nil: plaintext, which Curio's client speaks.
	TLS *tls.Config
	// Insecure allows a plaintext listener on an address other than
	// loopback: anyone who reaches it can submit and cancel proofs.
	Insecure bool
	// Published is, for a gateway in a container, the host address docker
	// publishes its port on (compose's ports:): the container's own
	// 0.0.0.0 is not where clients reach it, so the loopback rule applies
	// to this address instead. Honoured only inside a container (a
	// listener on the host's own 0.0.0.0 is reachable there whatever this
	// says).
	Published string
	Log       *slog.Logger
}

// inContainer says whether this process runs in a Docker or Podman
// container (the files their runtimes create in every container).
var inContainer = func() bool {
	for _, f := range []string{"/.dockerenv", "/run/.containerenv"} {
		if _, err := os.Stat(f); err == nil {
			return true
		}
	}
	return false
}

// Listen opens the gateway's listener: "unix:///path" or "unix:path" (a
// Unix socket, as Curio's client dials them) or HOST:PORT. A socket file
// that a live server answers on is refused; a stale one (nothing answers)
// is replaced, and the listener removes its socket file on Close only if
// it is still its own. A plaintext TCP listener must be on loopback unless
// o.Insecure, which logs a warning, as does TLS without client
// certificates beyond loopback.
func Listen(addr string, o ListenOptions) (net.Listener, error) {
	if path, ok := unixPath(addr); ok {
		return listenUnix(addr, path)
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("gateway listen %q: want HOST:PORT or unix:///PATH: %w", addr, err)
	}
	if o.Published != "" {
		if !inContainer() {
			return nil, fmt.Errorf("gateway listen %s published on %s: not in a container (no /.dockerenv or /run/.containerenv), so the listen address is where clients reach it: drop --published-on", addr, o.Published)
		}
		host = o.Published
	}
	switch {
	case loopback(host):
	case o.TLS == nil && !o.Insecure:
		return nil, fmt.Errorf("gateway listen %s: %s is not a loopback address, and the gateway serves plaintext without authentication (Curio's client speaks nothing else): give --grpc-tls-cert/--grpc-tls-key (and --grpc-client-ca), or --insecure-listen to expose it anyway", addr, host)
	case o.TLS == nil && o.Log != nil:
		o.Log.Warn("gateway listens in plaintext beyond loopback (--insecure-listen): whoever reaches it can submit and cancel proofs", "listen", addr)
	case o.TLS != nil && o.TLS.ClientAuth != tls.RequireAndVerifyClientCert && o.Log != nil:
		o.Log.Warn("gateway serves TLS beyond loopback without client certificates (no --grpc-client-ca): TLS hides the traffic but authenticates no one, so whoever reaches it can submit proofs and cancel any job (CancelProof)", "listen", addr)
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("gateway listen %s: %w", addr, err)
	}
	return l, nil
}

// listenUnix listens on the socket path: a socket file a live server
// answers on is another's and is refused, naming it.
func listenUnix(addr, path string) (net.Listener, error) {
	if path == "" {
		return nil, fmt.Errorf("gateway listen %q: no socket path", addr)
	}
	if st, err := os.Lstat(path); err == nil && st.Mode()&fs.ModeSocket != 0 {
		c, err := net.DialTimeout("unix", path, 2*time.Second)
		if err == nil {
			c.Close()
			return nil, fmt.Errorf("gateway listen %s: socket %s is in use: a live server (another gateway?) answers on it; stop it or choose another path", addr, path)
		}
		if !errors.Is(err, syscall.ECONNREFUSED) {
			return nil, fmt.Errorf("gateway listen %s: socket %s exists and cannot be probed (%v): not replaced", addr, path, err)
		}
		os.Remove(path) // a stale socket of an earlier run: nothing answers
	}
	l, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("gateway listen %s: %w", addr, err)
	}
	ul := l.(*net.UnixListener)
	ul.SetUnlinkOnClose(false)
	st, err := os.Lstat(path)
	if err != nil {
		ul.Close()
		return nil, fmt.Errorf("gateway listen %s: %w", addr, err)
	}
	return &unixListener{UnixListener: ul, path: path, file: st}, nil
}

// unixListener removes its socket file on Close only while the path is
// still that file: a later server's socket at the path is not its to
// remove.
type unixListener struct {
	*net.UnixListener
	path string
	file os.FileInfo
	once sync.Once
}

func (l *unixListener) Close() error {
	err := l.UnixListener.Close()
	l.once.Do(func() {
		if st, serr := os.Lstat(l.path); serr == nil && os.SameFile(st, l.file) {
			os.Remove(l.path)
		}
	})
	return err
}

// unixPath returns the socket path of a unix: address.
func unixPath(addr string) (string, bool) {
	if p, ok := strings.CutPrefix(addr, "unix://"); ok {
		return p, true
	}
	return strings.CutPrefix(addr, "unix:")
}

// loopback says whether host names a loopback address only ("" and
// 0.0.0.0 are every address).
func loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Serve runs the gateway on l until ctx ends, then stops it gracefully
// (requests in flight are answered by their own deadline: a Prove that
// ends with the process returns Unavailable, and its retry joins the job).
func Serve(ctx context.Context, l net.Listener, s *Server, tlsConf *tls.Config) error {
	opts := ServerOptions()
	if tlsConf != nil {
		opts = append(opts, grpc.Creds(credentials.NewTLS(tlsConf)))
	}
	g := grpc.NewServer(opts...)
	s.Register(g)
	done := make(chan error, 1)
	go func() { done <- g.Serve(l) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	g.Stop() // a waiting Prove would hold GracefulStop for its whole wait
	if err := <-done; err != nil && !errors.Is(err, grpc.ErrServerStopped) {
		return err
	}
	return nil
}

// Dial returns a client of a cuzk-protocol server (the --forward
// upstream) as Curio dials one: a bare HOST:PORT through dns:///, a
// target with a scheme (unix://) unchanged, plaintext, 256 MiB messages.
func Dial(addr string) (cuzkpb.ProvingEngineClient, *grpc.ClientConn, error) {
	target := addr
	if !strings.Contains(target, "://") && !strings.HasPrefix(target, "unix:") {
		target = "dns:///" + target
	}
	conn, err := grpc.NewClient(target, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(MaxMessageBytes), grpc.MaxCallSendMsgSize(MaxMessageBytes)))
	if err != nil {
		return nil, nil, fmt.Errorf("dial cuzk server %s: %w", addr, err)
	}
	return cuzkpb.NewProvingEngineClient(conn), conn, nil
}
