package groth

import (
	"bytes"
	"errors"
	"testing"

	bls "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fp"

	"github.com/c2flow/c2flow/internal/upstreamdata"
)

// gnark-crypto's uncompressed RawBytes and compressed Bytes are the zcash
// encoding that bellperson (blstrs) reads and writes, flag bits included:
// the test vectors of zkcrypto/bls12_381 (i·G for i in [0, 1000), the
// identity first) decode with this package's decoders to the points
// gnark-crypto computes, and gnark-crypto's encodings of those points are
// the vectors' bytes.
func TestZcashEncodingVectors(t *testing.T) {
	_, _, g1, g2 := bls.Generators()
	for _, v := range []struct {
		file upstreamdata.File
		size int
		g2   bool
		comp bool
	}{
		{upstreamdata.G1Uncompressed, G1Uncompressed, false, false},
		{upstreamdata.G1Compressed, G1Compressed, false, true},
		{upstreamdata.G2Uncompressed, G2Uncompressed, true, false},
		{upstreamdata.G2Compressed, G2Compressed, true, true},
	} {
		data := upstreamdata.Read(t, v.file)
		if len(data) != 1000*v.size {
			t.Fatalf("%s: %d bytes, want %d", v.file.Path, len(data), 1000*v.size)
		}
		var acc1 bls.G1Jac
		var acc2 bls.G2Jac
		for i := range 1000 {
			b := data[i*v.size : (i+1)*v.size]
			var enc []byte
			if !v.g2 {
				var want bls.G1Affine
				want.FromJacobian(&acc1)
				var got bls.G1Affine
				var err error
				if v.comp {
					err = decodeG1Compressed(b, &got)
					e := want.Bytes()
					enc = e[:]
				} else {
					err = decodeG1Uncompressed(b, &got, CheckSubgroup)
					e := EncodeG1(&want)
					enc = e[:]
				}
				if err != nil || !got.Equal(&want) {
					t.Fatalf("%s: vector %d: decoded %v (err %v), want %d·G", v.file.Path, i, got, err, i)
				}
				if p, err := DecodeG1(b); err != nil || !p.Equal(&want) {
					t.Fatalf("%s: vector %d: DecodeG1: %v", v.file.Path, i, err)
				}
				acc1.AddMixed(&g1)
			} else {
				var want bls.G2Affine
				want.FromJacobian(&acc2)
				var got bls.G2Affine
				var err error
				if v.comp {
					err = decodeG2Compressed(b, &got)
					e := want.Bytes()
					enc = e[:]
				} else {
					err = decodeG2Uncompressed(b, &got, CheckSubgroup)
					e := EncodeG2(&want)
					enc = e[:]
				}
				if err != nil || !got.Equal(&want) {
					t.Fatalf("%s: vector %d: decoded %v (err %v), want %d·G", v.file.Path, i, got, err, i)
				}
				if p, err := DecodeG2(b); err != nil || !p.Equal(&want) {
					t.Fatalf("%s: vector %d: DecodeG2: %v", v.file.Path, i, err)
				}
				acc2.AddMixed(&g2)
			}
			if !bytes.Equal(enc, b) {
				t.Fatalf("%s: vector %d: gnark-crypto encodes %x, zcash %x", v.file.Path, i, enc, b)
			}
		}
	}
}

// The decoders reject what blstrs rejects: flag combinations the zcash
// encoding forbids, an infinity encoding with other bits set, (0, 0)
// without the infinity flag (gnark's in-memory infinity), coordinates not
// below p, points off the curve; and points outside the subgroup when
// checked.
func TestDecodeRejects(t *testing.T) {
	_, _, g1, g2 := bls.Generators()
	gen1, gen2 := EncodeG1(&g1), EncodeG2(&g2)
	mut := func(b []byte, f func([]byte)) []byte {
		c := append([]byte(nil), b...)
		f(c)
		return c
	}
	cases := []struct {
		name string
		b    []byte
		g2   bool
	}{
		{"sort flag on uncompressed", mut(gen1[:], func(b []byte) { b[0] |= flagSort }), false},
		{"infinity and data", mut(gen1[:], func(b []byte) { b[0] |= flagInfinity }), false},
		{"infinity with a stray bit", mut(make([]byte, G1Uncompressed), func(b []byte) { b[0] = flagInfinity; b[95] = 1 }), false},
		{"zero without infinity flag", make([]byte, G1Uncompressed), false},
		{"x not below p", mut(gen1[:], func(b []byte) { b[0] |= 0x1f; b[1] = 0xff }), false},
		{"off the curve", mut(gen1[:], func(b []byte) { b[95] ^= 1 }), false},
		{"G2 sort flag on uncompressed", mut(gen2[:], func(b []byte) { b[0] |= flagSort }), true},
		{"G2 zero without infinity flag", make([]byte, G2Uncompressed), true},
		{"G2 off the curve", mut(gen2[:], func(b []byte) { b[191] ^= 1 }), true},
	}
	for _, c := range cases {
		var err error
		if c.g2 {
			var p bls.G2Affine
			err = decodeG2Uncompressed(c.b, &p, CheckCurve)
		} else {
			var p bls.G1Affine
			err = decodeG1Uncompressed(c.b, &p, CheckCurve)
		}
		if !errors.Is(err, ErrPoint) {
			t.Errorf("%s: error %v, want ErrPoint", c.name, err)
		}
	}

	// Points on the curve outside the subgroup: accepted unchecked
	// (bellperson's from_uncompressed_unchecked), rejected checked.
	var x fp.Element
	x.SetUint64(5)
	j1 := bls.GeneratePointNotInG1(x)
	var p1 bls.G1Affine
	p1.FromJacobian(&j1)
	b1 := p1.RawBytes()
	var q1 bls.G1Affine
	if err := decodeG1Uncompressed(b1[:], &q1, CheckCurve); err != nil || !q1.Equal(&p1) {
		t.Fatalf("G1 point outside the subgroup, unchecked: %v", err)
	}
	if err := decodeG1Uncompressed(b1[:], &q1, CheckSubgroup); !errors.Is(err, ErrPoint) {
		t.Fatalf("G1 point outside the subgroup, checked: error %v", err)
	}
	var e2 bls.E2
	e2.A0.SetUint64(3)
	e2.A1.SetUint64(1)
	j2 := bls.GeneratePointNotInG2(e2)
	var p2 bls.G2Affine
	p2.FromJacobian(&j2)
	b2 := p2.RawBytes()
	var q2 bls.G2Affine
	if err := decodeG2Uncompressed(b2[:], &q2, CheckCurve); err != nil || !q2.Equal(&p2) {
		t.Fatalf("G2 point outside the subgroup, unchecked: %v", err)
	}
	if err := decodeG2Uncompressed(b2[:], &q2, CheckSubgroup); !errors.Is(err, ErrPoint) {
		t.Fatalf("G2 point outside the subgroup, checked: error %v", err)
	}
	c2 := p2.Bytes()
	if err := decodeG2Compressed(c2[:], &q2); !errors.Is(err, ErrPoint) {
		t.Fatalf("compressed G2 point outside the subgroup: error %v", err)
	}
}
