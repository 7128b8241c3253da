package groth

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"testing"
	"time"

	bls "github.com/consensys/gnark-crypto/ecc/bls12-381"

	"github.com/c2flow/c2flow/internal/upstreamdata"
)

// The layout of a .params file, read without decoding its queries, and
// lazy decoding of one query; chunked reads across chunk boundaries.
func TestLayoutAndLazyRead(t *testing.T) {
	p := bellpersonSetup(t, shapeOf(t, denseCircuit))
	// More h points than a few chunks, so that chunks and workers
	// interleave: a domain of 2^15.
	h := make([]bls.G1Affine, 1<<15-1)
	for i := range h {
		h[i] = p.H[i%len(p.H)]
		if i%3 == 0 {
			h[i].Neg(&h[i])
		}
	}
	p.H = h
	var buf bytes.Buffer
	if _, err := p.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	b := buf.Bytes()
	l, err := ReadLayout(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	if !l.VK.Equal(&p.VK) || l.H.Count != len(p.H) || l.L.Count != len(p.L) || l.A.Count != len(p.A) ||
		l.BG1.Count != len(p.BG1) || l.BG2.Count != len(p.BG2) || l.Size != int64(len(b)) || l.H.Offset != p.VK.Size()+4 {
		t.Fatalf("layout %+v", l)
	}
	for _, workers := range []int{1, 3} {
		h := make([]bls.G1Affine, l.H.Count)
		if err := ReadG1(bytes.NewReader(b), l.H, h, nil, ReadOptions{Workers: workers}); err != nil {
			t.Fatal(err)
		}
		if !equalG1s(h, p.H) {
			t.Fatalf("h read with %d workers differs", workers)
		}
	}
	// Decoding straight into gnark's order is permuteH's order.
	z := make([]bls.G1Affine, l.H.Count)
	n := l.H.Count + 1
	if err := ReadG1(bytes.NewReader(b), l.H, z, func(i int) int { return bitReverse(i, n) }, ReadOptions{}); err != nil {
		t.Fatal(err)
	}
	want := slices.Clone(p.H)
	permuteH(want)
	if !equalG1s(z, want) {
		t.Fatal("h decoded in bit-reversed order differs from permuteH's")
	}
	bg2 := make([]bls.G2Affine, l.BG2.Count)
	if err := ReadG2(bytes.NewReader(b), l.BG2, bg2, ReadOptions{Check: CheckSubgroup}); err != nil || !equalG2s(bg2, p.BG2) {
		t.Fatalf("b_g2: %v", err)
	}
}

// A verifying key of the 2KiB PoRep circuit (40 inputs with ONE) is 4,708
// bytes, the size FILECOIN.md gives for the real v28 2KiB .vk file.
func TestVerifyingKeySize(t *testing.T) {
	vk := &VerifyingKey{IC: make([]bls.G1Affine, 40)}
	if vk.Size() != 4708 {
		t.Fatalf("2KiB vk size %d, want 4708", vk.Size())
	}
}

// Malformed files are errors, never panics: truncated anywhere, trailing
// bytes, counts beyond the file, a point at infinity in a query, a point
// off the curve.
func TestReadParamsMalformed(t *testing.T) {
	p := bellpersonSetup(t, shapeOf(t, sparseCircuit))
	var buf bytes.Buffer
	if _, err := p.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	good := buf.Bytes()
	if _, err := ReadParams(bytes.NewReader(good), int64(len(good)), ReadOptions{}); err != nil {
		t.Fatal(err)
	}
	read := func(b []byte) error {
		_, err := ReadParams(bytes.NewReader(b), int64(len(b)), ReadOptions{Check: CheckSubgroup})
		return err
	}
	for cut := 0; cut < len(good); cut += 37 {
		if err := read(good[:cut]); err == nil {
			t.Fatalf("truncated to %d bytes: accepted", cut)
		}
	}
	if err := read(append(bytes.Clone(good), 0)); !errors.Is(err, ErrFormat) {
		t.Fatalf("trailing byte: %v", err)
	}
	hCount := p.VK.Size()
	huge := bytes.Clone(good)
	binary.BigEndian.PutUint32(huge[hCount:], 1<<31)
	if err := read(huge); !errors.Is(err, ErrFormat) {
		t.Fatalf("h count beyond the file: %v", err)
	}
	inf := bytes.Clone(good)
	first := hCount + 4
	clear(inf[first : first+G1Uncompressed])
	inf[first] = flagInfinity
	if err := read(inf); !errors.Is(err, ErrPoint) {
		t.Fatalf("h point at infinity: %v", err)
	}
	off := bytes.Clone(good)
	off[first+G1Uncompressed-1] ^= 1
	if err := read(off); !errors.Is(err, ErrPoint) {
		t.Fatalf("h point off the curve: %v", err)
	}
	// The .vk reader: an IC point at infinity, trailing bytes.
	var vb bytes.Buffer
	if _, err := p.VK.WriteTo(&vb); err != nil {
		t.Fatal(err)
	}
	vkb := vb.Bytes()
	icInf := bytes.Clone(vkb)
	clear(icInf[vkFixedSize+4 : vkFixedSize+4+G1Uncompressed])
	icInf[vkFixedSize+4] = flagInfinity
	if _, err := ReadVerifyingKey(bytes.NewReader(icInf)); !errors.Is(err, ErrPoint) {
		t.Fatalf("IC at infinity: %v", err)
	}
	dir := t.TempDir()
	name := filepath.Join(dir, "x.vk")
	if err := os.WriteFile(name, append(bytes.Clone(vkb), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadVerifyingKeyFile(name); !errors.Is(err, ErrFormat) {
		t.Fatalf(".vk with a trailing byte: %v", err)
	}
	// Writing a query point at infinity is refused.
	bad := *p
	bad.A = append([]bls.G1Affine{{}}, p.A[1:]...)
	if _, err := bad.WriteTo(&bytes.Buffer{}); !errors.Is(err, ErrPoint) {
		t.Fatalf("writing a point at infinity: %v", err)
	}
}

// The parameter digest is parameters.json's: the first 32 hex characters
// of BLAKE2b-512. BLAKE2b-512("abc") is RFC 7693's appendix A example,
// that of the empty string the BLAKE2 reference implementation's
// (blake2b-kat.txt, in = "").
func TestFileDigest(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"", "786a02f742015903c6c6fd852552d272"},
		{"abc", "ba80a53f981c4d0d6a2797b69f12f6e9"},
	} {
		got, err := FileDigest(bytes.NewReader([]byte(c.in)))
		if err != nil || got != c.want {
			t.Fatalf("digest(%q) = %s (%v), want %s", c.in, got, err, c.want)
		}
	}
	dir := t.TempDir()
	name := filepath.Join(dir, "p.vk")
	if err := os.WriteFile(name, []byte("abc"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := CheckFileDigest(name, "ba80a53f981c4d0d6a2797b69f12f6e9"); err != nil {
		t.Fatal(err)
	}
	if err := CheckFileDigest(name, "786a02f742015903c6c6fd852552d272"); !errors.Is(err, ErrMismatch) {
		t.Fatalf("wrong digest: %v", err)
	}
}

// rust-fil-proofs' parameters.json parses; its v28 2KiB PoRep verifying
// key entry has the digest the file lists (rust-fil-proofs 87348a74
// parameters.json).
func TestParametersJSON(t *testing.T) {
	b := upstreamdata.Read(t, upstreamdata.ParametersJSON)
	m, err := ParseParametersJSON(b)
	if err != nil {
		t.Fatal(err)
	}
	const vk2KiB = "v28-stacked-proof-of-replication-merkletree-poseidon_hasher-8-0-0-sha256_hasher-032d3138d22506ec0082ed72b2dcba18df18477904e35bafee82b3793b06832f.vk"
	e, ok := m[vk2KiB]
	if !ok || e.Digest != "dc1ade9929ade1708238f155343044ac" || e.SectorSize != 2048 {
		t.Fatalf("%s: %+v (present %v)", vk2KiB, e, ok)
	}
	t.Logf("parameters.json: %d files", len(m))
}

// BenchmarkReadParamsMapped measures ReadParams over a mapped synthetic
// .params file (C2FLOW_BENCH_PARAMS_MIB MiB, default 64, of repeated
// valid points), unchecked and with subgroup checks: the rate at which a
// real file is decoded from the page cache.
func BenchmarkReadParamsMapped(b *testing.B) {
	mib := 64
	if s := os.Getenv("C2FLOW_BENCH_PARAMS_MIB"); s != "" {
		var err error
		if mib, err = strconv.Atoi(s); err != nil {
			b.Fatal(err)
		}
	}
	p := bellpersonSetup(b, shapeOf(b, denseCircuit))
	nH := (mib << 20) / G1Uncompressed
	h := make([]bls.G1Affine, nH)
	for i := range h {
		h[i] = p.H[i%len(p.H)]
	}
	p.H = h
	name := filepath.Join(b.TempDir(), "synthetic.params")
	f, err := os.Create(name)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	if _, err := p.WriteTo(w); err != nil {
		b.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	f.Close()
	p.H = nil
	runtime.GC()
	for _, check := range []Check{CheckCurve, CheckSubgroup} {
		b.Run(map[Check]string{CheckCurve: "curve", CheckSubgroup: "subgroup"}[check], func(b *testing.B) {
			b.SetBytes(int64(nH) * G1Uncompressed)
			for b.Loop() {
				t0 := time.Now()
				m, err := MapFile(name)
				if err != nil {
					b.Fatal(err)
				}
				tMap := time.Since(t0)
				got, err := ReadParams(m, m.Size(), ReadOptions{Check: check})
				if err != nil {
					b.Fatal(err)
				}
				m.Close()
				b.ReportMetric(float64(tMap.Microseconds()), "map-µs")
				_ = got
			}
		})
	}
}
