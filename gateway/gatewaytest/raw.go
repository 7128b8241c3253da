// Package gatewaytest sends raw gRPC calls to a gateway, as a hostile
// client would: hand-built message bytes over plaintext HTTP/2, the
// transport Curio's client speaks.
package gatewaytest

import (
	"context"
	"crypto/tls"
	"encoding/binary"
	"io"
	"net"
	"net/http"

	"golang.org/x/net/http2"
	"google.golang.org/protobuf/proto"

	"github.com/c2flow/c2flow/gateway/cuzkpb"
)

// H2C is an HTTP/2 client of plaintext gRPC.
func H2C() *http2.Transport {
	return &http2.Transport{AllowHTTP: true, DialTLSContext: func(ctx context.Context, network, addr string, _ *tls.Config) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, addr)
	}}
}

// Frame is msg as one gRPC message.
func Frame(msg []byte) []byte {
	return append(binary.BigEndian.AppendUint32([]byte{0}, uint32(len(msg))), msg...)
}

// Call sends one gRPC call of method (its full name) with body (framed
// messages) and returns "CODE message" (grpc-status and grpc-message),
// "0 STATUS error" for a call answered with a ProveResponse's result, or
// the transport's error.
func Call(ctx context.Context, tr *http2.Transport, addr, method string, body io.Reader) string {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+addr+method, body)
	if err != nil {
		return "request error: " + err.Error()
	}
	req.Header.Set("content-type", "application/grpc")
	req.Header.Set("te", "trailers")
	resp, err := tr.RoundTrip(req)
	if err != nil {
		return "transport error: " + err.Error()
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	code := resp.Trailer.Get("grpc-status") + resp.Header.Get("grpc-status")
	if code == "0" && method == cuzkpb.ProvingEngine_Prove_FullMethodName && len(b) >= 5 {
		var pr cuzkpb.ProveResponse
		if err := proto.Unmarshal(b[5:], &pr); err == nil && pr.GetResult() != nil {
			return "0 " + pr.GetResult().GetStatus().String() + " " + pr.GetResult().GetErrorMessage()
		}
	}
	return code + " " + resp.Trailer.Get("grpc-message") + resp.Header.Get("grpc-message")
}
