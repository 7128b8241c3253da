// Package commcid reads Filecoin's sector commitments as they arrive from
// outside: the raw 32 bytes, or the bytes of their CID (CIDv1 of codec
// fil-commitment-sealed with multihash poseidon-bls12_381-a2-fc1 for a
// CommR, fil-commitment-unsealed with sha2-256-trunc254-padded for a
// CommD), as go-fil-commcid writes them (CIDToReplicaCommitmentV1 and
// CIDToDataCommitmentV1 read them). Curio's cuzk client sends the raw
// digests; the proto's older callers and other tools send CID bytes. The
// two are told apart by length and by the CID's prefix, never guessed.
package commcid

import (
	"encoding/base32"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
)

// Kind is which commitment a value is.
type Kind int

const (
	// Sealed is a replica commitment (CommR): fil-commitment-sealed,
	// poseidon-bls12_381-a2-fc1.
	Sealed Kind = iota
	// Unsealed is a data commitment (CommD): fil-commitment-unsealed,
	// sha2-256-trunc254-padded.
	Unsealed
)

// The multicodec table's codes (multiformats/multicodec table.csv, as
// go-multicodec and go-fil-commcid name them).
const (
	cidV1                  = 0x01
	codecUnsealed          = 0xf101 // fil-commitment-unsealed
	codecSealed            = 0xf102 // fil-commitment-sealed
	hashSHA256Trunc254     = 0x1012 // sha2-256-trunc254-padded
	hashPoseidonBLS12381A2 = 0xb401 // poseidon-bls12_381-a2-fc1
)

// ErrNotCommitment is wrapped by every error of Parse.
var ErrNotCommitment = errors.New("not a Filecoin commitment")

func (k Kind) String() string {
	if k == Sealed {
		return "replica commitment (CommR)"
	}
	return "data commitment (CommD)"
}

func (k Kind) codes() (codec, hash uint64) {
	if k == Sealed {
		return codecSealed, hashPoseidonBLS12381A2
	}
	return codecUnsealed, hashSHA256Trunc254
}

// Parse returns the 32-byte commitment b holds: b itself when it is 32
// bytes, else the digest of the CID whose bytes b is, which must be a CIDv1
// of k's codec and multihash with a 32-byte digest and nothing after it.
// Every error names what is wrong and wraps ErrNotCommitment.
func Parse(b []byte, k Kind) ([32]byte, error) {
	var out [32]byte
	if len(b) == 32 {
		copy(out[:], b)
		return out, nil
	}
	fail := func(format string, a ...any) ([32]byte, error) {
		return [32]byte{}, fmt.Errorf("%s of %d bytes: %s: %w", k, len(b), fmt.Sprintf(format, a...), ErrNotCommitment)
	}
	if len(b) == 0 {
		return fail("empty")
	}
	r := b
	next := func() (uint64, bool) {
		v, n := binary.Uvarint(r)
		if n <= 0 {
			return 0, false
		}
		r = r[n:]
		return v, true
	}
	version, ok := next()
	if !ok || version != cidV1 {
		return fail("neither 32 raw bytes nor a CIDv1 (version %d)", version)
	}
	wantCodec, wantHash := k.codes()
	codec, ok := next()
	if !ok {
		return fail("CID ends in its codec")
	}
	if codec != wantCodec {
		return fail("CID codec 0x%x, want 0x%x", codec, wantCodec)
	}
	hash, ok := next()
	if !ok {
		return fail("CID ends in its multihash code")
	}
	if hash != wantHash {
		return fail("CID multihash 0x%x, want 0x%x", hash, wantHash)
	}
	n, ok := next()
	if !ok || n != 32 {
		return fail("CID digest length %d, want 32", n)
	}
	if len(r) != 32 {
		return fail("CID digest of %d bytes after its prefix, want exactly 32", len(r))
	}
	copy(out[:], r)
	return out, nil
}

// CID returns the bytes of the CID of commitment c of kind k.
func CID(c [32]byte, k Kind) []byte {
	codec, hash := k.codes()
	b := binary.AppendUvarint(nil, cidV1)
	b = binary.AppendUvarint(b, codec)
	b = binary.AppendUvarint(b, hash)
	b = binary.AppendUvarint(b, 32)
	return append(b, c[:]...)
}

// String is the CID of commitment c of kind k as go-cid prints it:
// multibase base32, lowercase, unpadded ("baga6ea4seaq..." for a CommD,
// "bagboea4b5abc..." for a CommR).
func String(c [32]byte, k Kind) string {
	return "b" + strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(CID(c, k)))
}

// ParseString is Parse of a CID string as go-cid prints it (multibase
// base32, "b" then lowercase, unpadded).
func ParseString(s string, k Kind) ([32]byte, error) {
	rest, ok := strings.CutPrefix(s, "b")
	if !ok {
		return [32]byte{}, fmt.Errorf("%s %q: not a base32 multibase CID: %w", k, s, ErrNotCommitment)
	}
	b, err := base32.StdEncoding.WithPadding(base32.NoPadding).DecodeString(strings.ToUpper(rest))
	if err != nil {
		return [32]byte{}, fmt.Errorf("%s %q: %v: %w", k, s, err, ErrNotCommitment)
	}
	return Parse(b, k)
}
