package gateway

import (
	"encoding/binary"
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
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/c2flow/c2flow/gateway/cuzkpb"
	"github.com/c2flow/c2flow/scheme"
)

// Every message is bounded before protobuf decodes it, whatever its kind
// or method: decoding allocates per list entry (20 million empty
// vanilla_proofs, a 40 MB message, cost 1.8 GB) and merges repeated
// fields, so the gateway reads the message's bytes raw, walks them
// against the message's descriptor (walk: each field that is not a list
// once, lists bounded, no allocation per entry), checks a request's kind
// and registered proof against those it was admitted by and its vanilla
// proofs against its kind's scheme.Bound, and only then decodes.

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

// maxNesting bounds how deep a request's messages nest (ProveRequest
// wraps SubmitProofRequest: 2).
const maxNesting = 4

// maxListEntries bounds a repeated field of any request, whatever its kind
// (forwarded kinds and kinds no scheme bounds too): the longest legitimate
// list is a 32GiB window partition's 2349 vanilla proofs.
const maxListEntries = 1 << 12

// fieldStat is what the walk saw of one field of a message.
type fieldStat struct {
	count         int
	varint        uint64 // the value of a varint field
	maxLen, total int64  // of a bytes field's occurrences
	sub           shape  // a message field's own fields
}

// shape is a message's fields by number, as walk saw them.
type shape map[protowire.Number]*fieldStat

// walk checks a message's wire bytes against its descriptor before
// protobuf decodes them, allocating nothing per list entry: every field
// that is not a list appears once (protobuf would merge repeats: a second
// submit's vanilla proofs joined to the first's, or a second proof_kind
// read where the first was admitted), with its declared wire type; lists
// are at most maxListEntries long; nested messages are walked too.
func walk(md protoreflect.MessageDescriptor, b []byte, depth int) (shape, error) {
	if depth > maxNesting {
		return nil, fmt.Errorf("%s nested more than %d deep", md.FullName(), maxNesting)
	}
	out := shape{}
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return nil, fmt.Errorf("%s: %w", md.FullName(), errMalformed)
		}
		b = b[n:]
		fd := md.Fields().ByNumber(num)
		st := out[num]
		if st == nil {
			st = &fieldStat{}
			out[num] = st
		}
		st.count++
		if fd != nil {
			if want := wireType(fd); typ != want && !(fd.IsList() && typ == protowire.BytesType) {
				return nil, fmt.Errorf("%s.%s of wire type %d, want %d", md.FullName(), fd.Name(), typ, want)
			}
			switch {
			case fd.IsList() && st.count > maxListEntries:
				return nil, fmt.Errorf("%s.%s: more than %d entries", md.FullName(), fd.Name(), maxListEntries)
			case !fd.IsList() && st.count > 1:
				return nil, fmt.Errorf("%s.%s appears more than once: a request has one", md.FullName(), fd.Name())
			}
		}
		switch typ {
		case protowire.VarintType:
			v, n := protowire.ConsumeVarint(b)
			if n < 0 {
				return nil, fmt.Errorf("%s: %w", md.FullName(), errMalformed)
			}
			st.varint, b = v, b[n:]
		case protowire.BytesType:
			v, n := protowire.ConsumeBytes(b)
			if n < 0 {
				return nil, fmt.Errorf("%s: %w", md.FullName(), errMalformed)
			}
			b = b[n:]
			st.maxLen, st.total = max(st.maxLen, int64(len(v))), st.total+int64(len(v))
			if fd != nil && fd.Message() != nil && !fd.IsList() {
				sub, err := walk(fd.Message(), v, depth+1)
				if err != nil {
					return nil, err
				}
				st.sub = sub
			}
		default:
			n := protowire.ConsumeFieldValue(num, typ, b)
			if n < 0 {
				return nil, fmt.Errorf("%s: %w", md.FullName(), errMalformed)
			}
			b = b[n:]
		}
	}
	return out, nil
}

// wireType is the wire type of a field's value.
func wireType(fd protoreflect.FieldDescriptor) protowire.Type {
	switch fd.Kind() {
	case protoreflect.StringKind, protoreflect.BytesKind, protoreflect.MessageKind:
		return protowire.BytesType
	case protoreflect.Fixed32Kind, protoreflect.Sfixed32Kind, protoreflect.FloatKind:
		return protowire.Fixed32Type
	case protoreflect.Fixed64Kind, protoreflect.Sfixed64Kind, protoreflect.DoubleKind:
		return protowire.Fixed64Type
	case protoreflect.GroupKind:
		return protowire.StartGroupType
	}
	return protowire.VarintType
}

// SubmitProofRequest's field numbers the bound reads.
const (
	fieldKind            protowire.Number = 2
	fieldRegisteredProof protowire.Number = 4
	fieldVanillaProof    protowire.Number = 10
	fieldVanillaProofs   protowire.Number = 11
	fieldSubmit          protowire.Number = 1 // ProveRequest's
)

// submitShape is the SubmitProofRequest of a walked message m (itself, or
// Prove's submit); ok is false for the other methods' messages.
func submitShape(m any, sh shape) (wireRequest, bool) {
	switch m.(type) {
	case *cuzkpb.SubmitProofRequest:
	case *cuzkpb.ProveRequest:
		st := sh[fieldSubmit]
		if st == nil {
			return wireRequest{}, true
		}
		sh = st.sub
	default:
		return wireRequest{}, false
	}
	var w wireRequest
	if st := sh[fieldKind]; st != nil {
		w.kind = cuzkpb.ProofKind(int32(st.varint))
	}
	if st := sh[fieldRegisteredProof]; st != nil {
		w.registeredProof = st.varint
	}
	if st := sh[fieldVanillaProof]; st != nil {
		w.envelope = st.total
	}
	if st := sh[fieldVanillaProofs]; st != nil {
		w.entries, w.maxEntry, w.total = st.count, st.maxLen, st.total
	}
	w.total += w.envelope
	return w, true
}

// checkBound checks a message's raw bytes (m names its type) before it is
// decoded: its shape (walk), then, for SubmitProof's and Prove's, that
// its kind and registered proof are the ones it was admitted by (peeked
// from its first bytes: a later proof_kind cannot move it from the class
// it was read in), and its vanilla proofs against the kind's
// scheme.Bound, whoever proves the kind (this gateway or --forward's).
func (s *Server) checkBound(m any, raw []byte, admitted peeked) error {
	pm, ok := m.(proto.Message)
	if !ok {
		return status.Errorf(codes.Internal, "c2flow: %T is not a protobuf message", m)
	}
	sh, err := walk(pm.ProtoReflect().Descriptor(), raw, 0)
	if err != nil {
		return &boundError{fmt.Errorf("c2flow: %w: not decoded", err)}
	}
	w, ok := submitShape(m, sh)
	if !ok {
		return nil
	}
	if w.kind != admitted.kind || w.registeredProof != admitted.registeredProof {
		return &boundError{fmt.Errorf("c2flow: a request of proof_kind %s and registered_proof %d whose first %d bytes said %s and %d: proof_kind and registered_proof come first, as cuzk's clients send them: not decoded",
			w.kind, w.registeredProof, peekBytes, admitted.kind, admitted.registeredProof)}
	}
	bd, ok, err := s.boundOf(w.kind, w.registeredProof)
	if err != nil || !ok {
		return err
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

// boundOf is the scheme.Bound of a request of kind k and registered proof
// rp; ok is false where no scheme of this gateway bounds the kind (a kind
// only --forward serves: maxListEntries and the message limit bound it).
func (s *Server) boundOf(k cuzkpb.ProofKind, rp uint64) (scheme.Bound, bool, error) {
	c, ok := cuzkKinds[k]
	if !ok {
		return scheme.Bound{}, false, &boundError{fmt.Errorf("c2flow: proof_kind %d is not one of cuzk's kinds: not decoded", int32(k))}
	}
	bd, ok, err := s.cfg.Schemes.RequestBound(c.kind, rp)
	if err != nil {
		return scheme.Bound{}, false, &boundError{fmt.Errorf("c2flow: %s request: %w: not decoded", k, err)}
	}
	return bd, ok, nil
}

// requestSlack is what a SubmitProofRequest (and Prove's wrapping of it)
// holds besides its vanilla proofs: request_id (at most MaxRequestIDBytes),
// the numbers, randomness and SnapDeals' commitments (CIDs at most), with
// room to spare.
const requestSlack = 4 << 10

// entryOverhead is a vanilla_proofs entry's tag and length.
const entryOverhead = 1 + binary.MaxVarintLen32

// maxRequestBytes is the largest message a legitimate request of bound bd
// can be.
func maxRequestBytes(bd scheme.Bound) int64 {
	return bd.TotalBytes + int64(bd.Entries)*entryOverhead + entryOverhead + requestSlack
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
func (s *Server) decodeBounded(raw []byte, m any, admitted peeked) error {
	if err := s.checkBound(m, raw, admitted); err != nil {
		s.log.Warn("cuzk request refused before decoding", "error", err)
		return err
	}
	if err := proto.Unmarshal(raw, m.(proto.Message)); err != nil {
		return status.Errorf(codes.InvalidArgument, "c2flow: decode %T: %v", m, err)
	}
	return nil
}
