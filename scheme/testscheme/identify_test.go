package testscheme

import (
	"bytes"
	"context"
	"encoding/json"
	"regexp"
	"testing"

	"github.com/c2flow/c2flow/internal/jsonform"
	"github.com/c2flow/c2flow/job"
	"github.com/c2flow/c2flow/scheme"
	"github.com/c2flow/c2flow/scheme/testscheme/params"
	"github.com/c2flow/c2flow/scheme/testscheme/porep"
	"github.com/c2flow/c2flow/scheme/testscheme/porep/poreptest"
)

// A test-scheme C1's identity is its content: the same C1 compact,
// reindented, its keys reversed or its hex in upper case is one sector
// identity, whose digest is that of the canonical bytes (C1.Encode's,
// what c2flow seal writes) that Identify returns for storage and Decode
// reads; another C1 of the same sector, or another sector, is another.
func TestIdentityIsContent(t *testing.T) {
	ctx := context.Background()
	sc := New(params.DirStore{Root: t.TempDir()})
	encode := func(c *porep.C1) []byte {
		var b bytes.Buffer
		if err := c.Encode(&b); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	canon := encode(poreptest.Sector(t, "2KiB", 5).C1())
	var compact bytes.Buffer
	if err := json.Compact(&compact, canon); err != nil {
		t.Fatal(err)
	}
	indented, err := jsonform.Indent(canon)
	if err != nil {
		t.Fatal(err)
	}
	reversed, err := jsonform.ReverseKeys(canon)
	if err != nil {
		t.Fatal(err)
	}
	upper := regexp.MustCompile(`0x[0-9a-f]{64}`).ReplaceAllFunc(canon, func(h []byte) []byte {
		return append([]byte("0x"), bytes.ToUpper(h[2:])...)
	})
	want, got, err := sc.Identify(ctx, "5.json", canon, scheme.Hints{})
	if err != nil {
		t.Fatal(err)
	}
	if want.InputDigest != job.Digest(canon) || !bytes.Equal(got, canon) {
		t.Fatalf("the canonical C1 is not its own canonical form: %+v", want)
	}
	for _, v := range []struct {
		name string
		raw  []byte
	}{{"compact", compact.Bytes()}, {"reindented", indented}, {"keys reversed", reversed}, {"upper-case hex", upper}} {
		if bytes.Equal(v.raw, canon) {
			t.Fatalf("%s: the same bytes as the canonical form", v.name)
		}
		ref, c, err := sc.Identify(ctx, "5.json", v.raw, scheme.Hints{})
		if err != nil {
			t.Fatalf("%s: %v", v.name, err)
		}
		if ref != want || !bytes.Equal(c, canon) {
			t.Errorf("%s: identity %s %s (%d canonical bytes), want %s", v.name, ref.Identity(), ref.Proof, len(c), want.Identity())
		}
	}
	// What is stored is what a worker decodes.
	if _, err := sc.Decode(got, want); err != nil {
		t.Fatalf("the canonical bytes do not decode: %v", err)
	}

	info := poreptest.Info(5)
	info.Ticket[1] = 9
	p, err := porep.LookupProfile("2KiB")
	if err != nil {
		t.Fatal(err)
	}
	reticketed, err := porep.Seal(p, info)
	if err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]*porep.C1{"sector 5 with another ticket": reticketed.C1(), "sector 6": poreptest.Sector(t, "2KiB", 6).C1()} {
		ref, _, err := sc.Identify(ctx, "x.json", encode(c), scheme.Hints{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if ref.InputDigest == want.InputDigest {
			t.Errorf("%s: the identity of sector 5's C1 (%s)", name, ref.InputDigest)
		}
	}
}
