package c1

import (
	"errors"
	"strconv"
	"strings"
)

// Error is a decoding or validation error. Path names the JSON field at
// fault, e.g.
// "vanilla_proofs.StackedDrg2KiBV1[0][1].comm_d_proofs.data.Single.path.path[3].index";
// for an artifact wrapped in Commit2In, paths inside the wrapped C1 start
// with "Phase1Out.". Err wraps one of the Err* kinds below (or, for an
// unknown or unsupported registered_proof, the proofs package's error).
type Error struct {
	// Path is the JSON path of the field at fault; "" for the whole input.
	Path string
	// Offset is the byte offset in the (unwrapped) C1 JSON near which the
	// error was found, or -1 when not known (Validate, wrapper fields).
	Offset int64
	// Err describes the fault.
	Err error
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("c1: ")
	if e.Path != "" {
		b.WriteString(e.Path)
		b.WriteString(": ")
	}
	b.WriteString(e.Err.Error())
	if e.Offset >= 0 {
		b.WriteString(" (near byte ")
		b.WriteString(strconv.FormatInt(e.Offset, 10))
		b.WriteString(")")
	}
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// The kinds of error, wrapped by *Error.
var (
	// ErrSyntax: the input is not JSON, ends early, or has data after the
	// artifact; for a wrapper, Phase1Out is not valid base64.
	ErrSyntax = errors.New("invalid JSON")
	// ErrType: a value of the wrong JSON type (e.g. a string where an
	// array of numbers is expected, null where a number is).
	ErrType = errors.New("wrong JSON type")
	// ErrUnknownField: an object has a field its Rust type does not.
	ErrUnknownField = errors.New("unknown field")
	// ErrDuplicateField: an object has the same field twice.
	ErrDuplicateField = errors.New("duplicate field")
	// ErrMissingField: an object lacks a field.
	ErrMissingField = errors.New("missing field")
	// ErrCount: an array has the wrong number of elements for the
	// registered proof (partitions, challenges, layers, parents, path
	// length, hashes per path element, 32 bytes per domain).
	ErrCount = errors.New("wrong number of elements")
	// ErrRange: an integer out of range for its type or its role (a byte
	// over 255, a path index not below the arity, a node not below the
	// sector's node count, a layer outside 1..layers).
	ErrRange = errors.New("integer out of range")
	// ErrNotCanonical: a Poseidon domain whose little-endian value is not
	// below the BLS12-381 scalar field modulus r.
	ErrNotCanonical = errors.New("not a canonical BLS12-381 scalar")
	// ErrSHA254: a SHA-256 (tree D) domain with either of the top two bits
	// of its last byte set.
	ErrSHA254 = errors.New("SHA-254 domain has its top two bits set")
	// ErrVariant: an enum with no, several, an unknown, or (for the
	// registered proof's tree shape) the wrong variant.
	ErrVariant = errors.New("wrong enum variant")
	// ErrProofMismatch: parts of the input disagree about the registered
	// proof (registered_proof vs the vanilla_proofs key, the expected
	// proof, or the wrapper's SectorSize).
	ErrProofMismatch = errors.New("registered proof mismatch")
	// ErrTooLarge: the input exceeds the size bound.
	ErrTooLarge = errors.New("input too large")
)

// seg is one step of a JSON path: an object key, or (key == "") an index.
type seg struct {
	key string
	idx int
}

// jpath is a JSON path under construction; it is formatted only when an
// error is reported.
type jpath []seg

func (p *jpath) key(k string) { *p = append(*p, seg{key: k}) }
func (p *jpath) index(i int)  { *p = append(*p, seg{idx: i}) }
func (p *jpath) pop()         { *p = (*p)[:len(*p)-1] }

func (p jpath) String() string {
	var b strings.Builder
	for i, s := range p {
		if s.key == "" {
			b.WriteByte('[')
			b.WriteString(strconv.Itoa(s.idx))
			b.WriteByte(']')
			continue
		}
		if i > 0 {
			b.WriteByte('.')
		}
		b.WriteString(s.key)
	}
	return b.String()
}
