package packed

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/bits"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
)

// headerBytes is the encoding's header: the element count and the count
// of others.
const headerBytes = 16

// ioChunk is the buffer a stream is read and written through: the
// encoding never exists whole in memory beside the vector.
const ioChunk = 1 << 16

// WriteTo writes the vector's encoding to w: u64 element count, u64
// others count (little-endian), then two u64 words per block of 64
// elements (nonzero bits, other bits), then each other as 32 canonical
// big-endian bytes. It streams: nothing the size of the vector is
// allocated.
func (v *Vector) WriteTo(w io.Writer) (int64, error) {
	bw := bufio.NewWriterSize(w, ioChunk)
	var n int64
	put := func(p []byte) error {
		k, err := bw.Write(p)
		n += int64(k)
		return err
	}
	var b8 [8]byte
	for _, x := range []uint64{uint64(v.n), uint64(v.nOthers)} {
		binary.LittleEndian.PutUint64(b8[:], x)
		if err := put(b8[:]); err != nil {
			return n, err
		}
	}
	for _, x := range v.words {
		binary.LittleEndian.PutUint64(b8[:], x)
		if err := put(b8[:]); err != nil {
			return n, err
		}
	}
	for i := range v.nOthers {
		b := v.other(i).Bytes()
		if err := put(b[:]); err != nil {
			return n, err
		}
	}
	return n, bw.Flush()
}

// ReadVector reads a vector WriteTo wrote, of at most maxLen elements (a
// longer one is refused before anything its size is allocated). It checks
// the structure: others only where an element is nonzero, no bits past
// the end, as many others as declared, each a canonical field element.
// It reads exactly the encoding from r, nothing after it; r should be
// buffered (a bufio.Reader), as it is read in small pieces.
func ReadVector(r io.Reader, maxLen int) (*Vector, error) {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%s: %w", fmt.Sprintf(format, args...), ErrFormat)
	}
	short := func(what string, err error) error {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return bad("truncated in the %s", what)
		}
		return fmt.Errorf("packed vector: reading the %s: %w", what, err)
	}
	var hdr [headerBytes]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return nil, short("header", err)
	}
	n, nOthers := binary.LittleEndian.Uint64(hdr[:8]), binary.LittleEndian.Uint64(hdr[8:])
	if n > uint64(min(maxLen, MaxLen)) {
		return nil, bad("%d elements, at most %d expected", n, min(maxLen, MaxLen))
	}
	if nOthers > n {
		return nil, bad("%d others in %d elements", nOthers, n)
	}
	blocks := (int(n) + 63) / 64
	v := &Vector{n: int(n), words: make([]uint64, 2*blocks), rank: make([]uint32, blocks)}
	buf := make([]byte, ioChunk)
	for i := 0; i < len(v.words); {
		k := min(len(v.words)-i, ioChunk/8)
		if _, err := io.ReadFull(r, buf[:8*k]); err != nil {
			return nil, short("bits", err)
		}
		for j := 0; j < k; j++ {
			v.words[i+j] = binary.LittleEndian.Uint64(buf[8*j:])
		}
		i += k
	}
	var seen uint64
	for b := 0; b < blocks; b++ {
		nz, other := v.words[2*b], v.words[2*b+1]
		if other&^nz != 0 {
			return nil, bad("block %d: an other that is zero", b)
		}
		if b == blocks-1 && n%64 != 0 && nz>>(n%64) != 0 {
			return nil, bad("bits past the last element")
		}
		v.rank[b] = uint32(seen)
		seen += uint64(bits.OnesCount64(other))
	}
	if seen != nOthers {
		return nil, bad("%d others marked, %d declared", seen, nOthers)
	}
	for rest := int(nOthers); rest > 0; {
		c := make([]fr.Element, min(rest, otherChunk))
		for i := range c {
			var b [fr.Bytes]byte
			if _, err := io.ReadFull(r, b[:]); err != nil {
				return nil, short("field elements", err)
			}
			if err := c[i].SetBytesCanonical(b[:]); err != nil {
				return nil, bad("field element %d: %v", v.nOthers+i, err)
			}
		}
		v.others = append(v.others, c)
		v.nOthers += len(c)
		rest -= len(c)
	}
	return v, nil
}
