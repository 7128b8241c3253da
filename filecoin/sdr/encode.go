package sdr

import (
	"fmt"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
)

// Encoding of the replica (storage-proofs-porep src/encode.rs): a replica
// node is data + key in the BLS12-381 scalar field, where the key is the
// node's last-layer label. Values are 32-byte little-endian canonical field
// elements (Fr::to_repr).

func frFromLE(op, what string, b *[32]byte) (fr.Element, error) {
	e, err := fr.LittleEndian.Element(b)
	if err != nil {
		return e, fmt.Errorf("%s: %s %x is not a canonical field element: %w", op, what, b[:], err)
	}
	return e, nil
}

// Encode returns key + value in Fr (little-endian). Both inputs must be
// canonical field elements.
func Encode(key, value [32]byte) ([32]byte, error) {
	var out [32]byte
	k, err := frFromLE("sdr encode", "key", &key)
	if err != nil {
		return out, err
	}
	v, err := frFromLE("sdr encode", "value", &value)
	if err != nil {
		return out, err
	}
	k.Add(&k, &v)
	fr.LittleEndian.PutElement(&out, k)
	return out, nil
}

// Decode returns encoded - key in Fr (little-endian), the inverse of Encode.
// Both inputs must be canonical field elements.
func Decode(key, encoded [32]byte) ([32]byte, error) {
	var out [32]byte
	k, err := frFromLE("sdr decode", "key", &key)
	if err != nil {
		return out, err
	}
	v, err := frFromLE("sdr decode", "encoded value", &encoded)
	if err != nil {
		return out, err
	}
	v.Sub(&v, &k)
	fr.LittleEndian.PutElement(&out, v)
	return out, nil
}

// EncodeNodes encodes a whole buffer node by node: dst[i] = keys[i] +
// data[i] for every 32-byte node. dst may alias data. All three slices must
// have the same length, a multiple of 32.
func EncodeNodes(dst, keys, data []byte) error {
	return mapNodes("sdr encode nodes", dst, keys, data, func(k, v *fr.Element) { v.Add(v, k) })
}

// DecodeNodes decodes a whole buffer node by node: dst[i] = encoded[i] -
// keys[i]. dst may alias encoded. All three slices must have the same
// length, a multiple of 32.
func DecodeNodes(dst, keys, encoded []byte) error {
	return mapNodes("sdr decode nodes", dst, keys, encoded, func(k, v *fr.Element) { v.Sub(v, k) })
}

func mapNodes(op string, dst, keys, src []byte, f func(k, v *fr.Element)) error {
	if len(keys) != len(src) || len(dst) != len(src) || len(src)%NodeSize != 0 {
		return fmt.Errorf("%s: lengths dst %d, keys %d, src %d must be equal multiples of %d", op, len(dst), len(keys), len(src), NodeSize)
	}
	for off := 0; off < len(src); off += NodeSize {
		k, err := frFromLE(op, fmt.Sprintf("key of node %d", off/NodeSize), (*[32]byte)(keys[off:]))
		if err != nil {
			return err
		}
		v, err := frFromLE(op, fmt.Sprintf("value of node %d", off/NodeSize), (*[32]byte)(src[off:]))
		if err != nil {
			return err
		}
		f(&k, &v)
		fr.LittleEndian.PutElement((*[32]byte)(dst[off:]), v)
	}
	return nil
}
