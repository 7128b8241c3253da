package groth

import (
	"errors"
	"fmt"

	bls "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fp"
)

// Encoded point sizes (zcash BLS12-381 encoding).
const (
	// G1Uncompressed and G2Uncompressed are the sizes of uncompressed
	// points, as parameter files store them.
	G1Uncompressed = bls.SizeOfG1AffineUncompressed // 96
	G2Uncompressed = bls.SizeOfG2AffineUncompressed // 192
	// G1Compressed and G2Compressed are the sizes of compressed points, as
	// proofs store them.
	G1Compressed = bls.SizeOfG1AffineCompressed // 48
	G2Compressed = bls.SizeOfG2AffineCompressed // 96
)

// Errors returned (wrapped).
var (
	// ErrFormat: a file or byte string is not in the expected layout
	// (truncated, trailing bytes, a count that does not fit).
	ErrFormat = errors.New("malformed groth16 data")
	// ErrPoint: an encoded point is invalid: bad flag bits, a coordinate
	// not below the field modulus, not on the curve, not in the prime-order
	// subgroup (when checked), or the point at infinity where bellperson
	// forbids it.
	ErrPoint = errors.New("invalid curve point")
	// ErrMismatch: parameters that do not fit the circuit or key they are
	// combined with.
	ErrMismatch = errors.New("groth16 parameters do not fit")
	// ErrInvalidProof: the proof does not verify.
	ErrInvalidProof = errors.New("invalid proof")
)

// zcash flag bits in the first byte of an encoded point.
const (
	flagCompressed = 0x80
	flagInfinity   = 0x40
	flagSort       = 0x20
	flagMask       = flagCompressed | flagInfinity | flagSort
)

// Check selects the checks a decoder makes beyond the encoding itself.
type Check uint8

const (
	// CheckCurve checks that points are on the curve (always done: a point
	// off the curve is never accepted). It is bellperson's "unchecked"
	// mode (from_uncompressed_unchecked), which Filecoin uses for its
	// large parameter files.
	CheckCurve Check = iota
	// CheckSubgroup also checks membership of the prime-order subgroup
	// (bellperson's checked mode, from_uncompressed).
	CheckSubgroup
)

func allZero(b []byte) bool {
	for _, x := range b {
		if x != 0 {
			return false
		}
	}
	return true
}

// decodeG1Uncompressed decodes a zcash uncompressed G1 point (96 bytes):
// the infinity flag with every other bit zero, or x | y big-endian with
// no flag set. Off-curve points are rejected; the subgroup per check.
func decodeG1Uncompressed(b []byte, p *bls.G1Affine, check Check) error {
	if len(b) < G1Uncompressed {
		return fmt.Errorf("G1 point: %d bytes, want %d: %w", len(b), G1Uncompressed, ErrFormat)
	}
	b = b[:G1Uncompressed]
	f := b[0] & flagMask
	switch f {
	case flagInfinity:
		if b[0]&^flagMask != 0 || !allZero(b[1:]) {
			return fmt.Errorf("G1 point at infinity with nonzero bits: %w", ErrPoint)
		}
		*p = bls.G1Affine{}
		return nil
	case 0:
	default:
		return fmt.Errorf("G1 uncompressed point with flags %#02x: %w", f, ErrPoint)
	}
	if err := p.X.SetBytesCanonical(b[:fp.Bytes]); err != nil {
		return fmt.Errorf("G1 point x: %w: %w", ErrPoint, err)
	}
	if err := p.Y.SetBytesCanonical(b[fp.Bytes:]); err != nil {
		return fmt.Errorf("G1 point y: %w: %w", ErrPoint, err)
	}
	// gnark represents infinity as (0, 0); without the flag it is an
	// off-curve point.
	if p.IsInfinity() || !p.IsOnCurve() {
		return fmt.Errorf("G1 point not on the curve: %w", ErrPoint)
	}
	if check == CheckSubgroup && !p.IsInSubGroup() {
		return fmt.Errorf("G1 point not in the subgroup: %w", ErrPoint)
	}
	return nil
}

// decodeG2Uncompressed decodes a zcash uncompressed G2 point (192 bytes):
// x.c1 | x.c0 | y.c1 | y.c0 big-endian, or the infinity flag.
func decodeG2Uncompressed(b []byte, p *bls.G2Affine, check Check) error {
	if len(b) < G2Uncompressed {
		return fmt.Errorf("G2 point: %d bytes, want %d: %w", len(b), G2Uncompressed, ErrFormat)
	}
	b = b[:G2Uncompressed]
	f := b[0] & flagMask
	switch f {
	case flagInfinity:
		if b[0]&^flagMask != 0 || !allZero(b[1:]) {
			return fmt.Errorf("G2 point at infinity with nonzero bits: %w", ErrPoint)
		}
		*p = bls.G2Affine{}
		return nil
	case 0:
	default:
		return fmt.Errorf("G2 uncompressed point with flags %#02x: %w", f, ErrPoint)
	}
	for i, dst := range []*fp.Element{&p.X.A1, &p.X.A0, &p.Y.A1, &p.Y.A0} {
		if err := dst.SetBytesCanonical(b[i*fp.Bytes : (i+1)*fp.Bytes]); err != nil {
			return fmt.Errorf("G2 point coordinate %d: %w: %w", i, ErrPoint, err)
		}
	}
	if p.IsInfinity() || !p.IsOnCurve() {
		return fmt.Errorf("G2 point not on the curve: %w", ErrPoint)
	}
	if check == CheckSubgroup && !p.IsInSubGroup() {
		return fmt.Errorf("G2 point not in the subgroup: %w", ErrPoint)
	}
	return nil
}

// decodeG1Compressed decodes a zcash compressed G1 point (48 bytes) with
// curve and subgroup checks (gnark-crypto's SetBytes, whose compressed
// form is the zcash one).
func decodeG1Compressed(b []byte, p *bls.G1Affine) error {
	if len(b) < G1Compressed {
		return fmt.Errorf("G1 point: %d bytes, want %d: %w", len(b), G1Compressed, ErrFormat)
	}
	if b[0]&flagCompressed == 0 {
		return fmt.Errorf("G1 point: compression flag not set: %w", ErrPoint)
	}
	if _, err := p.SetBytes(b[:G1Compressed]); err != nil {
		return fmt.Errorf("G1 point: %w: %w", ErrPoint, err)
	}
	return nil
}

// decodeG2Compressed decodes a zcash compressed G2 point (96 bytes) with
// curve and subgroup checks.
func decodeG2Compressed(b []byte, p *bls.G2Affine) error {
	if len(b) < G2Compressed {
		return fmt.Errorf("G2 point: %d bytes, want %d: %w", len(b), G2Compressed, ErrFormat)
	}
	if b[0]&flagCompressed == 0 {
		return fmt.Errorf("G2 point: compression flag not set: %w", ErrPoint)
	}
	if _, err := p.SetBytes(b[:G2Compressed]); err != nil {
		return fmt.Errorf("G2 point: %w: %w", ErrPoint, err)
	}
	return nil
}

// DecodeG1 decodes one point in the zcash uncompressed (96 bytes) or
// compressed (48 bytes) form, chosen by the compression flag, with curve
// and subgroup checks. The point at infinity is accepted.
func DecodeG1(b []byte) (bls.G1Affine, error) {
	var p bls.G1Affine
	var err error
	if len(b) > 0 && b[0]&flagCompressed != 0 {
		if len(b) != G1Compressed {
			return p, fmt.Errorf("compressed G1 point of %d bytes: %w", len(b), ErrFormat)
		}
		err = decodeG1Compressed(b, &p)
	} else {
		if len(b) != G1Uncompressed {
			return p, fmt.Errorf("uncompressed G1 point of %d bytes: %w", len(b), ErrFormat)
		}
		err = decodeG1Uncompressed(b, &p, CheckSubgroup)
	}
	return p, err
}

// DecodeG2 is DecodeG1 for G2 (192 or 96 bytes).
func DecodeG2(b []byte) (bls.G2Affine, error) {
	var p bls.G2Affine
	var err error
	if len(b) > 0 && b[0]&flagCompressed != 0 {
		if len(b) != G2Compressed {
			return p, fmt.Errorf("compressed G2 point of %d bytes: %w", len(b), ErrFormat)
		}
		err = decodeG2Compressed(b, &p)
	} else {
		if len(b) != G2Uncompressed {
			return p, fmt.Errorf("uncompressed G2 point of %d bytes: %w", len(b), ErrFormat)
		}
		err = decodeG2Uncompressed(b, &p, CheckSubgroup)
	}
	return p, err
}

// EncodeG1 returns p in the zcash uncompressed form (gnark-crypto's
// RawBytes, which is that form).
func EncodeG1(p *bls.G1Affine) [G1Uncompressed]byte { return p.RawBytes() }

// EncodeG2 returns p in the zcash uncompressed form.
func EncodeG2(p *bls.G2Affine) [G2Uncompressed]byte { return p.RawBytes() }
