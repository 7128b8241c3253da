package c1

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"os"
	"testing"

	"github.com/c2flow/c2flow/filecoin/proofs"
)

// The testdata/serde_* files were written by serde_json::to_vec (serde
// 1.0.152, serde_json 1.0.87, Debian bookworm's librust-serde-json-dev)
// from Rust structs and enums declared with the same fields, order, serde
// attributes and PhantomData members as the upstream types listed in the
// package documentation (SealCommitPhase1Output and below), filled with
// values from an xorshift generator. They pin what serde, not this
// package, makes of those declarations: byte arrays and domain newtypes as
// arrays of numbers, externally tagged enums, Column's _h as null, the
// skipped PhantomData fields absent, no whitespace.
//
//	serde_2kib.json.gz    a 2KiB StackedDrg2KiBV1_1 C1, seed bytes 0xff-topped (sha256 of the
//	                      uncompressed file 786affaef3f5bd51c533b73c0e65197f0e36b49899eb68aa7229ca95b2605abe)
//	serde_sub_32gib.json  a MerkleProof<Poseidon, U8, U8, U0> (ProofData::Sub), 9 base elements
//	serde_top_64gib.json  a MerkleProof<Poseidon, U8, U8, U2> (ProofData::Top)
//
// The same Rust program read back this package's encodings of random
// 2KiB, 8MiB, 32GiB and 64GiB C1s and serde_json::to_vec wrote them out
// byte for byte unchanged.

func readFixture(t *testing.T, name string) []byte {
	t.Helper()
	f, err := os.Open("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var r io.Reader = f
	if bytes.HasSuffix([]byte(name), []byte(".gz")) {
		zr, err := gzip.NewReader(f)
		if err != nil {
			t.Fatal(err)
		}
		r = zr
	}
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestSerdeFixture decodes a C1 written by serde_json and re-encodes it
// byte for byte.
func TestSerdeFixture(t *testing.T) {
	b := readFixture(t, "serde_2kib.json.gz")
	c, err := Unmarshal(b, WithProof(proofs.StackedDrg2KiBV1_1))
	if err != nil {
		t.Fatal(err)
	}
	if c.Seed[31] != 0xff {
		t.Errorf("seed byte 31 = %#x, want 0xff", c.Seed[31])
	}
	got := mustMarshal(t, c)
	if !bytes.Equal(got, b) {
		i := 0
		for i < len(got) && i < len(b) && got[i] == b[i] {
			i++
		}
		t.Fatalf("re-encoding differs from serde_json at byte %d: ours %q, serde %q",
			i, got[max(0, i-40):min(len(got), i+40)], b[max(0, i-40):min(len(b), i+40)])
	}
}

// TestSerdeSubTop decodes serde_json's Sub and Top Merkle proofs with the
// 32GiB and 64GiB tree shapes and re-encodes them byte for byte.
func TestSerdeSubTop(t *testing.T) {
	for _, tc := range []struct {
		file  string
		proof proofs.RegisteredSealProof
	}{
		{"serde_sub_32gib.json", proofs.StackedDrg32GiBV1_1},
		{"serde_top_64gib.json", proofs.StackedDrg64GiBV1_1},
	} {
		b := readFixture(t, tc.file)
		info, _ := tc.proof.Info()
		s := shapeOf(info)
		lim := &limitReader{r: bytes.NewReader(b), limit: int64(len(b))}
		d := &decoder{dec: json.NewDecoder(lim), lim: lim, cfg: &config{}, s: s, sFrom: info.Name}
		d.dec.UseNumber()
		var m MerkleProof
		if err := d.merkle(&m, s.tree, s.treeBase, s.treeSub, s.treeTop); err != nil {
			t.Fatalf("%s: %v", tc.file, err)
		}
		v := &validator{s: s}
		if err := v.treeR(&m); err != nil {
			t.Fatalf("%s: %v", tc.file, err)
		}
		if n := len(m.Path()); n != s.treeBase+s.treeSub+s.treeTop {
			t.Errorf("%s: %d path elements", tc.file, n)
		}
		var out bytes.Buffer
		(&encoder{w: &out}).merkle(&m)
		if !bytes.Equal(out.Bytes(), b) {
			t.Fatalf("%s: re-encoding differs from serde_json", tc.file)
		}
	}
}
