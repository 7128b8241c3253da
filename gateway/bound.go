package gateway

import (
	"errors"
	"fmt"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/encoding"
	gproto "google.golang.org/grpc/encoding/proto"
	"google.golang.org/grpc/mem"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/c2flow/c2flow/gateway/cuzkpb"
)

// A request's message is bounded by its kind and registered proof before
// protobuf decodes it: decoding allocates per list entry (20 million
// empty vanilla_proofs, a 40 MB message, cost 1.8 GB), so the gateway
// reads the message's bytes raw, walks its wire format for the kind, the
// registered proof and the sizes of the vanilla proofs (no allocation),
// checks them against the scheme's scheme.Bound and only then decodes.

// rawMessage receives a message's bytes undecoded (rawCodec).
type rawMessage []byte

// rawCodec is grpc's proto codec, but a *rawMessage receives the bytes as
// they came.
type rawCodec struct{ encoding.CodecV2 }

func newRawCodec() rawCodec { return rawCodec{encoding.GetCodecV2(gproto.Name)} }

func (c rawCodec) Unmarshal(data mem.BufferSlice, v any) error {
	if r, ok := v.(*rawMessage); ok {
		*r = data.Materialize()
		return nil
	}
	return c.CodecV2.Unmarshal(data, v)
}

// rawCodecOption makes the server's codec rawCodec.
func rawCodecOption() grpc.ServerOption { return grpc.ForceServerCodecV2(newRawCodec()) }

// wireRequest is what the bound check reads of a SubmitProofRequest's
// wire bytes.
type wireRequest struct {
	kind            cuzkpb.ProofKind
	registeredProof uint64
	entries         int
	maxEntry, total int64
	envelope        int64
}

// errMalformed: the bytes are not a protobuf message.
var errMalformed = errors.New("not a well-formed protobuf message")

// scanSubmit walks a SubmitProofRequest's wire bytes.
func scanSubmit(b []byte) (wireRequest, error) {
	var w wireRequest
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return w, errMalformed
		}
		b = b[n:]
		switch {
		case num == 2 && typ == protowire.VarintType:
			v, n := protowire.ConsumeVarint(b)
			if n < 0 {
				return w, errMalformed
			}
			w.kind, b = cuzkpb.ProofKind(int32(v)), b[n:]
			continue
		case num == 4 && typ == protowire.VarintType:
			v, n := protowire.ConsumeVarint(b)
			if n < 0 {
				return w, errMalformed
			}
			w.registeredProof, b = v, b[n:]
			continue
		case (num == 10 || num == 11) && typ == protowire.BytesType:
			v, n := protowire.ConsumeBytes(b)
			if n < 0 {
				return w, errMalformed
			}
			b = b[n:]
			l := int64(len(v))
			if num == 10 {
				w.envelope = l // the last occurrence wins, as in decoding
			} else {
				w.entries++
				w.maxEntry = max(w.maxEntry, l)
				w.total += l
			}
			continue
		}
		n = protowire.ConsumeFieldValue(num, typ, b)
		if n < 0 {
			return w, errMalformed
		}
		b = b[n:]
	}
	w.total += w.envelope
	return w, nil
}

// submitOf returns the SubmitProofRequest bytes of a ProveRequest (its
// field 1; the last one, as decoding merges, but Curio sends one).
func submitOf(b []byte) ([]byte, error) {
	var sub []byte
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return nil, errMalformed
		}
		b = b[n:]
		if num == 1 && typ == protowire.BytesType {
			v, n := protowire.ConsumeBytes(b)
			if n < 0 {
				return nil, errMalformed
			}
			sub, b = v, b[n:]
			continue
		}
		n = protowire.ConsumeFieldValue(num, typ, b)
		if n < 0 {
			return nil, errMalformed
		}
		b = b[n:]
	}
	return sub, nil
}

// checkBound checks a SubmitProofRequest's or ProveRequest's bytes (m
// names which) against its kind's scheme.Bound, for the kinds this
// gateway proves; other messages and forwarded kinds pass (forwarded
// requests are the upstream's to bound, within MaxMessageBytes).
func (s *Server) checkBound(m any, raw []byte) error {
	var sub []byte
	switch m.(type) {
	case *cuzkpb.SubmitProofRequest:
		sub = raw
	case *cuzkpb.ProveRequest:
		var err error
		if sub, err = submitOf(raw); err != nil {
			return status.Errorf(codes.InvalidArgument, "ProveRequest: %v", err)
		}
	default:
		return nil
	}
	w, err := scanSubmit(sub)
	if err != nil {
		return status.Errorf(codes.InvalidArgument, "SubmitProofRequest: %v", err)
	}
	if !s.proves(w.kind) {
		return nil
	}
	bd, ok, err := s.cfg.Schemes.RequestBound(cuzkKinds[w.kind].kind, w.registeredProof)
	if err != nil {
		return &boundError{fmt.Errorf("c2flow: %s request: %w: not decoded", w.kind, err)}
	}
	if !ok {
		return nil
	}
	what := fmt.Sprintf("c2flow: %s request of registered_proof %d", w.kind, w.registeredProof)
	switch {
	case w.entries > bd.Entries:
		return &boundError{fmt.Errorf("%s: %d vanilla_proofs, at most %d: not decoded", what, w.entries, bd.Entries)}
	case w.maxEntry > bd.EntryBytes && w.entries > 0:
		return &boundError{fmt.Errorf("%s: a vanilla_proofs entry of %d bytes, at most %d: not decoded", what, w.maxEntry, bd.EntryBytes)}
	case w.envelope > bd.EnvelopeBytes:
		return &boundError{fmt.Errorf("%s: vanilla_proof of %d bytes, at most %d: not decoded", what, w.envelope, bd.EnvelopeBytes)}
	case w.total > bd.TotalBytes:
		return &boundError{fmt.Errorf("%s: %d bytes of vanilla proofs, at most %d: not decoded", what, w.total, bd.TotalBytes)}
	}
	return nil
}

// boundError is a request over its kind's bound: a bad request, answered
// as the method answers one (Prove: a FAILED result; SubmitProof:
// InvalidArgument).
type boundError struct{ err error }

func (e *boundError) Error() string { return e.err.Error() }
func (e *boundError) Unwrap() error { return e.err }

// GRPCStatus makes it InvalidArgument where it is returned as is.
func (e *boundError) GRPCStatus() *status.Status {
	return status.New(codes.InvalidArgument, e.err.Error())
}

// decodeBounded checks a message's raw bytes against its bound, then
// decodes them into m.
func (s *Server) decodeBounded(raw []byte, m any) error {
	if err := s.checkBound(m, raw); err != nil {
		s.log.Warn("cuzk request refused before decoding", "error", err)
		return err
	}
	pm, ok := m.(proto.Message)
	if !ok {
		return status.Errorf(codes.Internal, "c2flow: %T is not a protobuf message", m)
	}
	if err := proto.Unmarshal(raw, pm); err != nil {
		return status.Errorf(codes.InvalidArgument, "c2flow: decode %T: %v", m, err)
	}
	return nil
}
