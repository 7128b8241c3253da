package prover

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"io"
	"time"

	"github.com/c2flow/c2flow/internal/iocount"
	"github.com/c2flow/c2flow/prover/packed"
)

// solutionMagic starts a serialized solution (version 2: the packed
// assignment; version 1 held dense W, a, b, c).
const solutionMagic = "C2FWIT02"

// maxIDBytes bounds a spilled solution's partition and job names.
const maxIDBytes = 512

// ErrBadSpill is wrapped by the errors of a spilled solution that is
// damaged, truncated or not one.
var ErrBadSpill = errors.New("bad spilled witness")

// WriteTo streams the solution's encoding to w, for a witness spilled
// between a synthesis host and a device host: the magic, the partition
// and job names, the synthesis time, the packed assignment
// (packed.Vector.WriteTo), then a SHA-256 of all that precedes it, so a
// torn or corrupt spill is detected. Nothing the size of the assignment
// is allocated.
func (s *Solution) WriteTo(w io.Writer) (int64, error) {
	if s.W == nil {
		return 0, fmt.Errorf("solution %s: already consumed", s.Partition)
	}
	if len(s.Partition) > maxIDBytes || len(s.Job) > maxIDBytes {
		return 0, fmt.Errorf("solution %s: names longer than %d bytes", s.Partition, maxIDBytes)
	}
	h := sha256.New()
	cw := &iocount.Writer{W: io.MultiWriter(w, h)}
	var hdr bytes.Buffer
	hdr.WriteString(solutionMagic)
	for _, name := range []string{s.Partition, s.Job} {
		binary.Write(&hdr, binary.BigEndian, uint32(len(name)))
		hdr.WriteString(name)
	}
	binary.Write(&hdr, binary.BigEndian, s.SynthTime.Nanoseconds())
	if _, err := cw.Write(hdr.Bytes()); err != nil {
		return cw.N, fmt.Errorf("spill %s: %w", s.Partition, err)
	}
	if _, err := s.W.WriteTo(cw); err != nil {
		return cw.N, fmt.Errorf("spill %s: %w", s.Partition, err)
	}
	n, err := w.Write(h.Sum(nil))
	if err != nil {
		return cw.N + int64(n), fmt.Errorf("spill %s: %w", s.Partition, err)
	}
	return cw.N + int64(n), nil
}

// EncodedBytes is the size of the solution's encoding (WriteTo).
func (s *Solution) EncodedBytes() int64 {
	return int64(len(solutionMagic)+4+len(s.Partition)+4+len(s.Job)+8+sha256.Size) + s.W.EncodedBytes()
}

// hashReader hashes what is read through it.
type hashReader struct {
	r io.Reader
	h hash.Hash
}

func (h hashReader) Read(p []byte) (int, error) {
	n, err := h.r.Read(p)
	h.h.Write(p[:n])
	return n, err
}

// ReadSolution reads a solution WriteTo wrote, of exactly the circuit's
// wires (a longer one is refused before its memory is allocated), from a stream
// it reads to its end. A wrong checksum, magic or shape, a truncated
// stream or trailing bytes wrap ErrBadSpill: the partition is synthesized
// again, never proved from a damaged witness. The checksum is checked
// before the solution is returned; the stream is never held whole.
func ReadSolution(r io.Reader, wires int) (*Solution, error) {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("spilled witness: %s: %w", fmt.Sprintf(format, args...), ErrBadSpill)
	}
	short := func(err error) error {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return bad("truncated")
		}
		return fmt.Errorf("spilled witness: read: %w", err) // the store's trouble: retried
	}
	h := sha256.New()
	br := bufio.NewReaderSize(r, 1<<16)
	// Parsing reads exactly the bytes it consumes through the hash; the
	// checksum after them is read from br directly.
	in := hashReader{r: br, h: h}
	magic := make([]byte, len(solutionMagic))
	if _, err := io.ReadFull(in, magic); err != nil {
		return nil, short(err)
	}
	if string(magic) != solutionMagic {
		return nil, bad("not a c2flow witness of this version (magic %q)", magic)
	}
	var names [2]string
	for i := range names {
		var n uint32
		if err := binary.Read(in, binary.BigEndian, &n); err != nil {
			return nil, short(err)
		}
		if n > maxIDBytes {
			return nil, bad("a name of %d bytes", n)
		}
		b := make([]byte, n)
		if _, err := io.ReadFull(in, b); err != nil {
			return nil, short(err)
		}
		names[i] = string(b)
	}
	var synthNS int64
	if err := binary.Read(in, binary.BigEndian, &synthNS); err != nil {
		return nil, short(err)
	}
	w, err := packed.ReadVector(in, wires)
	switch {
	case errors.Is(err, packed.ErrFormat):
		return nil, bad("%v", err)
	case err != nil:
		return nil, fmt.Errorf("spilled witness: %w", err)
	case w.Len() != wires:
		return nil, bad("%d wires, the circuit has %d", w.Len(), wires)
	}
	sum := make([]byte, sha256.Size)
	if _, err := io.ReadFull(br, sum); err != nil {
		return nil, short(err)
	}
	if !bytes.Equal(sum, h.Sum(nil)) {
		return nil, bad("checksum mismatch")
	}
	if _, err := br.ReadByte(); err != io.EOF {
		return nil, bad("trailing data")
	}
	return &Solution{Partition: names[0], Job: names[1], W: w, SynthTime: time.Duration(synthNS)}, nil
}
