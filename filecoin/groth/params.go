package groth

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"runtime"
	"sync"
	"sync/atomic"

	bls "github.com/consensys/gnark-crypto/ecc/bls12-381"
)

// Params is bellperson's Parameters<Bls12>: the points of a .params file,
// in its order, none of them the point at infinity.
type Params struct {
	VK VerifyingKey
	// H holds tau^i (tau^n - 1)/delta for i in [0, n-1), n the domain size.
	H []bls.G1Affine
	// L holds (beta A_j(tau) + alpha B_j(tau) + C_j(tau))/delta for every
	// aux variable j.
	L []bls.G1Affine
	// A holds A_j(tau) for every variable (inputs, then aux) whose A
	// polynomial is not zero; BG1 and BG2 B_j(tau) likewise in G1 and G2.
	A, BG1 []bls.G1Affine
	BG2    []bls.G2Affine
}

// Section is where one query of a .params file lies: Count points of
// PointSize bytes from Offset (just after the query's u32 count).
type Section struct {
	Name      string
	Offset    int64
	Count     int
	PointSize int
}

// End returns the offset just after the section's last point.
func (s Section) End() int64 { return s.Offset + int64(s.Count)*int64(s.PointSize) }

// Layout is the structure of a .params file: its verifying key, decoded,
// and the place of each query, whose points are decoded on demand.
type Layout struct {
	VK                *VerifyingKey
	H, L, A, BG1, BG2 Section
	// Size is the file size, the end of BG2.
	Size int64
}

// Sections returns the five queries in file order.
func (l *Layout) Sections() []Section { return []Section{l.H, l.L, l.A, l.BG1, l.BG2} }

// ReadLayout reads a .params file's verifying key (checked as
// ReadVerifyingKey checks it) and the counts of its queries, which must
// end exactly at size. It reads a few hundred bytes, whatever the file's
// size.
func ReadLayout(r io.ReaderAt, size int64) (*Layout, error) {
	vk, off, err := readVerifyingKey(io.NewSectionReader(r, 0, size))
	if err != nil {
		return nil, fmt.Errorf("reading params layout: %w", err)
	}
	l := &Layout{VK: vk}
	var cnt [4]byte
	for _, s := range []struct {
		sec       *Section
		name      string
		pointSize int
	}{
		{&l.H, "h", G1Uncompressed}, {&l.L, "l", G1Uncompressed}, {&l.A, "a", G1Uncompressed},
		{&l.BG1, "b_g1", G1Uncompressed}, {&l.BG2, "b_g2", G2Uncompressed},
	} {
		if off+4 > size {
			return nil, fmt.Errorf("reading params layout: %s count at %d beyond the file's %d bytes: %w", s.name, off, size, ErrFormat)
		}
		if _, err := r.ReadAt(cnt[:], off); err != nil {
			return nil, fmt.Errorf("reading params layout: %s count: %w: %w", s.name, ErrFormat, err)
		}
		*s.sec = Section{Name: s.name, Offset: off + 4, Count: int(binary.BigEndian.Uint32(cnt[:])), PointSize: s.pointSize}
		off = s.sec.End()
		if off > size {
			return nil, fmt.Errorf("reading params layout: %s: %d points end at %d, beyond the file's %d bytes: %w",
				s.name, s.sec.Count, off, size, ErrFormat)
		}
	}
	if off != size {
		return nil, fmt.Errorf("reading params layout: %d trailing bytes after b_g2: %w", size-off, ErrFormat)
	}
	l.Size = size
	return l, nil
}

// ReadOptions configure the decoding of parameter points.
type ReadOptions struct {
	// Check is CheckCurve (default: bellperson's unchecked mode, which
	// Filecoin's parameter cache uses) or CheckSubgroup.
	Check Check
	// Workers is the number of goroutines decoding (0: GOMAXPROCS).
	Workers int
}

func (o ReadOptions) workers() int {
	if o.Workers > 0 {
		return o.Workers
	}
	return runtime.GOMAXPROCS(0)
}

// chunkPoints is the number of points a worker decodes at a time.
const chunkPoints = 1 << 13

// byteSource is implemented by readers whose bytes are in memory (a
// MappedFile): points are decoded in place, not copied.
type byteSource interface {
	Bytes() []byte
}

// ReadG1 decodes a G1 section into dst (len(dst) == s.Count) in parallel
// chunks; order maps a point's index in the file to its index in dst
// (nil: the same). Every point is checked per opts and none may be at
// infinity.
func ReadG1(r io.ReaderAt, s Section, dst []bls.G1Affine, order func(int) int, opts ReadOptions) error {
	if s.PointSize != G1Uncompressed || len(dst) != s.Count {
		return fmt.Errorf("reading %s: section of %d points of %d bytes into %d G1 points: %w", s.Name, s.Count, s.PointSize, len(dst), ErrMismatch)
	}
	return readSection(r, s, opts, func(i int, b []byte) error {
		j := i
		if order != nil {
			j = order(i)
		}
		p := &dst[j]
		if err := decodeG1Uncompressed(b, p, opts.Check); err != nil {
			return err
		}
		if p.IsInfinity() {
			return fmt.Errorf("point at infinity: %w", ErrPoint)
		}
		return nil
	})
}

// ReadG2 decodes a G2 section into dst as ReadG1 does.
func ReadG2(r io.ReaderAt, s Section, dst []bls.G2Affine, opts ReadOptions) error {
	if s.PointSize != G2Uncompressed || len(dst) != s.Count {
		return fmt.Errorf("reading %s: section of %d points of %d bytes into %d G2 points: %w", s.Name, s.Count, s.PointSize, len(dst), ErrMismatch)
	}
	return readSection(r, s, opts, func(i int, b []byte) error {
		p := &dst[i]
		if err := decodeG2Uncompressed(b, p, opts.Check); err != nil {
			return err
		}
		if p.IsInfinity() {
			return fmt.Errorf("point at infinity: %w", ErrPoint)
		}
		return nil
	})
}

// readSection calls decode(i, bytes of point i) for every point of s,
// from opts.workers() goroutines, each reading chunkPoints points at a
// time (or slicing them, from a byteSource). It returns the error of the
// lowest-numbered failing chunk that was decoded.
func readSection(r io.ReaderAt, s Section, opts ReadOptions, decode func(i int, b []byte) error) error {
	if s.Count == 0 {
		return nil
	}
	var mem []byte
	if bs, ok := r.(byteSource); ok {
		mem = bs.Bytes()
		if int64(len(mem)) < s.End() {
			return fmt.Errorf("reading %s: section ends at %d, beyond the %d bytes mapped: %w", s.Name, s.End(), len(mem), ErrFormat)
		}
	}
	chunks := (s.Count + chunkPoints - 1) / chunkPoints
	workers := min(opts.workers(), chunks)
	var (
		next   atomic.Int64
		failed atomic.Bool
		mu     sync.Mutex
		first  = -1
		ferr   error
		wg     sync.WaitGroup
	)
	fail := func(c int, err error) {
		mu.Lock()
		if first < 0 || c < first {
			first, ferr = c, err
		}
		mu.Unlock()
		failed.Store(true)
	}
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var buf []byte
			if mem == nil {
				buf = make([]byte, chunkPoints*s.PointSize)
			}
			for !failed.Load() {
				c := int(next.Add(1) - 1)
				if c >= chunks {
					return
				}
				lo := c * chunkPoints
				hi := min(lo+chunkPoints, s.Count)
				start := s.Offset + int64(lo)*int64(s.PointSize)
				n := (hi - lo) * s.PointSize
				var b []byte
				if mem != nil {
					b = mem[start : start+int64(n)]
				} else {
					b = buf[:n]
					if _, err := r.ReadAt(b, start); err != nil {
						if errors.Is(err, io.EOF) {
							err = fmt.Errorf("%w: %w", ErrFormat, io.ErrUnexpectedEOF)
						}
						fail(c, fmt.Errorf("reading %s points %d..%d: %w", s.Name, lo, hi, err))
						return
					}
				}
				for i := lo; i < hi; i++ {
					off := (i - lo) * s.PointSize
					if err := decode(i, b[off:off+s.PointSize]); err != nil {
						fail(c, fmt.Errorf("reading %s point %d (offset %d): %w", s.Name, i, start+int64(off), err))
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	return ferr
}

// ReadParams reads a whole .params file from r (size bytes) as
// bellperson's Parameters::read does, decoding the queries in parallel
// chunks per opts. Over a MappedFile the points are decoded from the
// mapping; over another io.ReaderAt each worker reads one chunk at a time:
// either way the file is never held in memory, only the decoded points.
func ReadParams(r io.ReaderAt, size int64, opts ReadOptions) (*Params, error) {
	l, err := ReadLayout(r, size)
	if err != nil {
		return nil, err
	}
	return l.Read(r, opts)
}

// Read decodes every query of the file l describes.
func (l *Layout) Read(r io.ReaderAt, opts ReadOptions) (*Params, error) {
	p := &Params{
		VK:  *l.VK,
		H:   make([]bls.G1Affine, l.H.Count),
		L:   make([]bls.G1Affine, l.L.Count),
		A:   make([]bls.G1Affine, l.A.Count),
		BG1: make([]bls.G1Affine, l.BG1.Count),
		BG2: make([]bls.G2Affine, l.BG2.Count),
	}
	for _, s := range []struct {
		sec Section
		dst []bls.G1Affine
	}{{l.H, p.H}, {l.L, p.L}, {l.A, p.A}, {l.BG1, p.BG1}} {
		if err := ReadG1(r, s.sec, s.dst, nil, opts); err != nil {
			return nil, fmt.Errorf("reading params: %w", err)
		}
	}
	if err := ReadG2(r, l.BG2, p.BG2, opts); err != nil {
		return nil, fmt.Errorf("reading params: %w", err)
	}
	return p, nil
}

// ReadParamsFile maps path and reads it with ReadParams.
func ReadParamsFile(path string, opts ReadOptions) (*Params, error) {
	m, err := MapFile(path)
	if err != nil {
		return nil, err
	}
	defer m.Close()
	p, err := ReadParams(m, m.Size(), opts)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return p, nil
}

// Size returns the encoded size of p in bytes.
func (p *Params) Size() int64 {
	g1 := int64(len(p.H)+len(p.L)+len(p.A)+len(p.BG1)) * G1Uncompressed
	return p.VK.Size() + 5*4 + g1 + int64(len(p.BG2))*G2Uncompressed
}

// WriteTo writes p in bellperson's .params format. Points at infinity are
// an error: bellperson's reader rejects them.
func (p *Params) WriteTo(w io.Writer) (int64, error) {
	bw := bufio.NewWriterSize(w, 1<<20)
	cw := &countWriter{w: bw}
	if _, err := p.VK.WriteTo(cw); err != nil {
		return cw.n, fmt.Errorf("writing params: %w", err)
	}
	var cnt [4]byte
	for _, s := range []struct {
		name string
		pts  []bls.G1Affine
	}{{"h", p.H}, {"l", p.L}, {"a", p.A}, {"b_g1", p.BG1}} {
		if uint64(len(s.pts)) > 1<<32-1 {
			return cw.n, fmt.Errorf("writing params: %s: %d points: %w", s.name, len(s.pts), ErrFormat)
		}
		binary.BigEndian.PutUint32(cnt[:], uint32(len(s.pts)))
		cw.Write(cnt[:])
		for i := range s.pts {
			if s.pts[i].IsInfinity() {
				return cw.n, fmt.Errorf("writing params: %s point %d at infinity: %w", s.name, i, ErrPoint)
			}
			b := s.pts[i].RawBytes()
			cw.Write(b[:])
		}
	}
	if uint64(len(p.BG2)) > 1<<32-1 {
		return cw.n, fmt.Errorf("writing params: b_g2: %d points: %w", len(p.BG2), ErrFormat)
	}
	binary.BigEndian.PutUint32(cnt[:], uint32(len(p.BG2)))
	cw.Write(cnt[:])
	for i := range p.BG2 {
		if p.BG2[i].IsInfinity() {
			return cw.n, fmt.Errorf("writing params: b_g2 point %d at infinity: %w", i, ErrPoint)
		}
		b := p.BG2[i].RawBytes()
		cw.Write(b[:])
	}
	if cw.err != nil {
		return cw.n, fmt.Errorf("writing params: %w", cw.err)
	}
	if err := bw.Flush(); err != nil {
		return cw.n, fmt.Errorf("writing params: %w", err)
	}
	return cw.n, nil
}

// countWriter counts bytes and keeps the first error, after which it
// writes nothing.
type countWriter struct {
	w   io.Writer
	n   int64
	err error
}

func (c *countWriter) Write(b []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	n, err := c.w.Write(b)
	c.n += int64(n)
	c.err = err
	return n, err
}
