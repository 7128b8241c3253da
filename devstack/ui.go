package devstack

import (
	"fmt"
	"math/rand/v2"
	"net"
	"strconv"
	"time"

	uiserver "github.com/temporalio/ui-server/v2/server"
	uiconfig "github.com/temporalio/ui-server/v2/server/config"
	uioptions "github.com/temporalio/ui-server/v2/server/server_options"
)

// uiServer is the Temporal Web UI (the ui-server module the Temporal CLI
// embeds), talking to the frontend over gRPC.
type uiServer struct {
	cfg  *uiconfig.Config
	srv  *uiserver.Server // made by start: it dials the frontend once made
	addr string
}

// newUIServer makes the UI for the frontend at temporal, to serve on addr
// (host:port; port 0 picks a free one). It checks that addr can be bound:
// the UI server exits the process when its listen fails.
func newUIServer(addr, temporal, namespace string) (*uiServer, error) {
	host, portStr, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("web UI address %q: %w", addr, err)
	}
	port, err := strconv.Atoi(portStr)
	if err != nil || port < 0 || port > 65535 {
		return nil, fmt.Errorf("web UI address %q: port %q is not a port number", addr, portStr)
	}
	if port == 0 {
		// A port the kernel hands out as a free listening port is also one
		// it hands out as the local port of outgoing connections (the UI's
		// own to the frontend among them) once closed: between the check and
		// the UI's bind it may be taken, and then the UI exits the process.
		// Pick one below the ephemeral range instead.
		if port, err = freePortBelowEphemeral(host); err != nil {
			return nil, fmt.Errorf("web UI on %s: %w", addr, err)
		}
	} else {
		l, err := net.Listen("tcp", addr)
		if err != nil {
			return nil, fmt.Errorf("web UI on %s: %w", addr, err)
		}
		l.Close()
	}
	cfg := &uiconfig.Config{
		Host: host, Port: port, TemporalGRPCAddress: temporal, EnableUI: true,
		DefaultNamespace: namespace, HideLogs: true,
		// The UI is served over plain HTTP (on 127.0.0.1 unless told
		// otherwise): its CSRF cookie must not require HTTPS.
		CORS:             uiconfig.CORS{CookieInsecure: true},
		DisableNewsFetch: true, // no internet from a fleet's server
	}
	return &uiServer{
		cfg:  cfg,
		addr: net.JoinHostPort(host, strconv.Itoa(port)),
	}, nil
}

// start serves in the background and returns once the UI accepts
// connections (so that a stop right after cannot precede its listen);
// nil does nothing. Call it once the frontend listens: the UI dials the
// frontend when made, and after a refusal backs off for seconds.
func (u *uiServer) start() error {
	if u == nil {
		return nil
	}
	u.srv = uiserver.NewServer(uioptions.WithConfigProvider(u.cfg))
	// Start returns once stopped; a listen error would exit the process
	// (newUIServer checked the address).
	go u.srv.Start()
	if err := waitListening(u.addr, 10*time.Second); err != nil {
		return fmt.Errorf("web UI: %w", err)
	}
	return nil
}

// freePortBelowEphemeral returns a port of host that can be bound now,
// from 20000-32767 (Linux's ephemeral range starts at 32768).
func freePortBelowEphemeral(host string) (int, error) {
	var last error
	for range 100 {
		port := 20000 + rand.IntN(12768)
		l, err := net.Listen("tcp", net.JoinHostPort(host, strconv.Itoa(port)))
		if err == nil {
			l.Close()
			return port, nil
		}
		last = err
	}
	return 0, fmt.Errorf("no free port in 20000-32767: %w", last)
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

// stop stops serving; nil or not started does nothing.
func (u *uiServer) stop() {
	if u == nil || u.srv == nil {
		return
	}
	u.srv.Stop()
}
