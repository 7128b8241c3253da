package c1

import (
	"bytes"
	"encoding/base64"
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/c2flow/c2flow/filecoin/proofs"
)

// rLE is the BLS12-381 scalar modulus r, little-endian: the smallest
// non-canonical Poseidon domain.
var rLE = func() (d [32]byte) {
	for i := range 4 {
		for j := range 8 {
			d[8*i+j] = byte(modulus[i] >> (8 * j))
		}
	}
	return d
}()

// unchecked encodes c without validating it.
func unchecked(c *SealCommitPhase1Output) []byte {
	var b bytes.Buffer
	encodeOutput(&b, c)
	return b.Bytes()
}

func replaceOnce(t *testing.T, s, old, new string) string {
	t.Helper()
	if !strings.Contains(s, old) {
		t.Fatalf("%q not in input", old)
	}
	return strings.Replace(s, old, new, 1)
}

func replaceRE(t *testing.T, s, re, new string) string {
	t.Helper()
	x := regexp.MustCompile(re)
	m := x.FindStringSubmatchIndex(s)
	if m == nil {
		t.Fatalf("%s not in input", re)
	}
	return s[:m[0]] + string(x.ExpandString(nil, new, s, m)) + s[m[1]:]
}

func zeros(n int) string {
	return "[" + strings.TrimSuffix(strings.Repeat("0,", n), ",") + "]"
}

// TestMalformed: every variant is rejected with an *Error of the right
// kind naming the offending field's JSON path.
func TestMalformed(t *testing.T) {
	base := randomC1(t, proofs.StackedDrg2KiBV1_1, 1)
	good := mustMarshal(t, base)
	js := string(good)
	fresh := func() *SealCommitPhase1Output {
		c, err := Unmarshal(good)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	typed := func(mut func(c *SealCommitPhase1Output, p *Proof)) func() []byte {
		return func() []byte {
			c := fresh()
			mut(c, &c.VanillaProofs.Partitions[0][1])
			return unchecked(c)
		}
	}
	text := func(f func(s string) string) func() []byte {
		return func() []byte { return []byte(f(js)) }
	}
	wrapped := func(f func(s string) string) func() []byte {
		return func() []byte {
			w, err := MarshalCommit2In(5, base)
			if err != nil {
				t.Fatal(err)
			}
			return []byte(f(string(w)))
		}
	}
	const P = "vanilla_proofs.StackedDrg2KiBV1[0][1]"
	const P0 = "vanilla_proofs.StackedDrg2KiBV1[0][0]"
	cases := []struct {
		name string
		in   func() []byte
		kind error
		path string
	}{
		// Counts against the registered proof (2KiB: 1 partition, 2
		// challenges, 2 layers, binary tree D of depth 6, base-8 tree R of
		// depth 2).
		{"extra partition", typed(func(c *SealCommitPhase1Output, _ *Proof) {
			c.VanillaProofs.Partitions = append(c.VanillaProofs.Partitions, c.VanillaProofs.Partitions[0])
		}), ErrCount, "vanilla_proofs.StackedDrg2KiBV1[1]"},
		{"missing challenge proof", typed(func(c *SealCommitPhase1Output, _ *Proof) {
			c.VanillaProofs.Partitions[0] = c.VanillaProofs.Partitions[0][:1]
		}), ErrCount, "vanilla_proofs.StackedDrg2KiBV1[0]"},
		{"third labeling proof", typed(func(_ *SealCommitPhase1Output, p *Proof) {
			p.LabelingProofs = append(p.LabelingProofs, p.LabelingProofs[0])
		}), ErrCount, P + ".labeling_proofs[2]"},
		{"36 parent labels", typed(func(_ *SealCommitPhase1Output, p *Proof) {
			p.LabelingProofs[0].Parents = p.LabelingProofs[0].Parents[:36]
		}), ErrCount, P + ".labeling_proofs[0].parents"},
		{"5 DRG parent columns", typed(func(_ *SealCommitPhase1Output, p *Proof) {
			p.ReplicaColumnProofs.DrgParents = p.ReplicaColumnProofs.DrgParents[:5]
		}), ErrCount, P + ".replica_column_proofs.drg_parents"},
		{"9 expander parent columns", typed(func(_ *SealCommitPhase1Output, p *Proof) {
			p.ReplicaColumnProofs.ExpParents = append(p.ReplicaColumnProofs.ExpParents, p.ReplicaColumnProofs.CX)
		}), ErrCount, P + ".replica_column_proofs.exp_parents[8]"},
		{"short tree D path", typed(func(_ *SealCommitPhase1Output, p *Proof) {
			p.CommDProofs.Data.Single.Path.Path = p.CommDProofs.Data.Single.Path.Path[:5]
		}), ErrCount, P + ".comm_d_proofs.data.Single.path.path"},
		{"binary path index 2", typed(func(_ *SealCommitPhase1Output, p *Proof) {
			p.CommDProofs.Data.Single.Path.Path[3].Index = 2
		}), ErrRange, P + ".comm_d_proofs.data.Single.path.path[3].index"},
		{"two siblings in a binary tree", typed(func(_ *SealCommitPhase1Output, p *Proof) {
			el := &p.CommDProofs.Data.Single.Path.Path[0]
			el.Hashes = append(el.Hashes, el.Hashes[0])
		}), ErrCount, P + ".comm_d_proofs.data.Single.path.path[0].hashes[1]"},
		{"8 siblings in a base-8 tree", typed(func(_ *SealCommitPhase1Output, p *Proof) {
			el := &p.CommRLastProof.Data.Single.Path.Path[1]
			el.Hashes = append(el.Hashes, el.Hashes[0])
		}), ErrCount, P + ".comm_r_last_proof.data.Single.path.path[1].hashes[7]"},
		{"3 column rows for 2 layers", typed(func(_ *SealCommitPhase1Output, p *Proof) {
			cx := &p.ReplicaColumnProofs.CX.Column
			cx.Rows = append(cx.Rows, cx.Rows[0])
		}), ErrCount, P + ".replica_column_proofs.c_x.column.rows[2]"},
		{"column index past the sector", typed(func(_ *SealCommitPhase1Output, p *Proof) {
			p.ReplicaColumnProofs.DrgParents[2].Column.Index = 64
		}), ErrRange, P + ".replica_column_proofs.drg_parents[2].column.index"},
		{"layer index 0", typed(func(_ *SealCommitPhase1Output, p *Proof) {
			p.LabelingProofs[0].LayerIndex = 0
		}), ErrRange, P + ".labeling_proofs[0].layer_index"},
		{"encoding node past the sector", typed(func(_ *SealCommitPhase1Output, p *Proof) {
			p.EncodingProof.Node = 64
		}), ErrRange, P + ".encoding_proof.node"},
		{"tree R proof as Sub", typed(func(_ *SealCommitPhase1Output, p *Proof) {
			s := p.CommRLastProof.Data.Single
			p.CommRLastProof.Data = ProofData{Sub: &SubProof{BaseProof: s.Path, Root: s.Root, Leaf: s.Leaf}}
		}), ErrVariant, P + ".comm_r_last_proof.data.Sub"},

		// Field encodings.
		{"replica_id equal to r", typed(func(c *SealCommitPhase1Output, _ *Proof) { c.ReplicaID = rLE }),
			ErrNotCanonical, "replica_id"},
		{"comm_r all ones", typed(func(c *SealCommitPhase1Output, _ *Proof) { c.CommR = all255 }),
			ErrNotCanonical, "comm_r"},
		{"non-canonical tree R sibling", typed(func(_ *SealCommitPhase1Output, p *Proof) {
			p.CommRLastProof.Data.Single.Path.Path[1].Hashes[3] = rLE
		}), ErrNotCanonical, P + ".comm_r_last_proof.data.Single.path.path[1].hashes[3]"},
		{"non-canonical parent label", typed(func(_ *SealCommitPhase1Output, p *Proof) {
			p.LabelingProofs[1].Parents[36][31] = 0x80
		}), ErrNotCanonical, P + ".labeling_proofs[1].parents[36]"},
		{"non-canonical column row", typed(func(_ *SealCommitPhase1Output, p *Proof) {
			p.ReplicaColumnProofs.ExpParents[7].Column.Rows[1] = all255
		}), ErrNotCanonical, P + ".replica_column_proofs.exp_parents[7].column.rows[1]"},
		{"comm_d top bit", typed(func(c *SealCommitPhase1Output, _ *Proof) { c.CommD[31] |= 0x80 }),
			ErrSHA254, "comm_d"},
		{"tree D leaf second bit", typed(func(_ *SealCommitPhase1Output, p *Proof) {
			p.CommDProofs.Data.Single.Leaf[31] |= 0x40
		}), ErrSHA254, P + ".comm_d_proofs.data.Single.leaf"},

		// JSON structure.
		{"unknown top-level field", text(func(s string) string {
			return replaceOnce(t, s, `{"registered_proof"`, `{"version":1,"registered_proof"`)
		}), ErrUnknownField, "version"},
		{"unknown nested field", text(func(s string) string {
			return replaceOnce(t, s, `"layer_index":`, `"layer":`)
		}), ErrUnknownField, P0 + ".labeling_proofs[0].layer"},
		{"duplicate key", text(func(s string) string {
			return replaceOnce(t, s, `,"comm_d":`, `,"comm_r":`+zeros(32)+`,"comm_d":`)
		}), ErrDuplicateField, "comm_r"},
		{"missing _h", text(func(s string) string { return replaceOnce(t, s, `,"_h":null`, ``) }),
			ErrMissingField, P0 + ".replica_column_proofs.c_x.column._h"},
		{"_h not null", text(func(s string) string { return replaceOnce(t, s, `"_h":null`, `"_h":{}`) }),
			ErrType, P0 + ".replica_column_proofs.c_x.column._h"},
		{"missing ticket", text(func(s string) string { return replaceRE(t, s, `,"ticket":\[[0-9,]*\]`, ``) }),
			ErrMissingField, "ticket"},
		{"31-byte domain", text(func(s string) string { return replaceRE(t, s, `"comm_r":\[[0-9,]*\]`, `"comm_r":`+zeros(31)) }),
			ErrCount, "comm_r"},
		{"33-byte domain", text(func(s string) string { return replaceRE(t, s, `"comm_r":\[[0-9,]*\]`, `"comm_r":`+zeros(33)) }),
			ErrCount, "comm_r"},
		{"byte 256", text(func(s string) string { return replaceRE(t, s, `"seed":\[[0-9]+`, `"seed":[256`) }),
			ErrRange, "seed[0]"},
		{"negative byte", text(func(s string) string { return replaceRE(t, s, `"seed":\[[0-9]+,[0-9]+`, `"seed":[0,-1`) }),
			ErrRange, "seed[1]"},
		{"fractional byte", text(func(s string) string { return replaceRE(t, s, `"seed":\[[0-9]+`, `"seed":[1.0`) }),
			ErrType, "seed[0]"},
		{"domain as a hex string", text(func(s string) string {
			return replaceRE(t, s, `"ticket":\[[0-9,]*\]`, `"ticket":"`+strings.Repeat("00", 32)+`"`)
		}), ErrType, "ticket"},
		{"node as a string", text(func(s string) string { return replaceRE(t, s, `"node":[0-9]+`, `"node":"5"`) }),
			ErrType, P0 + ".labeling_proofs[0].node"},
		{"node beyond u64", text(func(s string) string { return replaceRE(t, s, `"node":[0-9]+`, `"node":18446744073709551616`) }),
			ErrRange, P0 + ".labeling_proofs[0].node"},
		{"layer index beyond u32", text(func(s string) string {
			return replaceRE(t, s, `"layer_index":[0-9]+`, `"layer_index":4294967296`)
		}), ErrRange, P0 + ".labeling_proofs[0].layer_index"},
		{"null path index", text(func(s string) string { return replaceRE(t, s, `"index":[0-9]+`, `"index":null`) }),
			ErrType, P0 + ".comm_d_proofs.data.Single.path.path[0].index"},
		{"unknown ProofData variant", text(func(s string) string { return replaceOnce(t, s, `"Single":`, `"Double":`) }),
			ErrVariant, P0 + ".comm_d_proofs.data.Double"},
		{"two ProofData variants", text(func(s string) string {
			return replaceRE(t, s, `("comm_r_last_proof":\{"data":\{"Single":\{.*?\]\}\})\}`, `$1,"Single":{}}`)
		}), ErrVariant, P0 + ".comm_r_last_proof.data.Single"},
		{"registered_proof unknown", text(func(s string) string {
			return replaceOnce(t, s, `"StackedDrg2KiBV1_1"`, `"StackedDrg4KiBV1_1"`)
		}), proofs.ErrUnknown, "registered_proof"},
		{"registered_proof NI-PoRep", text(func(s string) string {
			return replaceOnce(t, s, `"StackedDrg2KiBV1_1"`, `"StackedDrg2KiBV1_2_Feat_NonInteractivePoRep"`)
		}), proofs.ErrUnsupported, "registered_proof"},
		{"registered_proof as an object", text(func(s string) string {
			return replaceOnce(t, s, `"StackedDrg2KiBV1_1"`, `{"StackedDrg2KiBV1_1":null}`)
		}), ErrType, "registered_proof"},
		{"another size's vanilla key", text(func(s string) string {
			return replaceOnce(t, s, `"StackedDrg2KiBV1":[`, `"StackedDrg8MiBV1":[`)
		}), ErrProofMismatch, "vanilla_proofs.StackedDrg8MiBV1"},
		{"empty VanillaSealProof", text(func(s string) string {
			return replaceRE(t, s, `"vanilla_proofs":\{.*\]\]\},`, `"vanilla_proofs":{},`)
		}), ErrVariant, "vanilla_proofs"},
		{"trailing data", text(func(s string) string { return s + " {}" }), ErrSyntax, ""},
		{"truncated", text(func(s string) string { return s[:strings.Index(s, `"comm_d_proofs":`)+16] }),
			ErrSyntax, P0 + ".comm_d_proofs"},
		{"not JSON", text(func(string) string { return "hello" }), ErrSyntax, ""},
		{"top-level array", text(func(string) string { return "[]" }), ErrType, ""},

		// The Commit2In wrapper.
		{"wrapper SectorSize of another proof", wrapped(func(s string) string {
			return replaceOnce(t, s, `"SectorSize":2048`, `"SectorSize":8388608`)
		}), ErrProofMismatch, "SectorSize"},
		{"wrapper unknown field", wrapped(func(s string) string {
			return replaceOnce(t, s, `{"SectorNum":5,`, `{"SectorNum":5,"Miner":"f01000",`)
		}), ErrUnknownField, "Miner"},
		{"wrapper duplicate field", wrapped(func(s string) string {
			return replaceOnce(t, s, `{"SectorNum":5,`, `{"SectorNum":5,"SectorNum":6,`)
		}), ErrDuplicateField, "SectorNum"},
		{"wrapper missing SectorSize", wrapped(func(s string) string {
			return replaceRE(t, s, `,"SectorSize":[0-9]+`, ``)
		}), ErrMissingField, "SectorSize"},
		{"wrapper negative SectorNum", wrapped(func(s string) string {
			return replaceOnce(t, s, `"SectorNum":5`, `"SectorNum":-5`)
		}), ErrRange, "SectorNum"},
		{"wrapper invalid base64", wrapped(func(s string) string {
			return replaceOnce(t, s, `"Phase1Out":"ey`, `"Phase1Out":"e!`)
		}), ErrSyntax, "Phase1Out"},
		{"wrapper null Phase1Out", wrapped(func(s string) string {
			return replaceRE(t, s, `"Phase1Out":"[^"]*"`, `"Phase1Out":null`)
		}), ErrType, "Phase1Out"},
		{"wrapper empty Phase1Out", wrapped(func(s string) string {
			return replaceRE(t, s, `"Phase1Out":"[^"]*"`, `"Phase1Out":""`)
		}), ErrSyntax, "Phase1Out"},
		{"wrapped C1 with a bad field", func() []byte {
			c := fresh()
			c.CommD[31] = 0xff
			return []byte(`{"SectorNum":5,"Phase1Out":"` + base64.StdEncoding.EncodeToString(unchecked(c)) + `","SectorSize":2048}`)
		}, ErrSHA254, "Phase1Out.comm_d"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := tc.in()
			_, err := DecodeBytes(in)
			if err == nil {
				t.Fatal("accepted")
			}
			if !errors.Is(err, tc.kind) {
				t.Fatalf("error %v, want kind %v", err, tc.kind)
			}
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("error %T %v is not an *Error", err, err)
			}
			if e.Path != tc.path {
				t.Fatalf("path %q, want %q (%v)", e.Path, tc.path, err)
			}
			t.Log(err)
		})
	}
	if len(cases) < 20 {
		t.Fatalf("only %d cases", len(cases))
	}
}

// TestForeignProof: an artifact of one registered proof presented as
// another is rejected with an error naming the disagreement.
func TestForeignProof(t *testing.T) {
	c8 := randomC1(t, proofs.StackedDrg8MiBV1_1, 2)
	b8 := string(mustMarshal(t, c8))
	c2 := randomC1(t, proofs.StackedDrg2KiBV1_1, 2)
	b2 := string(mustMarshal(t, c2))

	check := func(name, in string, opts []Option, kind error, path string, mention ...string) {
		t.Helper()
		_, err := DecodeBytes([]byte(in), opts...)
		var e *Error
		if !errors.Is(err, kind) || !errors.As(err, &e) || e.Path != path {
			t.Errorf("%s: %v; want kind %v at %q", name, err, kind, path)
			return
		}
		for _, m := range mention {
			if !strings.Contains(err.Error(), m) {
				t.Errorf("%s: %q does not mention %q", name, err, m)
			}
		}
		t.Logf("%s: %v", name, err)
	}

	// An 8MiB artifact relabelled 2KiB throughout: its tree D paths are 18
	// long, a 2KiB sector's 6.
	relabelled := strings.Replace(strings.Replace(b8, `"StackedDrg8MiBV1_1"`, `"StackedDrg2KiBV1_1"`, 1),
		`"StackedDrg8MiBV1":`, `"StackedDrg2KiBV1":`, 1)
	check("8MiB relabelled 2KiB", relabelled, nil, ErrCount,
		"vanilla_proofs.StackedDrg2KiBV1[0][0].comm_d_proofs.data.Single.path.path[6]",
		"more than 6 path elements", "registered_proof StackedDrg2KiBV1_1")

	// registered_proof and the vanilla proofs' key disagree.
	check("registered 2KiB, proofs 8MiB", strings.Replace(b8, `"StackedDrg8MiBV1_1"`, `"StackedDrg2KiBV1_1"`, 1), nil,
		ErrProofMismatch, "vanilla_proofs.StackedDrg8MiBV1", "8MiB", "StackedDrg2KiBV1_1", `"StackedDrg2KiBV1"`)

	// The same with vanilla_proofs first: the mismatch is found at registered_proof.
	i, j := strings.Index(b8, `"vanilla_proofs"`), strings.Index(b8, `,"comm_r"`)
	swapped := "{" + b8[i:j] + "," + strings.Replace(b8[1:i-1], "StackedDrg8MiBV1_1", "StackedDrg32GiBV1_1", 1) + b8[j:]
	check("vanilla first, registered 32GiB", swapped, nil, ErrProofMismatch, "registered_proof",
		"StackedDrg32GiBV1_1", `"StackedDrg32GiBV1"`, `under "StackedDrg8MiBV1"`)

	// The caller expects a 2KiB proof.
	check("expected 2KiB, got 8MiB", b8, []Option{WithProof(proofs.StackedDrg2KiBV1_1)}, ErrProofMismatch,
		"registered_proof", "StackedDrg8MiBV1_1, want StackedDrg2KiBV1_1")

	// A 2KiB artifact relabelled 32GiB: its tree R proofs are Single, a
	// 32GiB tree's (8-8-0) are Sub.
	as32 := strings.Replace(strings.Replace(b2, `"StackedDrg2KiBV1_1"`, `"StackedDrg32GiBV1_1"`, 1),
		`"StackedDrg2KiBV1":`, `"StackedDrg32GiBV1":`, 1)
	check("2KiB relabelled 32GiB", as32, nil, ErrVariant,
		"vanilla_proofs.StackedDrg32GiBV1[0][0].comm_r_last_proof.data.Single", "8-8-0", "Sub")

	// A 2KiB V1 artifact relabelled V1_1 is well-formed: versions of one
	// size share the layout (the proofs would fail verification).
	if _, err := DecodeBytes([]byte(strings.Replace(b2, `"StackedDrg2KiBV1_1"`, `"StackedDrg2KiBV1"`, 1))); err != nil {
		t.Errorf("V1 relabel: %v", err)
	}
}

func TestSizeBound(t *testing.T) {
	c := randomC1(t, proofs.StackedDrg2KiBV1_1, 4)
	b := mustMarshal(t, c)
	for _, tc := range []struct {
		name string
		in   []byte
		opts []Option
	}{
		{"explicit bound", b, []Option{WithMaxBytes(int64(len(b) - 1))}},
		{"2KiB bound reached after registered_proof", append(b[:len(b)-1:len(b)-1], []byte(strings.Repeat(" ", 300000)+"}")...), nil},
	} {
		// Through a reader without Len, so the bound is enforced while streaming.
		_, err := Decode(struct{ *bytes.Reader }{bytes.NewReader(tc.in)}, tc.opts...)
		if !errors.Is(err, ErrTooLarge) {
			t.Errorf("%s: %v, want ErrTooLarge", tc.name, err)
		}
		// With Len, before parsing.
		if tc.opts != nil {
			if _, err := DecodeBytes(tc.in, tc.opts...); !errors.Is(err, ErrTooLarge) {
				t.Errorf("%s (Len): %v, want ErrTooLarge", tc.name, err)
			}
		}
	}
	if _, err := DecodeBytes(b, WithMaxBytes(int64(len(b)))); err != nil {
		t.Errorf("exact bound: %v", err)
	}
}
