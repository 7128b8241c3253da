package r1cs

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/c2flow/c2flow/internal/iocount"
)

// shapeMagic opens every serialized shape (format version 1).
var shapeMagic = [8]byte{'C', '2', 'F', 'R', '1', 'C', 'S', 1}

// ErrBadShapeFile is returned (wrapped) when a serialized shape is
// malformed or its digest does not match.
var ErrBadShapeFile = errors.New("malformed shape file")

// WriteTo serializes s deterministically: the same recorded system always
// yields the same bytes, whose SHA-256 is [Shape.Digest]. Layout, all
// integers little-endian: the magic "C2FR1CS\x01"; u64 NumInputs, NumAux,
// NumSynthesized, InputConstraints (0 or 1), rows, len(Coeffs); each
// coefficient as 32 canonical big-endian bytes; then for A, B and C: u64
// nnz, u32 length of each row, u32 variable of each entry (bit 31 set for
// aux), u32 coefficient index of each entry.
func (s *Shape) WriteTo(w io.Writer) (int64, error) {
	if s.overflow != nil {
		return 0, fmt.Errorf("writing shape: %w", s.overflow)
	}
	cw := &iocount.Writer{W: w}
	sw := newShapeWriter(cw)
	bw, u64, u32 := sw.bw, sw.u64, sw.u32
	rows := s.NumConstraints()
	sw.header(s.NumInputs, s.NumAux, s.NumSynthesized, s.InputConstraints, rows, len(s.Coeffs))
	for i := range s.Coeffs {
		b := s.Coeffs[i].Bytes()
		bw.Write(b[:])
	}
	for _, m := range []*Matrix{&s.A, &s.B, &s.C} {
		u64(m.NNZ())
		for r := 0; r < rows; r++ {
			u32(uint32(m.RowStart[r+1] - m.RowStart[r]))
		}
		for _, v := range m.Vars {
			u32(uint32(v))
		}
		for _, c := range m.Coeffs {
			u32(c)
		}
	}
	if err := bw.Flush(); err != nil {
		return cw.N, fmt.Errorf("writing shape: %w", err)
	}
	return cw.N, nil
}

// Digest returns the hex SHA-256 of s's serialization: the name of the
// shape.
func (s *Shape) Digest() (string, error) {
	h := sha256.New()
	if _, err := s.WriteTo(h); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// ReadShape deserializes a shape written by [Shape.WriteTo], checking its
// structure (counts, sorted distinct variables per row, variables and
// coefficient indices in range, nonzero canonical coefficients).
func ReadShape(r io.Reader) (*Shape, error) {
	s, _, err := readShape(r, nil)
	return s, err
}

func readShape(r io.Reader, h hash.Hash) (*Shape, int64, error) {
	cr := &countReader{r: bufio.NewReaderSize(r, 1<<20), h: h}
	bad := func(format string, args ...any) error {
		return fmt.Errorf("reading shape at byte %d: %s: %w", cr.n, fmt.Sprintf(format, args...), ErrBadShapeFile)
	}
	var b8 [8]byte
	readErr := func(err error) error {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return bad("truncated")
		}
		return fmt.Errorf("reading shape: %w", err)
	}
	if _, err := io.ReadFull(cr, b8[:]); err != nil {
		return nil, cr.n, readErr(err)
	}
	if b8 != shapeMagic {
		return nil, cr.n, bad("bad magic %x", b8)
	}
	var hdr [6]uint64
	for i := range hdr {
		if _, err := io.ReadFull(cr, b8[:]); err != nil {
			return nil, cr.n, readErr(err)
		}
		hdr[i] = binary.LittleEndian.Uint64(b8[:])
	}
	nIn, nAux, nSyn, ic, rows, nCoeff := hdr[0], hdr[1], hdr[2], hdr[3], hdr[4], hdr[5]
	const limit = 1 << 40
	switch {
	case nIn < 1 || nIn > MaxVariables || nAux > MaxVariables:
		return nil, cr.n, bad("variable counts %d, %d", nIn, nAux)
	case ic > 1:
		return nil, cr.n, bad("input-constraint flag %d", ic)
	case rows > limit || nCoeff > limit || nSyn > rows:
		return nil, cr.n, bad("sizes rows=%d coeffs=%d synthesized=%d", rows, nCoeff, nSyn)
	case ic == 1 && rows != nSyn+nIn, ic == 0 && rows != nSyn:
		return nil, cr.n, bad("rows %d do not match synthesized %d and inputs %d", rows, nSyn, nIn)
	}
	s := &Shape{
		NumInputs: int(nIn), NumAux: int(nAux), NumSynthesized: int(nSyn),
		InputConstraints: ic == 1, coeffID: make(map[fr.Element]uint32),
	}
	var b32 [32]byte
	for k := uint64(0); k < nCoeff; k++ {
		if _, err := io.ReadFull(cr, b32[:]); err != nil {
			return nil, cr.n, readErr(err)
		}
		var e fr.Element
		if err := e.SetBytesCanonical(b32[:]); err != nil {
			return nil, cr.n, bad("coefficient %d: %v", k, err)
		}
		if e.IsZero() {
			return nil, cr.n, bad("coefficient %d is zero", k)
		}
		if _, dup := s.coeffID[e]; dup {
			return nil, cr.n, bad("coefficient %d repeated", k)
		}
		s.coeffID[e] = uint32(k)
		s.Coeffs = append(s.Coeffs, e)
	}
	u32s := func(n uint64) ([]uint32, error) {
		out := make([]uint32, 0, min(n, 1<<24))
		var b4 [4]byte
		for i := uint64(0); i < n; i++ {
			if _, err := io.ReadFull(cr, b4[:]); err != nil {
				return nil, readErr(err)
			}
			out = append(out, binary.LittleEndian.Uint32(b4[:]))
		}
		return out, nil
	}
	for mi, m := range []*Matrix{&s.A, &s.B, &s.C} {
		if _, err := io.ReadFull(cr, b8[:]); err != nil {
			return nil, cr.n, readErr(err)
		}
		nnz := binary.LittleEndian.Uint64(b8[:])
		if nnz > limit {
			return nil, cr.n, bad("matrix %d nnz %d", mi, nnz)
		}
		lens, err := u32s(rows)
		if err != nil {
			return nil, cr.n, err
		}
		m.RowStart = make([]int, rows+1)
		for r, l := range lens {
			m.RowStart[r+1] = m.RowStart[r] + int(l)
		}
		if uint64(m.RowStart[rows]) != nnz {
			return nil, cr.n, bad("matrix %d row lengths sum to %d, not %d", mi, m.RowStart[rows], nnz)
		}
		vars, err := u32s(nnz)
		if err != nil {
			return nil, cr.n, err
		}
		m.Vars = make([]Variable, nnz)
		for k, v := range vars {
			m.Vars[k] = Variable(v)
		}
		if m.Coeffs, err = u32s(nnz); err != nil {
			return nil, cr.n, err
		}
		for r := 0; r < int(rows); r++ {
			for k := m.RowStart[r]; k < m.RowStart[r+1]; k++ {
				v := m.Vars[k]
				if (v.IsAux() && v.Index() >= s.NumAux) || (!v.IsAux() && v.Index() >= s.NumInputs) {
					return nil, cr.n, bad("matrix %d row %d: variable %v out of range", mi, r, v)
				}
				if k > m.RowStart[r] && m.Vars[k-1] >= v {
					return nil, cr.n, bad("matrix %d row %d: variables not sorted", mi, r)
				}
				if uint64(m.Coeffs[k]) >= nCoeff {
					return nil, cr.n, bad("matrix %d row %d: coefficient index %d out of range", mi, r, m.Coeffs[k])
				}
			}
		}
	}
	return s, cr.n, nil
}

type countReader struct {
	r io.Reader
	h hash.Hash
	n int64
}

func (c *countReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	if c.h != nil {
		c.h.Write(p[:n])
	}
	return n, err
}

// shapeWriter writes WriteTo's format, buffered: what a Shape and a
// System ([SystemDigest]) serialize through.
type shapeWriter struct {
	bw *bufio.Writer
	b8 [8]byte
}

func newShapeWriter(w io.Writer) *shapeWriter { return &shapeWriter{bw: bufio.NewWriterSize(w, 1<<20)} }

func (w *shapeWriter) u64(x int) {
	binary.LittleEndian.PutUint64(w.b8[:], uint64(x))
	w.bw.Write(w.b8[:])
}

func (w *shapeWriter) u32(x uint32) {
	binary.LittleEndian.PutUint32(w.b8[:4], x)
	w.bw.Write(w.b8[:4])
}

// header writes the magic and the counts.
func (w *shapeWriter) header(inputs, aux, synthesized int, inputConstraints bool, rows, coeffs int) {
	w.bw.Write(shapeMagic[:])
	ic := 0
	if inputConstraints {
		ic = 1
	}
	for _, x := range []int{inputs, aux, synthesized, ic, rows, coeffs} {
		w.u64(x)
	}
}

// ShapeFile returns the path of the shape with the given digest in dir.
func ShapeFile(dir, digest string) string { return filepath.Join(dir, digest+".r1cs") }

// SaveShape writes s to dir/<digest>.r1cs (atomically: a temporary file
// renamed into place) and returns the digest. An existing file of that
// digest is kept.
func SaveShape(dir string, s *Shape) (string, error) {
	digest, err := s.Digest()
	if err != nil {
		return "", fmt.Errorf("saving shape: %w", err)
	}
	path := ShapeFile(dir, digest)
	if _, err := os.Stat(path); err == nil {
		return digest, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("saving shape %s: %w", digest, err)
	}
	if err := writeAtomic(path, func(w io.Writer) error {
		_, err := s.WriteTo(w)
		return err
	}); err != nil {
		return "", fmt.Errorf("saving shape %s: %w", digest, err)
	}
	return digest, nil
}

// LoadShape reads dir/<digest>.r1cs and checks that its content has that
// digest.
func LoadShape(dir, digest string) (*Shape, error) {
	if !validDigest(digest) {
		return nil, fmt.Errorf("loading shape %q: not a hex SHA-256 digest: %w", digest, ErrBadShapeFile)
	}
	path := ShapeFile(dir, digest)
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("loading shape %s: %w", digest, err)
	}
	defer f.Close()
	h := sha256.New()
	s, _, err := readShape(f, h)
	if err != nil {
		return nil, fmt.Errorf("loading shape %s: %w", path, err)
	}
	// Hash anything after the shape too: a file with trailing bytes does
	// not have the digest it is named by.
	if _, err := io.Copy(h, f); err != nil {
		return nil, fmt.Errorf("loading shape %s: %w", path, err)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != digest {
		return nil, fmt.Errorf("loading shape %s: content digest %s: %w", path, got, ErrBadShapeFile)
	}
	return s, nil
}

func validDigest(d string) bool {
	if len(d) != 64 {
		return false
	}
	_, err := hex.DecodeString(d)
	return err == nil && strings.ToLower(d) == d
}

// ShapeCache is an on-disk cache of recorded shapes in Dir: each shape
// stored once under its digest (see [SaveShape]), and a small file
// <name>.digest naming the digest of the shape recorded under a circuit
// name (e.g. a proof type and partition shape).
type ShapeCache struct {
	Dir string
}

// ErrNotCached is returned (wrapped, with fs.ErrNotExist) by
// [ShapeCache.Get] when no shape is recorded under the name.
var ErrNotCached = fmt.Errorf("shape not cached: %w", fs.ErrNotExist)

func validName(name string) bool {
	return name != "" && name != "." && name != ".." && !strings.ContainsAny(name, `/\`) && !strings.ContainsRune(name, 0)
}

// Put saves s and records it under name; it returns the digest.
func (c ShapeCache) Put(name string, s *Shape) (string, error) {
	if !validName(name) {
		return "", fmt.Errorf("caching shape %q: invalid name: %w", name, fs.ErrInvalid)
	}
	digest, err := SaveShape(c.Dir, s)
	if err != nil {
		return "", fmt.Errorf("caching shape %q: %w", name, err)
	}
	if err := writeAtomic(filepath.Join(c.Dir, name+".digest"), func(w io.Writer) error {
		_, err := io.WriteString(w, digest+"\n")
		return err
	}); err != nil {
		return "", fmt.Errorf("caching shape %q: %w", name, err)
	}
	return digest, nil
}

// Get loads the shape recorded under name and returns it with its digest.
func (c ShapeCache) Get(name string) (*Shape, string, error) {
	if !validName(name) {
		return nil, "", fmt.Errorf("loading cached shape %q: invalid name: %w", name, fs.ErrInvalid)
	}
	b, err := os.ReadFile(filepath.Join(c.Dir, name+".digest"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, "", fmt.Errorf("loading cached shape %q: %w", name, ErrNotCached)
	}
	if err != nil {
		return nil, "", fmt.Errorf("loading cached shape %q: %w", name, err)
	}
	digest := string(bytes.TrimSpace(b))
	s, err := LoadShape(c.Dir, digest)
	if err != nil {
		return nil, "", fmt.Errorf("loading cached shape %q: %w", name, err)
	}
	return s, digest, nil
}

// GetOrRecord returns the shape cached under name, or records it with
// record, caches it and returns it.
func (c ShapeCache) GetOrRecord(name string, record func() (*Shape, error)) (*Shape, string, error) {
	s, d, err := c.Get(name)
	if err == nil {
		return s, d, nil
	}
	if !errors.Is(err, ErrNotCached) {
		return nil, "", err
	}
	if s, err = record(); err != nil {
		return nil, "", fmt.Errorf("recording shape %q: %w", name, err)
	}
	if d, err = c.Put(name, s); err != nil {
		return nil, "", err
	}
	return s, d, nil
}

func writeAtomic(path string, write func(io.Writer) error) error {
	f, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	if err := write(f); err != nil {
		f.Close()
		os.Remove(tmp)
		return err
	}
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}
