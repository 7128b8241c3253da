package c1

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/c2flow/c2flow/filecoin/proofs"
)

// filler sets every value of a skeleton C1 to random valid data.
type filler struct {
	r *rand.Rand
	s *shape
}

// poseidon returns a random canonical scalar in little-endian form; one
// in four is r-1, the largest canonical value.
func (f *filler) poseidon() (d [32]byte) {
	if f.r.IntN(4) == 0 {
		var e fr.Element
		e.SetOne()
		e.Neg(&e) // r - 1
		b := e.Bytes()
		for i := range b {
			d[i] = b[31-i]
		}
		return d
	}
	for i := 0; i < 32; i += 8 {
		binary.LittleEndian.PutUint64(d[i:], f.r.Uint64())
	}
	d[31] &= 0x3f // below 2^254 < r
	if f.r.IntN(2) == 0 {
		d[31] |= 0x40 // 2^254 <= value: still canonical while below r
		if !IsCanonicalScalar(&d) {
			d[31] = 0x3f
		}
	}
	return d
}

func (f *filler) sha() (d [32]byte) {
	for i := 0; i < 32; i += 8 {
		binary.LittleEndian.PutUint64(d[i:], f.r.Uint64())
	}
	d[31] &= 0x3f
	return d
}

func (f *filler) all(ds [][32]byte, gen func() [32]byte) {
	for i := range ds {
		ds[i] = gen()
	}
}

func (f *filler) merkle(m *MerkleProof, gen func() [32]byte) {
	for level := 0; level < 3; level++ {
		if ip := pathOf(m, level); ip != nil {
			for i := range ip.Path {
				f.all(ip.Path[i].Hashes, gen)
				ip.Path[i].Index = uint64(f.r.IntN(len(ip.Path[i].Hashes) + 1))
			}
		}
	}
	root, leaf := gen(), gen()
	switch d := &m.Data; {
	case d.Single != nil:
		d.Single.Root, d.Single.Leaf = root, leaf
	case d.Sub != nil:
		d.Sub.Root, d.Sub.Leaf = root, leaf
	case d.Top != nil:
		d.Top.Root, d.Top.Leaf = root, leaf
	}
}

func (f *filler) column(cp *ColumnProof) {
	cp.Column.Index = uint32(f.r.Uint64N(f.s.nodes))
	f.all(cp.Column.Rows, f.poseidon)
	f.merkle(&cp.InclusionProof, f.poseidon)
}

// randomC1 returns a valid C1 of proof p with random contents.
func randomC1(t testing.TB, p proofs.RegisteredSealProof, seed uint64) *SealCommitPhase1Output {
	t.Helper()
	c, err := Skeleton(p)
	if err != nil {
		t.Fatal(err)
	}
	info, _ := proofs.Lookup(p)
	f := &filler{r: rand.New(rand.NewPCG(seed, uint64(p))), s: shapeOf(info)}
	c.CommR, c.CommD, c.ReplicaID = f.poseidon(), f.sha(), f.poseidon()
	for i := range c.Seed {
		c.Seed[i], c.Ticket[i] = byte(f.r.Uint32()), byte(f.r.Uint32())
	}
	for _, part := range c.VanillaProofs.Partitions {
		for i := range part {
			pr := &part[i]
			node := f.r.Uint64N(f.s.nodes)
			f.merkle(&pr.CommDProofs, f.sha)
			f.merkle(&pr.CommRLastProof, f.poseidon)
			f.column(&pr.ReplicaColumnProofs.CX)
			for j := range pr.ReplicaColumnProofs.DrgParents {
				f.column(&pr.ReplicaColumnProofs.DrgParents[j])
			}
			for j := range pr.ReplicaColumnProofs.ExpParents {
				f.column(&pr.ReplicaColumnProofs.ExpParents[j])
			}
			for j := range pr.LabelingProofs {
				f.all(pr.LabelingProofs[j].Parents, f.poseidon)
				pr.LabelingProofs[j].Node = node
			}
			f.all(pr.EncodingProof.Parents, f.poseidon)
			pr.EncodingProof.Node = node
		}
	}
	if err := Validate(c); err != nil {
		t.Fatalf("randomC1(%s): %v", p, err)
	}
	return c
}

func mustMarshal(t testing.TB, c *SealCommitPhase1Output) []byte {
	t.Helper()
	b, err := Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// roundTrip checks decode(encode(c)) == c and encode(decode(b)) == b, raw
// and wrapped, through every entry point.
func roundTrip(t *testing.T, c *SealCommitPhase1Output) {
	t.Helper()
	b := mustMarshal(t, c)
	var streamed bytes.Buffer
	if err := Encode(&streamed, c); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(streamed.Bytes(), b) {
		t.Fatal("Encode and Marshal differ")
	}

	got, err := Unmarshal(b)
	if err != nil {
		t.Fatalf("Unmarshal: %v", err)
	}
	if !reflect.DeepEqual(got, c) {
		t.Fatal("Unmarshal(Marshal(c)) != c")
	}
	if again := mustMarshal(t, got); !bytes.Equal(again, b) {
		t.Fatal("Marshal(Unmarshal(b)) != b")
	}

	// Through a reader without Len, and with the expected proof.
	a, err := Decode(struct{ io.Reader }{bytes.NewReader(b)}, WithProof(c.RegisteredProof))
	if err != nil || a.Wrapped || !reflect.DeepEqual(a.C1, c) {
		t.Fatalf("Decode(raw) = wrapped %v, equal %v, %v", a != nil && a.Wrapped, a != nil && reflect.DeepEqual(a.C1, c), err)
	}

	// Wrapped: byte-identical to encoding/json's Commit2In, and decoded back.
	w, err := MarshalCommit2In(42, c)
	if err != nil {
		t.Fatal(err)
	}
	info, _ := c.RegisteredProof.Info()
	want, err := json.Marshal(Commit2In{SectorNum: 42, Phase1Out: b, SectorSize: info.SectorSize})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(w, want) {
		t.Fatalf("MarshalCommit2In differs from json.Marshal(Commit2In)")
	}
	a, err = DecodeBytes(w)
	if err != nil {
		t.Fatalf("DecodeBytes(wrapped): %v", err)
	}
	if !a.Wrapped || a.SectorNum != 42 || a.SectorSize != info.SectorSize || !reflect.DeepEqual(a.C1, c) {
		t.Fatalf("wrapped round trip: wrapped %v num %d size %d equal %v", a.Wrapped, a.SectorNum, a.SectorSize, reflect.DeepEqual(a.C1, c))
	}
}

func TestRoundTrip(t *testing.T) {
	for _, p := range []proofs.RegisteredSealProof{
		proofs.StackedDrg2KiBV1, proofs.StackedDrg2KiBV1_1, proofs.StackedDrg2KiBV1_1_Feat_SyntheticPoRep,
		proofs.StackedDrg8MiBV1_1, proofs.StackedDrg512MiBV1_1_Feat_SyntheticPoRep,
	} {
		t.Run(p.String(), func(t *testing.T) {
			for seed := uint64(0); seed < 3; seed++ {
				roundTrip(t, randomC1(t, p, seed))
			}
		})
	}
}

// TestRoundTripLarge covers the Sub (32GiB, 8-8-0) and Top (64GiB, 8-8-2)
// proof variants at full size.
func TestRoundTripLarge(t *testing.T) {
	if testing.Short() {
		t.Skip("full-size 32GiB and 64GiB artifacts")
	}
	for _, p := range []proofs.RegisteredSealProof{proofs.StackedDrg32GiBV1_1, proofs.StackedDrg64GiBV1_1_Feat_SyntheticPoRep} {
		c := randomC1(t, p, 1)
		b := mustMarshal(t, c)
		got, err := Unmarshal(b)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if !reflect.DeepEqual(got, c) {
			t.Fatalf("%s: round trip differs", p)
		}
		max, _ := MaxSize(p)
		t.Logf("%s: %d bytes (bound %d)", p, len(b), max)
	}
}

// TestWhitespace: insignificant whitespace and any field order are
// accepted, as by serde_json.
func TestWhitespace(t *testing.T) {
	c := randomC1(t, proofs.StackedDrg2KiBV1_1, 7)
	b := mustMarshal(t, c)
	// Python-style separators stay within the default bound.
	spaced := bytes.ReplaceAll(bytes.ReplaceAll(b, []byte(","), []byte(", ")), []byte(":"), []byte(": "))
	got, err := Unmarshal(spaced)
	if err != nil || !reflect.DeepEqual(got, c) {
		t.Fatalf("spaced: %v", err)
	}
	// One number a line (jq, to_vec_pretty) exceeds it; WithMaxBytes admits it.
	var pretty bytes.Buffer
	if err := json.Indent(&pretty, b, "\n", "  "); err != nil {
		t.Fatal(err)
	}
	if _, err := Unmarshal(pretty.Bytes()); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("indented, default bound: %v, want ErrTooLarge", err)
	}
	got, err = Unmarshal(pretty.Bytes(), WithMaxBytes(int64(pretty.Len())))
	if err != nil || !reflect.DeepEqual(got, c) {
		t.Fatalf("indented: %v", err)
	}
	// registered_proof after vanilla_proofs.
	i := bytes.Index(b, []byte(`"vanilla_proofs"`))
	j := bytes.Index(b, []byte(`,"comm_r"`))
	reordered := append([]byte("{"), b[i:j]...)
	reordered = append(reordered, ',')
	reordered = append(reordered, b[1:i-1]...)
	reordered = append(reordered, b[j:]...)
	got, err = Unmarshal(reordered)
	if err != nil || !reflect.DeepEqual(got, c) {
		t.Fatalf("reordered: %v", err)
	}
}

func TestDecodeFile(t *testing.T) {
	c := randomC1(t, proofs.StackedDrg2KiBV1_1, 3)
	dir := t.TempDir()
	raw, wrapped := filepath.Join(dir, "c1.json"), filepath.Join(dir, "c2in.json")
	if err := os.WriteFile(raw, mustMarshal(t, c), 0o644); err != nil {
		t.Fatal(err)
	}
	w, _ := MarshalCommit2In(7, c)
	if err := os.WriteFile(wrapped, append(w, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{raw, wrapped} {
		a, err := DecodeFile(name)
		if err != nil || !reflect.DeepEqual(a.C1, c) {
			t.Fatalf("DecodeFile(%s): %v", name, err)
		}
	}
	if _, err := DecodeFile(raw, WithMaxBytes(1000)); err == nil {
		t.Fatal("DecodeFile ignored the size bound")
	}
}

// TestMaxSize checks the bound against the encoding of a C1 holding the
// longest value of every field.
func TestMaxSize(t *testing.T) {
	for _, p := range []proofs.RegisteredSealProof{proofs.StackedDrg2KiBV1_1_Feat_SyntheticPoRep, proofs.StackedDrg8MiBV1} {
		c, _ := Skeleton(p)
		info, _ := p.Info()
		s := shapeOf(info)
		for _, part := range c.VanillaProofs.Partitions {
			for i := range part {
				fillMax(&part[i], s)
			}
		}
		c.CommR, c.CommD, c.ReplicaID, c.Seed, c.Ticket = all255, all255, all255, all255, all255
		var b bytes.Buffer
		encodeOutput(&b, c)
		max, err := MaxSize(p)
		if err != nil {
			t.Fatal(err)
		}
		if int64(b.Len())*2 != max {
			t.Errorf("%s: MaxSize %d, want twice %d", p, max, b.Len())
		}
		ordinary := len(mustMarshal(t, randomC1(t, p, 1)))
		t.Logf("%s: bound %d bytes, a random C1 %d bytes", p, max, ordinary)
	}
}

// TestDecodeMemory reports the bytes allocated to decode a C1, raw and
// wrapped, and checks they stay under twice the C1 JSON's size. The
// decoded value holds each domain in 32 bytes against about 115 in JSON;
// the rest is encoding/json's per-token garbage (measured: about 1.1 to
// 1.4 times the input). A whole-input copy would push it past the check.
func TestDecodeMemory(t *testing.T) {
	c := randomC1(t, proofs.StackedDrg8MiBV1_1, 1)
	b := mustMarshal(t, c)
	w, _ := MarshalCommit2In(1, c)
	for _, tc := range []struct {
		name string
		in   []byte
	}{{"raw", b}, {"wrapped", w}} {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		if _, err := DecodeBytes(tc.in); err != nil {
			t.Fatal(err)
		}
		runtime.ReadMemStats(&after)
		alloc := after.TotalAlloc - before.TotalAlloc
		t.Logf("%s: input %d bytes, allocated %d bytes (%.2f of input) in %d allocations",
			tc.name, len(tc.in), alloc, float64(alloc)/float64(len(tc.in)), after.Mallocs-before.Mallocs)
		if alloc > 2*uint64(len(b)) { // a copy of the input would pass 2x
			t.Errorf("%s: allocated %d bytes decoding %d bytes of C1 JSON", tc.name, alloc, len(b))
		}
	}
}

func BenchmarkDecode8MiB(b *testing.B) {
	in := mustMarshal(b, randomC1(b, proofs.StackedDrg8MiBV1_1, 1))
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Unmarshal(in); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEncode8MiB(b *testing.B) {
	c := randomC1(b, proofs.StackedDrg8MiBV1_1, 1)
	b.ReportAllocs()
	for b.Loop() {
		if err := Encode(io.Discard, c); err != nil {
			b.Fatal(err)
		}
	}
}

// TestWrapperEscapes: Phase1Out may use any JSON string escapes.
func TestWrapperEscapes(t *testing.T) {
	c := randomC1(t, proofs.StackedDrg2KiBV1_1, 11)
	w, err := MarshalCommit2In(3, c)
	if err != nil {
		t.Fatal(err)
	}
	s := bytes.ReplaceAll(w, []byte("/"), []byte(`\/`))
	s = bytes.Replace(s, []byte(`"Phase1Out":"e`), []byte(`"Phase1Out":"\u0065`), 1)
	a, err := DecodeBytes(s)
	if err != nil || !reflect.DeepEqual(a.C1, c) {
		t.Fatalf("escaped Phase1Out: %v", err)
	}
}

// TestIsCanonicalScalar compares the canonical check with gnark-crypto's
// SetBytesCanonical (big-endian) on edge and random values.
func TestIsCanonicalScalar(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var cases [][32]byte
	for _, delta := range []int{-1, 0, 1, 2} {
		d := rLE
		// r + delta: r's low byte is 1, so no carry.
		d[0] = byte(int(d[0]) + delta)
		cases = append(cases, d)
	}
	cases = append(cases, [32]byte{}, all255)
	for range 1000 {
		var d [32]byte
		for i := range d {
			d[i] = byte(r.Uint32())
		}
		d[31] &= 0x7f
		cases = append(cases, d)
	}
	for _, d := range cases {
		var be [32]byte
		for i := range d {
			be[i] = d[31-i]
		}
		var e fr.Element
		want := e.SetBytesCanonical(be[:]) == nil
		if got := IsCanonicalScalar(&d); got != want {
			t.Fatalf("IsCanonicalScalar(%x) = %v, gnark says %v", d, got, want)
		}
	}
	if IsCanonicalScalar(&rLE) {
		t.Fatal("r accepted")
	}
}

// TestEncodeRejectsInvalid: the encoders write only what Decode accepts.
func TestEncodeRejectsInvalid(t *testing.T) {
	if err := Validate(nil); err == nil {
		t.Error("Validate(nil) passed")
	}
	c := randomC1(t, proofs.StackedDrg2KiBV1, 5)
	c.VanillaProofs.Key = "StackedDrg8MiBV1"
	if _, err := Marshal(c); !errors.Is(err, ErrProofMismatch) {
		t.Errorf("Marshal with a foreign key: %v", err)
	}
	c = randomC1(t, proofs.StackedDrg2KiBV1, 5)
	c.VanillaProofs.Partitions[0][0].CommDProofs.Data.Sub = &SubProof{}
	if err := Encode(io.Discard, c); !errors.Is(err, ErrVariant) {
		t.Errorf("Encode with two variants: %v", err)
	}
	c = randomC1(t, proofs.StackedDrg2KiBV1, 5)
	if _, err := MarshalCommit2In(-1, c); err == nil {
		t.Error("negative sector number accepted")
	}
	c.RegisteredProof = proofs.StackedDrg2KiBV1_2_Feat_NonInteractivePoRep
	if _, err := MarshalCommit2In(1, c); !errors.Is(err, proofs.ErrUnsupported) {
		t.Errorf("NI-PoRep: %v", err)
	}
}
