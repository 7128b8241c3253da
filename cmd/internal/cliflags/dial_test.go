package cliflags

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"
)

// A server that never comes is tried again, each try logged, and the
// final error says how many tries failed and names the address.
func TestDialRetryGivesUp(t *testing.T) {
	// A port that refuses: listen, note it, close.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&buf, nil))
	tf := Temporal{Address: addr, Namespace: "default"}
	c, err := tf.DialRetry(context.Background(), log, 4*time.Second)
	if err == nil {
		c.Close()
		t.Fatalf("dial %s succeeded; nothing listens there", addr)
	}
	// Every failed try but the last is logged before its retry.
	retries := strings.Count(buf.String(), "temporal not reachable yet")
	if retries < 1 {
		t.Fatalf("no retry logged:\n%s", buf.String())
	}
	want := fmt.Sprintf("gave up after %d tries", retries+1)
	if !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), addr) {
		t.Fatalf("error %q: want %q and the address %s", err, want, addr)
	}
}

// A canceled context ends the retries with the context's error.
func TestDialRetryCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	tf := Temporal{Address: "127.0.0.1:1", Namespace: "default"}
	if _, err := tf.DialRetry(ctx, slog.New(slog.DiscardHandler), time.Minute); err == nil || ctx.Err() == nil {
		t.Fatalf("dial with a canceled context: %v", err)
	}
}
