package hash

import (
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
)

// Domain is a Poseidon hash value (filecoin-hashers' PoseidonDomain): a
// BLS12-381 scalar encoded as 32 little-endian bytes, the encoding of
// blstrs' Scalar::to_repr. A Domain read from outside may be non-canonical
// (not below the field modulus); [Domain.Element] rejects such values.
type Domain [32]byte

// ErrNonCanonical is returned when 32 bytes do not encode a canonical
// BLS12-381 scalar (their little-endian value is not below the modulus).
var ErrNonCanonical = errors.New("bytes are not a canonical BLS12-381 scalar")

// ElementFromLE decodes 32 little-endian bytes into a field element. It
// returns an error wrapping [ErrNonCanonical] when the value is not below the
// modulus, where blstrs' from_repr would return None.
func ElementFromLE(b [32]byte) (fr.Element, error) {
	e, err := fr.LittleEndian.Element(&b)
	if err != nil {
		return fr.Element{}, fmt.Errorf("decode scalar %s: %w", hex.EncodeToString(b[:]), ErrNonCanonical)
	}
	return e, nil
}

// ElementToLE encodes a field element as 32 canonical little-endian bytes
// (blstrs' to_repr).
func ElementToLE(e fr.Element) [32]byte {
	var b [32]byte
	fr.LittleEndian.PutElement(&b, e)
	return b
}

// DomainOf returns the Domain encoding of a field element.
func DomainOf(e fr.Element) Domain { return Domain(ElementToLE(e)) }

// Element decodes d into a field element, with an error wrapping
// [ErrNonCanonical] when d is not canonical.
func (d Domain) Element() (fr.Element, error) { return ElementFromLE(d) }

// IsCanonical reports whether d encodes a canonical field element.
func (d Domain) IsCanonical() bool {
	_, err := fr.LittleEndian.Element((*[32]byte)(&d))
	return err == nil
}

// String returns d as lowercase hex, byte 0 first (the order Filecoin prints
// domains in).
func (d Domain) String() string { return hex.EncodeToString(d[:]) }

// Format implements fmt.Formatter so that %x and %X print d's 32 bytes in
// hex (with their flags, as for a [32]byte) rather than the hex of String's
// text. %s, %v and %q print String(); %#v and every other verb format the
// [32]byte value.
func (d Domain) Format(f fmt.State, verb rune) {
	if verb == 's' || verb == 'q' || verb == 'v' && !f.Flag('#') {
		fmt.Fprintf(f, fmt.FormatString(f, verb), d.String())
		return
	}
	fmt.Fprintf(f, fmt.FormatString(f, verb), [32]byte(d))
}
