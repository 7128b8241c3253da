package commcid

import (
	"bytes"
	"encoding/base32"
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/c2flow/c2flow/filecoin/hash"
	"github.com/c2flow/c2flow/internal/upstreamdata"
)

// cidBytes decodes a CID string of multibase base32 ("b", lowercase, no
// padding), the form go-cid prints.
func cidBytes(t *testing.T, s string) []byte {
	t.Helper()
	if !strings.HasPrefix(s, "b") {
		t.Fatalf("%s: not base32 multibase", s)
	}
	b, err := base32.StdEncoding.WithPadding(base32.NoPadding).DecodeString(strings.ToUpper(s[1:]))
	if err != nil {
		t.Fatalf("%s: %v", s, err)
	}
	return b
}

// zeroCommD is the data commitment of a sector of zeros whose tree D has
// the given depth: Filecoin's binary SHA254 tree over 32-byte zero leaves.
func zeroCommD(depth int) [32]byte {
	var z [32]byte
	for range depth {
		z = hash.Sha254Node(z, z)
	}
	return z
}

// go-fil-commcid's vectors (TestPieceMhCIDandV1CIDPieceCommitmentConverters)
// give the empty 32GiB and 64GiB data commitments as CIDv1 strings: Parse
// finds in them the roots c2flow's own SHA254 computes for 2^30 and 2^31
// zero leaves, and CID writes the same bytes back. curio's postpub.json
// gives a sector's CommR CID: it parses as a replica commitment only.
func TestUpstreamCIDs(t *testing.T) {
	src := string(upstreamdata.Read(t, upstreamdata.CommCIDTest))
	for name, depth := range map[string]int{"empty32GiB": 30, "empty64GiB": 31} {
		m := regexp.MustCompile(`"` + name + `":\s*\{"(baga[a-z2-7]+)"`).FindStringSubmatch(src)
		if m == nil {
			t.Fatalf("no %s vector in go-fil-commcid's test", name)
		}
		b := cidBytes(t, m[1])
		got, err := ParseString(m[1], Unsealed)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if want := zeroCommD(depth); got != want {
			t.Fatalf("%s: digest %x, the zero tree's root is %x", name, got, want)
		}
		if String(got, Unsealed) != m[1] {
			t.Fatalf("%s: String gives %s, upstream %s", name, String(got, Unsealed), m[1])
		}
		if !bytes.Equal(CID(got, Unsealed), b) {
			t.Fatalf("%s: CID writes %x, upstream %x", name, CID(got, Unsealed), b)
		}
		if _, err := Parse(b, Sealed); !errors.Is(err, ErrNotCommitment) || !strings.Contains(err.Error(), "codec 0xf101") {
			t.Fatalf("%s as a CommR: %v", name, err)
		}
	}
	pub := string(upstreamdata.Read(t, upstreamdata.PostPubJSON))
	m := regexp.MustCompile(`"SealedCID":\{"/":"(bagboea4b5abc[a-z2-7]+)"\}`).FindStringSubmatch(pub)
	if m == nil {
		t.Fatal("no SealedCID in curio's postpub.json")
	}
	b := cidBytes(t, m[1])
	commR, err := Parse(b, Sealed)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(CID(commR, Sealed), b) || len(b) != 40 {
		t.Fatalf("CommR CID of %d bytes does not round-trip", len(b))
	}
	if _, err := Parse(b, Unsealed); !errors.Is(err, ErrNotCommitment) {
		t.Fatalf("a CommR CID as a CommD: %v", err)
	}
}

// Raw 32 bytes are the commitment; anything else that is not exactly a
// commitment CID is refused, saying what is wrong.
func TestParseRefuses(t *testing.T) {
	var c [32]byte
	c[0], c[31] = 0xaa, 0x0f
	if got, err := Parse(c[:], Sealed); err != nil || got != c {
		t.Fatalf("raw: %x, %v", got, err)
	}
	good := CID(c, Unsealed)
	for _, tc := range []struct {
		name string
		b    []byte
		want string
	}{
		{"empty", nil, "empty"},
		{"31 bytes", c[:31], "CIDv1"},
		{"CIDv0-ish", append([]byte{0x12, 0x20}, c[:]...), "CIDv1"},
		{"other codec", append([]byte{0x01, 0x71}, good[4:]...), "codec 0x71"},
		{"other hash", append(append([]byte{}, good[:4]...), append([]byte{0x12, 0x20}, c[:]...)...), "multihash 0x12"},
		{"short digest", good[:len(good)-1], "31 bytes"},
		{"trailing byte", append(append([]byte{}, good...), 0), "33 bytes"},
		{"digest length 20", append(append([]byte{}, good[:6]...), append([]byte{20}, c[:20]...)...), "length 20"},
		{"truncated prefix", good[:2], "ends in"},
	} {
		_, err := Parse(tc.b, Unsealed)
		if !errors.Is(err, ErrNotCommitment) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "CommD") {
			t.Errorf("%s (%x): %v, want an error saying %q", tc.name, tc.b, err, tc.want)
		}
	}
	if got, err := Parse(good, Unsealed); err != nil || got != c {
		t.Fatalf("CID: %x, %v", got, err)
	}
}
