package params

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"iter"

	"github.com/consensys/gnark-crypto/ecc"
	curve "github.com/consensys/gnark-crypto/ecc/bls12-381"
	groth16bls "github.com/consensys/gnark/backend/groth16/bls12-381"
	csbls "github.com/consensys/gnark/constraint/bls12-381"
)

// Key files are gnark's raw (uncompressed) serializations of a Groth16
// ProvingKey and VerifyingKey over BLS12-381, as written by WriteRawTo in
// gnark v0.14.0 (backend/groth16/bls12-381/marshal.go) with the point and
// slice encodings of gnark-crypto v0.19.0 (ecc/bls12-381/marshal.go).
//
// gnark's decoder trusts the lengths it reads: one flipped byte in a
// length asks it for whatever the length says (hundreds of GiB: a fatal
// out-of-memory error that no recover() catches), and other flips panic.
// So a key file is read in one pass by two readers in step: a walker that
// knows the format checks every length against the bytes left in the file,
// every point's encoding flags and the counts the prover relies on, and
// hashes the file; gnark's decoder is handed only bytes the walker has
// already checked. A panic that still escapes the decoder becomes an error.

// ErrMalformed is wrapped by the errors of a key file that is not a
// well-formed key for its circuit.
var ErrMalformed = errors.New("malformed key file")

const (
	g1Bytes    = curve.SizeOfG1AffineUncompressed // 96
	g2Bytes    = curve.SizeOfG2AffineUncompressed // 192
	frBytes    = 32
	chunkBytes = 1 << 20 // checked bytes are handed to the decoder in chunks of this size
	// flag bits in a point's first byte (gnark-crypto ecc/bls12-381/marshal.go mMask...)
	flagMask              = 0b111 << 5
	flagUncompressed      = 0b000 << 5
	flagUncompressedInfty = 0b010 << 5
)

// keyShape is what the compiled circuit says its proving key holds.
type keyShape struct {
	Cardinality uint64 // FFT domain: the number of constraints rounded up to a power of two
	Wires       uint64 // public + secret + internal variables
}

func shapeOf(ccs *csbls.R1CS) keyShape {
	return keyShape{
		Cardinality: ecc.NextPowerOfTwo(uint64(ccs.GetNbConstraints())),
		Wires:       uint64(ccs.GetNbPublicVariables() + ccs.GetNbSecretVariables() + ccs.GetNbInternalVariables()),
	}
}

// readPK decodes a proving-key file of size bytes for a circuit of the
// given shape, and returns the key and the file's SHA-256 (hex). The hash
// covers the whole file even when the file is malformed; on a read error
// it is empty.
func readPK(r io.Reader, size int64, s keyShape) (*groth16bls.ProvingKey, string, error) {
	pk := new(groth16bls.ProvingKey)
	sum, err := readKey(r, size, func(w *walker) error { return w.provingKey(s) }, pk.UnsafeReadFrom)
	if err != nil {
		return nil, sum, err
	}
	return pk, sum, nil
}

// readVK is readPK for a verifying key.
func readVK(r io.Reader, size int64) (*groth16bls.VerifyingKey, string, error) {
	vk := new(groth16bls.VerifyingKey)
	sum, err := readKey(r, size, (*walker).verifyingKey, vk.UnsafeReadFrom)
	if err != nil {
		return nil, sum, err
	}
	return vk, sum, nil
}

// readKey runs walk over the size bytes of r and decode over the bytes
// walk has checked. Errors: a read error as is; a file walk rejects, a
// decoder error or panic, or a decoder that stops short, wrap ErrMalformed
// (the walker's reason first: the decoder's failure follows from it).
func readKey(r io.Reader, size int64, walk func(*walker) error, decode func(io.Reader) (int64, error)) (sum string, err error) {
	w := &walker{r: r, size: size, h: sha256.New(), buf: make([]byte, 0, min(chunkBytes, max(size, 0)))}
	var werr error
	next, stop := iter.Pull(func(yield func([]byte) bool) {
		w.yield = yield
		werr = walk(w)
		if werr == nil {
			werr = w.flush()
		}
		if werr != nil && w.ioErr == nil { // hash the rest: the digest names the whole file
			if _, err := io.Copy(w.h, w.r); err != nil {
				w.ioErr = err
			}
		}
	})
	defer stop()
	cr := &checkedReader{next: next}
	n, derr := guard(func() (int64, error) { return decode(cr) })
	// Let the walker finish the file (the decoder may have stopped early).
	if _, err := guard(func() (int64, error) { return io.Copy(io.Discard, cr) }); err != nil && derr == nil {
		derr = err
	}
	stop()
	if w.ioErr != nil {
		return "", fmt.Errorf("read at byte %d of %d: %w", w.off, size, w.ioErr)
	}
	sum = hex.EncodeToString(w.h.Sum(nil))
	switch {
	case werr != nil && !errors.Is(werr, errStopped):
		return sum, werr
	case derr != nil:
		return sum, fmt.Errorf("%w: decode: %v", ErrMalformed, derr)
	case n != size:
		return sum, fmt.Errorf("%w: the decoder read %d of its %d bytes", ErrMalformed, n, size)
	}
	return sum, nil
}

// guard runs f, turning a panic into an error.
func guard(f func() (int64, error)) (n int64, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic: %v", p)
		}
	}()
	return f()
}

// checkedReader hands on the chunks a walker has checked. Read fills p
// unless the checked bytes end (gnark's domain decoder does not use
// io.ReadFull).
type checkedReader struct {
	next func() ([]byte, bool)
	cur  []byte
	done bool
}

func (c *checkedReader) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		if len(c.cur) == 0 {
			if c.done {
				break
			}
			b, ok := c.next()
			if !ok {
				c.done = true
				break
			}
			c.cur = b
		}
		k := copy(p[n:], c.cur)
		c.cur = c.cur[k:]
		n += k
	}
	if n == 0 && len(p) > 0 {
		return 0, io.EOF
	}
	return n, nil
}

// errStopped: the consumer stopped taking chunks.
var errStopped = errors.New("reader stopped")

// walker reads a key file, checks its structure and hashes it. Bytes are
// checked as soon as they are read and handed on (yield) only after, so
// the decoder never sees a length the walker has not bounded.
type walker struct {
	r     io.Reader
	off   int64 // bytes read
	size  int64
	h     hash.Hash
	buf   []byte // checked bytes not yet handed on
	yield func([]byte) bool
	ioErr error
}

func (w *walker) left() int64 { return w.size - w.off }

func (w *walker) malformed(format string, a ...any) error {
	return fmt.Errorf("%w: %s", ErrMalformed, fmt.Sprintf(format, a...))
}

func (w *walker) flush() error {
	if len(w.buf) == 0 {
		return nil
	}
	if !w.yield(w.buf) {
		return errStopped
	}
	w.buf = w.buf[:0]
	return nil
}

// take reads the next n <= chunkBytes bytes of field what.
func (w *walker) take(n int, what string) ([]byte, error) {
	if int64(n) > w.left() {
		return nil, w.malformed("%s: %d bytes at offset %d, but the file ends %d bytes later", what, n, w.off, w.left())
	}
	if len(w.buf)+n > cap(w.buf) {
		if err := w.flush(); err != nil {
			return nil, err
		}
		if n > cap(w.buf) {
			w.buf = make([]byte, 0, n)
		}
	}
	b := w.buf[len(w.buf) : len(w.buf)+n]
	if _, err := io.ReadFull(w.r, b); err != nil {
		w.ioErr = err
		return nil, err
	}
	w.h.Write(b)
	w.buf = w.buf[:len(w.buf)+n]
	w.off += int64(n)
	return b, nil
}

func (w *walker) u32(what string) (uint32, error) {
	b, err := w.take(4, what)
	if err != nil {
		return 0, err
	}
	return binary.BigEndian.Uint32(b), nil
}

func (w *walker) u64(what string) (uint64, error) {
	b, err := w.take(8, what)
	if err != nil {
		return 0, err
	}
	return binary.BigEndian.Uint64(b), nil
}

// flags checks that b, points of size bytes each starting at offset at,
// are in raw encoding (key files are written with WriteRawTo).
func (w *walker) flags(b []byte, size int, at int64, what string) error {
	for i := 0; i < len(b); i += size {
		switch b[i] & flagMask {
		case flagUncompressed, flagUncompressedInfty:
		default:
			return w.malformed("%s: the point at offset %d is not in raw encoding (flag bits %03b)", what, at+int64(i), b[i]>>5)
		}
	}
	return nil
}

func (w *walker) point(size int, what string) error {
	at := w.off
	b, err := w.take(size, what)
	if err != nil {
		return err
	}
	return w.flags(b, size, at, what)
}

// points reads a slice of points: a uint32 count, then the points.
func (w *walker) points(size int, what string) (uint64, error) {
	n, err := w.u32(what + " length")
	if err != nil {
		return 0, err
	}
	if need := uint64(n) * uint64(size); need > uint64(w.left()) {
		return 0, w.malformed("%s: %d points (%d bytes) at offset %d, but the file ends %d bytes later", what, n, need, w.off, w.left())
	}
	per := chunkBytes / size
	for i := 0; i < int(n); {
		k := min(per, int(n)-i)
		at := w.off
		b, err := w.take(k*size, what)
		if err != nil {
			return 0, err
		}
		if err := w.flags(b, size, at, what); err != nil {
			return 0, err
		}
		i += k
	}
	return uint64(n), nil
}

// bools reads n booleans, one byte each (0 or 1), and counts the true ones.
func (w *walker) bools(n uint64, what string) (uint64, error) {
	if n > uint64(w.left()) {
		return 0, w.malformed("%s: %d bytes at offset %d, but the file ends %d bytes later", what, n, w.off, w.left())
	}
	var count uint64
	for n > 0 {
		k := int(min(n, chunkBytes))
		at := w.off
		b, err := w.take(k, what)
		if err != nil {
			return 0, err
		}
		for i, v := range b {
			switch v {
			case 0:
			case 1:
				count++
			default:
				return 0, w.malformed("%s: byte %d at offset %d is not a boolean", what, v, at+int64(i))
			}
		}
		n -= uint64(k)
	}
	return count, nil
}

func (w *walker) end() error {
	if w.left() != 0 {
		return w.malformed("%d bytes after the key at offset %d", w.left(), w.off)
	}
	return nil
}

// domain reads the FFT domain (gnark-crypto ecc/bls12-381/fr/fft/domain.go
// WriteTo): its size, five field elements (checked canonical by the
// decoder) and the precompute flag. Its size must be the circuit's: the
// decoder precomputes tables of that size.
func (w *walker) domain(cardinality uint64) error {
	n, err := w.u64("FFT domain size")
	if err != nil {
		return err
	}
	if n != cardinality {
		return w.malformed("FFT domain of %d points, the circuit's is %d", n, cardinality)
	}
	if _, err := w.take(5*frBytes, "FFT domain elements"); err != nil {
		return err
	}
	b, err := w.take(1, "FFT domain precompute flag")
	if err != nil {
		return err
	}
	if b[0] > 1 {
		return w.malformed("FFT domain precompute flag %d is not a boolean", b[0])
	}
	return nil
}

// provingKey walks a ProvingKey (gnark backend/groth16/bls12-381/marshal.go
// writeTo, raw) and checks the counts the prover indexes by.
func (w *walker) provingKey(s keyShape) error {
	if err := w.domain(s.Cardinality); err != nil {
		return err
	}
	for _, f := range []string{"G1.Alpha", "G1.Beta", "G1.Delta"} {
		if err := w.point(g1Bytes, f); err != nil {
			return err
		}
	}
	var n [4]uint64
	for i, f := range []string{"G1.A", "G1.B", "G1.Z", "G1.K"} {
		var err error
		if n[i], err = w.points(g1Bytes, f); err != nil {
			return err
		}
	}
	nA, nB, nZ := n[0], n[1], n[2]
	for _, f := range []string{"G2.Beta", "G2.Delta"} {
		if err := w.point(g2Bytes, f); err != nil {
			return err
		}
	}
	nB2, err := w.points(g2Bytes, "G2.B")
	if err != nil {
		return err
	}
	wires, err := w.u64("wire count")
	if err != nil {
		return err
	}
	if wires != s.Wires {
		return w.malformed("%d wires, the circuit has %d", wires, s.Wires)
	}
	infA, err := w.u64("InfinityA count")
	if err != nil {
		return err
	}
	infB, err := w.u64("InfinityB count")
	if err != nil {
		return err
	}
	cntA, err := w.bools(wires, "InfinityA")
	if err != nil {
		return err
	}
	cntB, err := w.bools(wires, "InfinityB")
	if err != nil {
		return err
	}
	switch {
	case cntA != infA || cntB != infB:
		return w.malformed("infinity counts %d and %d, the flags count %d and %d", infA, infB, cntA, cntB)
	case nA != wires-infA || nB != wires-infB || nB2 != nB:
		return w.malformed("%d A, %d B and %d G2.B points for %d wires with %d and %d at infinity", nA, nB, nB2, wires, infA, infB)
	case nZ != s.Cardinality-1:
		return w.malformed("%d Z points, the domain needs %d", nZ, s.Cardinality-1)
	}
	nc, err := w.u32("commitment key count")
	if err != nil {
		return err
	}
	if uint64(nc)*8 > uint64(w.left()) {
		return w.malformed("%d commitment keys at offset %d, but the file ends %d bytes later", nc, w.off, w.left())
	}
	for i := range nc {
		basis, err := w.points(g1Bytes, fmt.Sprintf("commitment key %d basis", i))
		if err != nil {
			return err
		}
		sigma, err := w.points(g1Bytes, fmt.Sprintf("commitment key %d basisExpSigma", i))
		if err != nil {
			return err
		}
		if basis != sigma {
			return w.malformed("commitment key %d: %d basis and %d basisExpSigma points", i, basis, sigma)
		}
	}
	return w.end()
}

// verifyingKey walks a VerifyingKey (gnark backend/groth16/bls12-381/marshal.go
// writeTo, raw) and checks the indices the verifier looks up.
func (w *walker) verifyingKey() error {
	for _, f := range []struct {
		size int
		name string
	}{{g1Bytes, "G1.Alpha"}, {g1Bytes, "G1.Beta"}, {g2Bytes, "G2.Beta"}, {g2Bytes, "G2.Gamma"}, {g1Bytes, "G1.Delta"}, {g2Bytes, "G2.Delta"}} {
		if err := w.point(f.size, f.name); err != nil {
			return err
		}
	}
	nK, err := w.points(g1Bytes, "G1.K")
	if err != nil {
		return err
	}
	outer, err := w.u32("committed-wire list count")
	if err != nil {
		return err
	}
	if uint64(outer)*4 > uint64(w.left()) {
		return w.malformed("%d committed-wire lists at offset %d, but the file ends %d bytes later", outer, w.off, w.left())
	}
	if nK < uint64(outer)+1 {
		return w.malformed("%d commitments, but only %d K points", outer, nK)
	}
	for i := range outer {
		m, err := w.u32(fmt.Sprintf("committed-wire list %d length", i))
		if err != nil {
			return err
		}
		if uint64(m)*8 > uint64(w.left()) {
			return w.malformed("committed-wire list %d: %d wires at offset %d, but the file ends %d bytes later", i, m, w.off, w.left())
		}
		// The verifier reads public input v-1; the public inputs then
		// number nK-outer-1, plus one per commitment already solved.
		top := nK - uint64(outer) - 1 + uint64(i)
		for j := uint64(0); j < uint64(m); {
			k := min(uint64(m)-j, chunkBytes/8)
			b, err := w.take(int(k)*8, fmt.Sprintf("committed-wire list %d", i))
			if err != nil {
				return err
			}
			for x := 0; x < len(b); x += 8 {
				if v := binary.BigEndian.Uint64(b[x:]); v < 1 || v > top {
					return w.malformed("committed-wire list %d: wire %d is not a public input (1..%d)", i, v, top)
				}
			}
			j += k
		}
	}
	nc, err := w.u32("commitment key count")
	if err != nil {
		return err
	}
	if nc != outer {
		return w.malformed("%d commitment keys for %d committed-wire lists", nc, outer)
	}
	for i := range nc {
		for _, f := range []string{"G", "GSigmaNeg"} {
			if err := w.point(g2Bytes, fmt.Sprintf("commitment key %d %s", i, f)); err != nil {
				return err
			}
		}
	}
	return w.end()
}
