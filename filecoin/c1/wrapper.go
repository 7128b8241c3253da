package c1

import (
	"bufio"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/c2flow/c2flow/filecoin/proofs"
	"github.com/c2flow/c2flow/internal/clip"
)

// Commit2In is lotus-bench's C2 input (cmd/lotus-bench main.go), also read
// by curio's cuzk (extern/cuzk/cuzk-core/src/prover.rs C1OutputWrapper).
// encoding/json writes Phase1Out, the raw C1 JSON, in base64. This package
// reads and writes the wrapper without materialising Phase1Out; the struct
// documents the format.
type Commit2In struct {
	SectorNum  int64
	Phase1Out  []byte
	SectorSize uint64
}

// wrapperFields are Commit2In's fields in declaration order.
var wrapperFields = []string{"SectorNum", "Phase1Out", "SectorSize"}

// sniffSize is how far ahead Decode looks for the first key.
const sniffSize = 64 << 10

// sniffWrapped reports whether the buffered input is an object whose
// first key is a Commit2In field. It consumes nothing.
func sniffWrapped(br *bufio.Reader) bool {
	buf, _ := br.Peek(sniffSize) // a short read leaves what there is
	i := skipSpace(buf, 0)
	if i >= len(buf) || buf[i] != '{' {
		return false
	}
	i = skipSpace(buf, i+1)
	if i >= len(buf) || buf[i] != '"' {
		return false
	}
	for _, f := range wrapperFields {
		if k := `"` + f + `"`; len(buf)-i >= len(k) && string(buf[i:i+len(k)]) == k {
			return true
		}
	}
	return false
}

// phase1Error marks an error in reading Phase1Out's JSON string or its
// base64, as opposed to in the JSON it carries.
type phase1Error struct {
	err    error
	syntax bool
	off    int64
}

func (e *phase1Error) Error() string { return e.err.Error() }
func (e *phase1Error) Unwrap() error { return e.err }

func (e *phase1Error) toError() *Error {
	if e.syntax {
		return &Error{Path: "Phase1Out", Offset: e.off, Err: fmt.Errorf("%w: %v", ErrSyntax, e.err)}
	}
	return &Error{Path: "Phase1Out", Offset: e.off, Err: fmt.Errorf("read: %w", e.err)}
}

// wscanner reads the Commit2In wrapper by hand, so that Phase1Out can be
// streamed through a base64 decoder instead of becoming a Go string.
type wscanner struct {
	r   *bufio.Reader
	off int64 // bytes consumed
}

func (s *wscanner) fail(path string, kind error, format string, args ...any) error {
	return &Error{Path: path, Offset: s.off, Err: fmt.Errorf("%w: "+format, append([]any{kind}, args...)...)}
}

// readErr converts a read error into an *Error for path.
func (s *wscanner) readErr(path string, err error) error {
	switch {
	case errors.Is(err, ErrTooLarge):
		return &Error{Path: path, Offset: s.off, Err: err}
	case err == io.EOF || errors.Is(err, io.ErrUnexpectedEOF):
		return s.fail(path, ErrSyntax, "unexpected end of input")
	}
	return &Error{Path: path, Offset: s.off, Err: fmt.Errorf("read: %w", err)}
}

func (s *wscanner) byte(path string) (byte, error) {
	c, err := s.r.ReadByte()
	if err != nil {
		return 0, s.readErr(path, err)
	}
	s.off++
	return c, nil
}

// peek skips whitespace and returns the next byte without consuming it;
// io.EOF at the end of input.
func (s *wscanner) peek() (byte, error) {
	for {
		c, err := s.r.ReadByte()
		if err != nil {
			return 0, err
		}
		if c != ' ' && c != '\t' && c != '\r' && c != '\n' {
			_ = s.r.UnreadByte()
			return c, nil
		}
		s.off++
	}
}

func (s *wscanner) expect(path string, want byte) error {
	c, err := s.peek()
	if err != nil {
		return s.readErr(path, err)
	}
	if c != want {
		return s.fail(path, ErrSyntax, "got %q, want %q", c, want)
	}
	s.off++
	_, err = s.r.ReadByte()
	return err
}

// key reads an object key (a string of at most 64 plain characters).
func (s *wscanner) key() (string, error) {
	if err := s.expect("", '"'); err != nil {
		return "", err
	}
	var k []byte
	for {
		c, err := s.byte("")
		if err != nil {
			return "", err
		}
		if c == '"' {
			return string(k), nil
		}
		if c < 0x20 || c == '\\' || len(k) >= 64 {
			return "", s.fail(clip.Head(string(k), 64), ErrUnknownField, "Commit2In has fields %s", strings.Join(wrapperFields, ", "))
		}
		k = append(k, c)
	}
}

// integer reads a JSON number that must be an integer.
func (s *wscanner) integer(path string) (string, error) {
	var lit []byte
	for {
		c, err := s.r.ReadByte()
		if err == io.EOF {
			break
		}
		if err != nil {
			return "", s.readErr(path, err)
		}
		if !(c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E' || (c >= '0' && c <= '9')) {
			_ = s.r.UnreadByte()
			break
		}
		s.off++
		lit = append(lit, c)
		if len(lit) > 32 {
			return "", s.fail(path, ErrRange, "number too long")
		}
	}
	digits := lit
	if len(digits) > 0 && digits[0] == '-' {
		digits = digits[1:]
	}
	switch {
	case len(lit) == 0:
		c, _ := s.peek()
		return "", s.fail(path, ErrType, "got %q, want an integer", c)
	case len(digits) == 0 || digits[0] < '0' || digits[0] > '9' || (digits[0] == '0' && len(digits) > 1 && digits[1] >= '0' && digits[1] <= '9'):
		return "", s.fail(path, ErrSyntax, "malformed number %q", lit)
	}
	for _, c := range digits {
		if c < '0' || c > '9' {
			return "", s.fail(path, ErrType, "%q is not an integer", lit)
		}
	}
	return string(lit), nil
}

// decodeWrapped parses a Commit2In wrapper from br, decoding Phase1Out as
// a raw C1 bounded by rawLimit.
func decodeWrapped(br *bufio.Reader, cfg *config, rawLimit int64) (*Artifact, error) {
	s := &wscanner{r: br}
	a := &Artifact{Wrapped: true}
	if err := s.expect("", '{'); err != nil {
		return nil, err
	}
	var seen [3]bool
	for first := true; ; first = false {
		c, err := s.peek()
		if err != nil {
			return nil, s.readErr("", err)
		}
		if c == '}' && first {
			_, _ = s.r.ReadByte()
			s.off++
			break
		}
		k, err := s.key()
		if err != nil {
			return nil, err
		}
		i := slices.Index(wrapperFields, k)
		if i < 0 {
			return nil, s.fail(k, ErrUnknownField, "Commit2In has fields %s", strings.Join(wrapperFields, ", "))
		}
		if seen[i] {
			return nil, s.fail(k, ErrDuplicateField, "%q appears twice in Commit2In", k)
		}
		seen[i] = true
		if err := s.expect(k, ':'); err != nil {
			return nil, err
		}
		if _, err := s.peek(); err != nil {
			return nil, s.readErr(k, err)
		}
		switch i {
		case 0:
			lit, err := s.integer(k)
			if err != nil {
				return nil, err
			}
			n, err := strconv.ParseInt(lit, 10, 64)
			if err != nil || n < 0 {
				return nil, s.fail(k, ErrRange, "%s, want a sector number 0 to %d", lit, int64(1<<63-1))
			}
			a.SectorNum = n
		case 1:
			c1, err := s.phase1Out(cfg, rawLimit)
			if err != nil {
				return nil, err
			}
			a.C1 = c1
		case 2:
			lit, err := s.integer(k)
			if err != nil {
				return nil, err
			}
			n, err := strconv.ParseUint(lit, 10, 64)
			if err != nil {
				return nil, s.fail(k, ErrRange, "%s, want a u64 sector size", lit)
			}
			a.SectorSize = n
		}
		c, err = s.peek()
		if err != nil {
			return nil, s.readErr("", err)
		}
		s.off++
		_, _ = s.r.ReadByte()
		if c == '}' {
			break
		}
		if c != ',' {
			return nil, s.fail("", ErrSyntax, "got %q after %s, want ',' or '}'", c, k)
		}
	}
	switch _, err := s.peek(); {
	case err == io.EOF:
	case err != nil:
		return nil, s.readErr("", err)
	default:
		return nil, s.fail("", ErrSyntax, "data after the Commit2In object")
	}
	for i, f := range wrapperFields {
		if !seen[i] {
			return nil, s.fail(f, ErrMissingField, "Commit2In lacks %q", f)
		}
	}
	info, _ := proofs.Lookup(a.C1.RegisteredProof)
	if a.SectorSize != info.SectorSize {
		return nil, &Error{Path: "SectorSize", Offset: -1, Err: fmt.Errorf("%w: %d, but registered_proof %s has %d-byte sectors",
			ErrProofMismatch, a.SectorSize, info.Name, info.SectorSize)}
	}
	return a, nil
}

// phase1Out decodes the Phase1Out string: base64 of the raw C1 JSON.
func (s *wscanner) phase1Out(cfg *config, rawLimit int64) (*SealCommitPhase1Output, error) {
	c, _ := s.peek()
	if c != '"' {
		lit := "a non-string"
		if c == 'n' {
			lit = "null"
		}
		return nil, s.fail("Phase1Out", ErrType, "got %s, want the C1 JSON in base64", lit)
	}
	_, _ = s.r.ReadByte()
	s.off++
	str := &jsonString{s: s}
	b64 := &taggedReader{r: base64.NewDecoder(base64.StdEncoding, str), s: s}
	inner := &limitReader{r: b64, limit: rawLimit}
	c1, err := decodeRaw(inner, inner, cfg, "Phase1Out")
	if err != nil {
		return nil, err
	}
	if !str.done { // decodeRaw read to EOF, which only the closing quote gives
		return nil, s.fail("Phase1Out", ErrSyntax, "unterminated string")
	}
	return c1, nil
}

// taggedReader marks errors from below the C1 JSON as phase1Errors.
type taggedReader struct {
	r io.Reader
	s *wscanner
}

func (t *taggedReader) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	if err != nil && err != io.EOF && !errors.Is(err, ErrTooLarge) {
		var ce base64.CorruptInputError
		var pe *phase1Error
		switch {
		case errors.As(err, &pe):
		case errors.As(err, &ce):
			err = &phase1Error{err: fmt.Errorf("invalid base64: %w", err), syntax: true, off: t.s.off}
		default:
			err = &phase1Error{err: err, off: t.s.off}
		}
	}
	return n, err
}

// jsonString reads the contents of a JSON string whose opening quote has
// been consumed, unescaping, and returns io.EOF at the closing quote.
type jsonString struct {
	s       *wscanner
	done    bool
	pending []byte // unescaped bytes not yet returned
	utf     [utf8.UTFMax]byte
}

func (j *jsonString) syntax(format string, args ...any) error {
	return &phase1Error{err: fmt.Errorf(format, args...), syntax: true, off: j.s.off}
}

func (j *jsonString) Read(p []byte) (int, error) {
	n := copy(p, j.pending)
	j.pending = j.pending[n:]
	for n < len(p) && !j.done {
		r := j.s.r
		if r.Buffered() == 0 {
			if _, err := r.Peek(1); err != nil {
				if err == io.EOF {
					return n, j.syntax("unterminated string")
				}
				return n, err
			}
		}
		buf, _ := r.Peek(min(r.Buffered(), len(p)-n))
		i := 0
		for i < len(buf) && buf[i] != '"' && buf[i] != '\\' && buf[i] >= 0x20 {
			i++
		}
		n += copy(p[n:], buf[:i])
		_, _ = r.Discard(i)
		j.s.off += int64(i)
		if i == len(buf) {
			continue
		}
		switch c := buf[i]; {
		case c == '"':
			_, _ = r.Discard(1)
			j.s.off++
			j.done = true
		case c < 0x20:
			return n, j.syntax("control character %#02x in string", c)
		default:
			b, err := j.escape()
			if err != nil {
				return n, err
			}
			k := copy(p[n:], b)
			n += k
			j.pending = b[k:]
			if len(j.pending) > 0 {
				return n, nil
			}
		}
	}
	if n == 0 && j.done {
		return 0, io.EOF
	}
	return n, nil
}

// escape consumes one backslash escape and returns its bytes.
func (j *jsonString) escape() ([]byte, error) {
	var esc [6]byte // \ and up to \uXXXX
	r := j.s.r
	if _, err := io.ReadFull(r, esc[:2]); err != nil {
		return nil, j.syntax("truncated escape")
	}
	j.s.off += 2
	switch esc[1] {
	case '"', '\\', '/':
		return []byte{esc[1]}, nil
	case 'b':
		return []byte{'\b'}, nil
	case 'f':
		return []byte{'\f'}, nil
	case 'n':
		return []byte{'\n'}, nil
	case 'r':
		return []byte{'\r'}, nil
	case 't':
		return []byte{'\t'}, nil
	case 'u':
		if _, err := io.ReadFull(r, esc[2:6]); err != nil {
			return nil, j.syntax("truncated \\u escape")
		}
		j.s.off += 4
		v, err := strconv.ParseUint(string(esc[2:6]), 16, 16)
		if err != nil {
			return nil, j.syntax("invalid escape %q", esc[:6])
		}
		k := utf8.EncodeRune(j.utf[:], rune(v))
		return j.utf[:k], nil
	}
	return nil, j.syntax("invalid escape %q", esc[:2])
}
