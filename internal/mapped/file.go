package mapped

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"unsafe"

	"github.com/c2flow/c2flow/internal/atomicfile"
)

// A file of sections is what a process maps instead of decoding: arrays
// in the very layout the program reads them in (this machine's byte
// order), each at an aligned offset, so a slice over the mapping is the
// array. Layout: the magic "C2FMAP\0\1"; u64 n; n bytes of a JSON header
// (its kind, the byte order, the caller's metadata, each section's offset
// and length); the sections, each at a multiple of Align; the SHA-256 of
// everything before it (32 bytes).
var fileMagic = [8]byte{'C', '2', 'F', 'M', 'A', 'P', 0, 1}

// Align is the alignment of every section: a cache line, more than any
// array's elements need.
const Align = 64

// maxHeader bounds the JSON header read from a file.
const maxHeader = 1 << 20

// ErrBadFile is wrapped when a file of sections is malformed, of another
// kind or byte order, or its digest does not match.
var ErrBadFile = errors.New("malformed mapped file")

type header struct {
	Kind     string          `json:"kind"`
	Order    string          `json:"order"`
	Meta     json.RawMessage `json:"meta"`
	Sections []section       `json:"sections"`
}

type section struct {
	Off int64 `json:"off"`
	Len int64 `json:"len"`
}

// order names this machine's byte order: files are read where written
// (or on a machine of the same order).
func order() string {
	x := uint16(1)
	if *(*byte)(unsafe.Pointer(&x)) == 1 {
		return "little"
	}
	return "big"
}

// Write writes a file of sections of the given kind at path, whole or
// not at all.
func Write(path, kind string, meta any, sections ...[]byte) error {
	m, err := json.Marshal(meta)
	if err != nil {
		return fmt.Errorf("write %s: metadata: %w", path, err)
	}
	h := header{Kind: kind, Order: order(), Meta: m, Sections: make([]section, len(sections))}
	// The offsets depend on the header's length, which depends on the
	// offsets: give the header room for offsets of any width, the first
	// section starting on a page.
	hb, err := headerBytes(&h, sections, 0)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	room := (16+len(hb)+32*len(sections)+256+4095)/4096*4096 - 16
	if hb, err = headerBytes(&h, sections, room); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return atomicfile.Write(path, func(w io.Writer) error {
		sum := sha256.New()
		mw := io.MultiWriter(w, sum)
		var n8 [8]byte
		binary.LittleEndian.PutUint64(n8[:], uint64(len(hb)))
		off := int64(0)
		for _, b := range [][]byte{fileMagic[:], n8[:], hb} {
			if _, err := mw.Write(b); err != nil {
				return err
			}
			off += int64(len(b))
		}
		var pad [Align]byte
		for i, s := range sections {
			if _, err := mw.Write(pad[:h.Sections[i].Off-off]); err != nil {
				return err
			}
			if _, err := mw.Write(s); err != nil {
				return err
			}
			off = h.Sections[i].Off + int64(len(s))
		}
		_, err := w.Write(sum.Sum(nil))
		return err
	})
}

// headerBytes lays the sections out after a header of room bytes (0: as
// long as it comes) and returns the header, padded with spaces to room.
func headerBytes(h *header, sections [][]byte, room int) ([]byte, error) {
	off := int64(16 + room)
	for i, s := range sections {
		off = (off + Align - 1) / Align * Align
		h.Sections[i] = section{Off: off, Len: int64(len(s))}
		off += int64(len(s))
	}
	b, err := json.Marshal(h)
	if err != nil {
		return nil, err
	}
	if room == 0 {
		return b, nil
	}
	if len(b) > room {
		return nil, fmt.Errorf("header of %d bytes past its room of %d", len(b), room)
	}
	return append(b, bytes.Repeat([]byte{' '}, room-len(b))...), nil
}

// File is a file of sections mapped read-only.
type File struct {
	region   *Region
	Meta     json.RawMessage
	Sections [][]byte
}

// Close unmaps the file: no section may be used after.
func (f *File) Close() error { return f.region.Close() }

// Size is the file's size: what it maps.
func (f *File) Size() int64 { return f.region.Size() }

// Open maps the file of sections at path, which must be of kind. Its
// digest is checked in full the first time a file is opened and again
// only when its stamp changes (stamps remembers; ctx ends that read).
func Open(ctx context.Context, path, kind string, stamps Stamps) (*File, error) {
	before, err := Stat(path)
	if err != nil {
		return nil, err
	}
	r, err := Map(path)
	if err != nil {
		return nil, err
	}
	f, err := parse(r.Bytes(), kind)
	if err != nil {
		r.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	f.region = r
	var ok bool
	if stamps.Get(path, &ok); !ok {
		if err := checkSum(ctx, r.Bytes()); err != nil {
			r.Close()
			return nil, fmt.Errorf("open %s: %w", path, err)
		}
		// A stamp that cannot be written costs the next open a hash.
		_ = stamps.Put(path, before, true)
	}
	return f, nil
}

func parse(b []byte, kind string) (*File, error) {
	if len(b) < 16+32 || !bytes.Equal(b[:8], fileMagic[:]) {
		return nil, fmt.Errorf("not a file of sections: %w", ErrBadFile)
	}
	n := binary.LittleEndian.Uint64(b[8:16])
	if n > maxHeader || 16+n+32 > uint64(len(b)) {
		return nil, fmt.Errorf("a header of %d bytes in a file of %d: %w", n, len(b), ErrBadFile)
	}
	var h header
	if err := json.Unmarshal(b[16:16+n], &h); err != nil {
		return nil, fmt.Errorf("header: %v: %w", err, ErrBadFile)
	}
	if h.Kind != kind {
		return nil, fmt.Errorf("a file of kind %q, want %q: %w", h.Kind, kind, ErrBadFile)
	}
	if h.Order != order() {
		return nil, fmt.Errorf("a file written in %s-endian order, this machine is %s-endian: %w", h.Order, order(), ErrBadFile)
	}
	end := int64(len(b) - 32)
	f := &File{Meta: h.Meta, Sections: make([][]byte, len(h.Sections))}
	for i, s := range h.Sections {
		if s.Off < int64(16+n) || s.Off%Align != 0 || s.Len < 0 || s.Off > end || s.Len > end-s.Off {
			return nil, fmt.Errorf("section %d at %d of %d bytes in a file of %d: %w", i, s.Off, s.Len, len(b), ErrBadFile)
		}
		f.Sections[i] = b[s.Off : s.Off+s.Len : s.Off+s.Len]
	}
	return f, nil
}

// checkSum compares the SHA-256 of b's body with its trailer.
func checkSum(ctx context.Context, b []byte) error {
	body := b[:len(b)-32]
	h := sha256.New()
	const step = 64 << 20
	for off := 0; off < len(body); off += step {
		if err := ctx.Err(); err != nil {
			return err
		}
		h.Write(body[off:min(off+step, len(body))])
	}
	if !bytes.Equal(h.Sum(nil), b[len(b)-32:]) {
		return fmt.Errorf("its digest does not match its content: %w", ErrBadFile)
	}
	return nil
}

// Bytes views s's elements as bytes (no copy): a section to write.
func Bytes[T any](s []T) []byte {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), len(s)*int(unsafe.Sizeof(s[0])))
}

// Slice views a section as n elements of T (no copy); the section must
// hold exactly n of them.
func Slice[T any](b []byte, n int) ([]T, error) {
	var zero T
	size := int(unsafe.Sizeof(zero))
	if n < 0 || len(b) != n*size {
		return nil, fmt.Errorf("a section of %d bytes for %d elements of %d: %w", len(b), n, size, ErrBadFile)
	}
	if n == 0 {
		return nil, nil
	}
	if uintptr(unsafe.Pointer(unsafe.SliceData(b)))%unsafe.Alignof(zero) != 0 {
		return nil, fmt.Errorf("a section misaligned for its elements: %w", ErrBadFile)
	}
	return unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(b))), n), nil
}

// Touch reads one byte of every page of the file, as a proof that reads
// every point does, and returns their sum (so the reads are not
// optimized away): the pages come into this process's resident set,
// shared with every process that maps the file.
func (f *File) Touch() int64 {
	b := f.region.Bytes()
	var s int64
	for i := 0; i < len(b); i += 4096 {
		s += int64(b[i])
	}
	return s
}
