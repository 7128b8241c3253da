package devstack

import (
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"reflect"
	"strconv"
	"time"
	"unsafe"

	uiserver "github.com/temporalio/ui-server/v2/server"
	uiconfig "github.com/temporalio/ui-server/v2/server/config"
	uioptions "github.com/temporalio/ui-server/v2/server/server_options"
)

// uiServer is the Temporal Web UI (the ui-server module the Temporal CLI
// embeds), talking to the frontend over gRPC, served on a listener this
// package owns: bound before the Temporal server starts (a taken port is an
// error, not an exit of the process inside the UI server), and, when the
// frontend requires client certificates, serving HTTPS that requires them
// too, from the same client CA. The UI reaches the frontend with the
// server's own certificate, so whoever reaches the UI has the cluster:
// under mutual TLS the UI's door is no wider than the frontend's.
type uiServer struct {
	cfg  *uiconfig.Config
	l    net.Listener
	tls  *tls.Config // nil: plain HTTP
	http *http.Server
	addr string
}

// newUIServer makes the UI for the frontend at temporal and binds addr
// (host:port; port 0 picks a free one). A plain-HTTP UI must be on
// loopback unless insecure (the caller warns).
func newUIServer(addr, temporal, namespace string) (*uiServer, error) {
	host, portStr, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("web UI address %q: %w", addr, err)
	}
	port, err := strconv.Atoi(portStr)
	if err != nil || port < 0 || port > 65535 {
		return nil, fmt.Errorf("web UI address %q: port %q is not a port number", addr, portStr)
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("web UI on %s: %w", addr, err)
	}
	port = l.Addr().(*net.TCPAddr).Port
	cfg := &uiconfig.Config{
		Host: host, Port: port, TemporalGRPCAddress: temporal, EnableUI: true,
		DefaultNamespace: namespace, HideLogs: true,
		// Plain HTTP (loopback): the CSRF cookie must not require HTTPS;
		// useTLS sets it back.
		CORS:             uiconfig.CORS{CookieInsecure: true},
		DisableNewsFetch: true, // no internet from a fleet's server
	}
	return &uiServer{cfg: cfg, l: l, addr: net.JoinHostPort(host, strconv.Itoa(port))}, nil
}

// useTLS makes the UI a TLS client of the frontend (client) and its own
// listener HTTPS requiring client certificates (listener).
func (u *uiServer) useTLS(client uiconfig.TLS, listener *tls.Config) {
	if u == nil {
		return
	}
	u.cfg.TLS = client
	u.cfg.CORS.CookieInsecure = false
	u.tls = listener
}

// loopbackHost says whether host names loopback only.
func loopbackHost(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// start serves in the background; nil does nothing. Call it once the
// frontend listens: the UI dials the frontend when made, and after a
// refusal backs off for seconds.
func (u *uiServer) start() error {
	if u == nil {
		return nil
	}
	h, err := uiHandler(uiserver.NewServer(uioptions.WithConfigProvider(u.cfg)))
	if err != nil {
		return err
	}
	u.http = &http.Server{Handler: h, TLSConfig: u.tls, ReadHeaderTimeout: 30 * time.Second,
		ErrorLog: log.New(io.Discard, "", 0)} // a refused client's handshake error is no news for the terminal
	go func() {
		if u.tls != nil {
			u.http.ServeTLS(u.l, "", "") // the certificate is in TLSConfig
		} else {
			u.http.Serve(u.l)
		}
	}()
	return nil
}

// uiHandler is the ui-server's HTTP handler (its echo instance). ui-server
// only serves it from a listener of its own, whose TLS takes no client CA
// (echo's StartTLS), so c2flow serves the handler itself; the module's
// version is pinned, and a layout this does not know is an error, not a UI
// without its guard.
func uiHandler(s *uiserver.Server) (http.Handler, error) {
	v := reflect.ValueOf(s).Elem().FieldByName("httpServer")
	if !v.IsValid() || v.Kind() != reflect.Pointer {
		return nil, errors.New("web UI: this ui-server version has no httpServer handler to serve")
	}
	h, ok := reflect.NewAt(v.Type(), unsafe.Pointer(v.UnsafeAddr())).Elem().Interface().(http.Handler)
	if !ok || v.IsNil() {
		return nil, errors.New("web UI: ui-server's httpServer is not an http.Handler")
	}
	return h, nil
}

// waitListening waits until addr accepts TCP connections.
func waitListening(addr string, timeout time.Duration) error {
	for deadline := time.Now().Add(timeout); ; time.Sleep(20 * time.Millisecond) {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s not listening after %v: %w", addr, timeout, err)
		}
	}
}

// stop stops serving and releases the port; nil does nothing.
func (u *uiServer) stop() {
	if u == nil {
		return
	}
	if u.http != nil {
		u.http.Close()
	}
	u.l.Close()
}
