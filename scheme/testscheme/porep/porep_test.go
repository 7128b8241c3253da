package porep

import (
	"bytes"
	"encoding/json"
	"errors"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"reflect"
	"strings"
	"testing"
)

func testSector(t testing.TB, profile string, id uint64) *Sector {
	t.Helper()
	p, err := LookupProfile(profile)
	if err != nil {
		t.Fatal(err)
	}
	info := SectorInfo{SectorID: id}
	info.Seed[0], info.Ticket[0], info.ProverID[0] = 1, 2, 3
	s, err := Seal(p, info)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestSealedSectorsVerify(t *testing.T) {
	h := NewHasher()
	for _, name := range []string{"2KiB", "32KiB", "256MiB"} {
		t.Run(name, func(t *testing.T) {
			s := testSector(t, name, 7)
			c1 := s.C1()
			if err := c1.Verify(h); err != nil {
				t.Fatalf("sealed sector does not verify: %v", err)
			}
			if len(c1.Partitions) != s.Profile.Partitions {
				t.Fatalf("got %d partitions, want %d", len(c1.Partitions), s.Profile.Partitions)
			}
		})
	}
}

func TestSparseSectorIsDeterministic(t *testing.T) {
	a, b := testSector(t, "256MiB", 9), testSector(t, "256MiB", 9)
	if !a.CommR.Equal(&b.CommR) {
		t.Fatal("two seals of the same sector differ")
	}
	if c := testSector(t, "256MiB", 10); c.CommR.Equal(&a.CommR) {
		t.Fatal("different sectors share comm_r")
	}
}

// A faulty sealer whose trees are built over a wrong label passes every
// opening but fails the label recomputation.
func TestWrongLabelFailsLabelCheck(t *testing.T) {
	p, _ := LookupProfile("2KiB")
	info := SectorInfo{SectorID: 1}
	info.Seed[0] = 1
	probe, err := Seal(p, info)
	if err != nil {
		t.Fatal(err)
	}
	target := probe.VanillaProofs()[0].Challenges[1].Node
	s, err := seal(p, info, func(l int, n uint64, v *fr.Element) {
		if l == 2 && n == target {
			v.SetUint64(77)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	err = s.C1().Verify(NewHasher())
	var pe *ProofError
	if !errors.Is(err, ErrLabel) || !errors.As(err, &pe) || pe.Challenge != 1 || pe.Field != "column[1]" {
		t.Fatalf("got %v, want a label error at challenge 1, column[1]", err)
	}
}

func TestC1RoundTrip(t *testing.T) {
	for _, name := range []string{"2KiB", "32KiB"} {
		c1 := testSector(t, name, 3).C1()
		var buf bytes.Buffer
		if err := c1.Encode(&buf); err != nil {
			t.Fatal(err)
		}
		got, err := DecodeC1(bytes.NewReader(buf.Bytes()))
		if err != nil {
			t.Fatalf("%s: decode: %v", name, err)
		}
		if !reflect.DeepEqual(got, c1) {
			t.Fatalf("%s: round trip differs", name)
		}
		if err := got.Verify(NewHasher()); err != nil {
			t.Fatalf("%s: decoded C1 does not verify: %v", name, err)
		}
	}
}

func TestDecodeRejectsMalformed(t *testing.T) {
	var buf bytes.Buffer
	if err := testSector(t, "2KiB", 3).C1().Encode(&buf); err != nil {
		t.Fatal(err)
	}
	good := buf.Bytes()
	edit := func(f func(m map[string]any)) []byte {
		var m map[string]any
		if err := json.Unmarshal(good, &m); err != nil {
			t.Fatal(err)
		}
		f(m)
		b, _ := json.Marshal(m)
		return b
	}
	ch0 := func(m map[string]any) map[string]any {
		return m["vanilla_proofs"].([]any)[0].(map[string]any)["challenges"].([]any)[0].(map[string]any)
	}
	const rMinus1 = "0x73eda753299d7d483339d80809a1d80553bda402fffe5bfeffffffff00000000"
	const r = "0x73eda753299d7d483339d80809a1d80553bda402fffe5bfeffffffff00000001"
	cases := []struct {
		name  string
		in    []byte
		want  error
		field string
	}{
		{"truncated", good[:len(good)/2], ErrMalformed, "(file)"},
		{"trailing data", append(append([]byte{}, good...), []byte("{}")...), ErrMalformed, "(file)"},
		{"unknown field", edit(func(m map[string]any) { m["extra"] = 1 }), ErrMalformed, `unknown field "extra"`},
		// Two sector ids in one object: encoding/json would keep the last.
		{"duplicate key", bytes.Replace(good, []byte(`"sector_id":`), []byte(`"sector_id":99,"sector_id":`), 1), ErrMalformed, "sector_id"},
		{"version", edit(func(m map[string]any) { m["version"] = 2 }), ErrVersion, "version"},
		{"unknown profile", edit(func(m map[string]any) { m["registered_proof"] = "64GiB" }), ErrProfile, "registered_proof"},
		{"missing partition", edit(func(m map[string]any) { m["vanilla_proofs"] = []any{} }), ErrLength, "vanilla_proofs"},
		{"short hash", edit(func(m map[string]any) { m["comm_d"] = "0x1234" }), ErrLength, "comm_d"},
		{"not hex", edit(func(m map[string]any) { m["ticket"] = "0x" + strings.Repeat("zz", 32) }), ErrMalformed, "ticket"},
		{"out of field (= r)", edit(func(m map[string]any) { m["comm_r"] = r }), ErrOutOfField, "comm_r"},
		{"path too short", edit(func(m map[string]any) { c := ch0(m); c["data_path"] = c["data_path"].([]any)[1:] }), ErrLength, "vanilla_proofs[0].challenges[0].data_path"},
		{"out of field element in path", edit(func(m map[string]any) { ch0(m)["column_path"].([]any)[3] = r }), ErrOutOfField, "vanilla_proofs[0].challenges[0].column_path[3]"},
		{"missing parent", edit(func(m map[string]any) { c := ch0(m); c["drg_parents"] = c["drg_parents"].([]any)[1:] }), ErrLength, "vanilla_proofs[0].challenges[0].drg_parents"},
		{"node outside sector", edit(func(m map[string]any) { ch0(m)["node"] = 1 << 20 }), ErrMalformed, "vanilla_proofs[0].challenges[0].node"},
		{"wrong type", edit(func(m map[string]any) { m["sector_id"] = "seven" }), ErrMalformed, "sector_id"},
		{"oversize", append(append([]byte{}, good...), bytes.Repeat([]byte(" "), int(MaxC1Bytes()))...), ErrTooLarge, "(file)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := DecodeC1(bytes.NewReader(tc.in))
			var fe *FieldError
			if !errors.As(err, &fe) || !errors.Is(err, tc.want) {
				t.Fatalf("got %v, want %v", err, tc.want)
			}
			if fe.Field != tc.field {
				t.Fatalf("error names field %q, want %q (%v)", fe.Field, tc.field, err)
			}
		})
	}
	// r-1 is canonical: the bound is exact.
	if _, err := DecodeC1(bytes.NewReader(edit(func(m map[string]any) { m["comm_r"] = rMinus1 }))); err != nil {
		t.Fatalf("r-1 rejected: %v", err)
	}
}

func TestProfileSizeBound(t *testing.T) {
	// A 2KiB C1 padded past its own profile's bound (but under the global one) is refused.
	var buf bytes.Buffer
	if err := testSector(t, "2KiB", 3).C1().Encode(&buf); err != nil {
		t.Fatal(err)
	}
	p, _ := LookupProfile("2KiB")
	padded := append(buf.Bytes(), bytes.Repeat([]byte("\n"), int(p.MaxC1Bytes()))...)
	_, err := DecodeC1(bytes.NewReader(padded))
	if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "2KiB") {
		t.Fatalf("got %v", err)
	}
}
