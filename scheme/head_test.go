package scheme_test

import (
	"bytes"
	"context"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/c2flow/c2flow/filecoin/c1"
	"github.com/c2flow/c2flow/filecoin/proofs"
	"github.com/c2flow/c2flow/filecoin/seal"
	"github.com/c2flow/c2flow/filecoin/snark"
	"github.com/c2flow/c2flow/internal/jsonform"
	"github.com/c2flow/c2flow/scheme"
	"github.com/c2flow/c2flow/scheme/testscheme"
	"github.com/c2flow/c2flow/scheme/testscheme/params"
)

// A file is routed to the scheme whose format its head parses as: a
// Filecoin SealCommitPhase1Output (registered_proof a seal proof) or
// Commit2In wrapper, a test-scheme C1 (versioned, registered_proof a
// profile), even when the head ends mid-value; a field name inside a
// string or a nested object routes nothing, and an unknown file's error
// says what its head holds.
func TestSetRecognize(t *testing.T) {
	set := scheme.Set{testscheme.New(params.DirStore{Root: t.TempDir()}), snark.New(snark.Params{Dir: t.TempDir()}, nil)}
	long := strings.Repeat("7,", 40000) // past the head: the parse stops mid-value
	for _, c := range []struct {
		name, head, want string
	}{
		{"filecoin", `{"registered_proof":"StackedDrg2KiBV1_1","vanilla_proofs":{"StackedDrg2KiBV1":[[` + long, "filecoin"},
		{"filecoin, spaced", "{\n  \"registered_proof\" : \"StackedDrg32GiBV1_1\" }", "filecoin"},
		{"commit2in", `{"SectorNum":7,"Phase1Out":"eyJyZWdpc3RlcmVk` + long, "filecoin"},
		{"commit2in, lower case", `{"sectornum":7,"phase1out":"eyJy"}`, "filecoin"},
		{"test scheme", "{\n \"version\": 1,\n \"registered_proof\": \"32KiB\",\n \"sector_id\": 5,\n \"partitions\": [" + long, "c2flow"},
		{"name inside a string", `{"note":"\"registered_proof\":\"StackedDrg2KiBV1_1\"","x":1}`, ""},
		{"name inside an object", `{"meta":{"registered_proof":"StackedDrg2KiBV1_1"}}`, ""},
		{"foreign proof", `{"registered_proof":"StackedDrg2KiBV9"}`, ""},
		{"test profile without version", `{"registered_proof":"32KiB"}`, ""},
		{"not JSON", "garbage", ""},
	} {
		sc, err := set.Recognize([]byte(c.head))
		got := ""
		if err == nil {
			got = sc.Name()
		}
		if got != c.want {
			t.Errorf("%s: recognized as %q (%v), want %q", c.name, got, err, c.want)
		}
		if c.want == "" && (err == nil || !strings.Contains(err.Error(), "not a C1 of any scheme")) {
			t.Errorf("%s: error %v", c.name, err)
		}
	}
	_, err := set.Recognize([]byte(`{"registered_proof":"StackedDrg2KiBV9"}`))
	if !strings.Contains(err.Error(), `registered_proof "StackedDrg2KiBV9"`) {
		t.Errorf("error does not say what the head holds: %v", err)
	}
}

// A file whose keys are in another order than its format's, its leading
// field past the head, is routed by all its top-level fields: a Filecoin
// C1 with its keys reversed (registered_proof last, after the vanilla
// proofs) is identified as the same sector as the C1 as written, with the
// same canonical bytes; a foreign field is still refused.
func TestSetIdentifyKeysReordered(t *testing.T) {
	ctx := context.Background()
	set := scheme.Set{testscheme.New(params.DirStore{Root: t.TempDir()}), snark.New(snark.Params{Dir: t.TempDir()}, nil)}
	prover := [32]byte{7}
	s, err := seal.Seal(ctx, seal.TestParams(proofs.StackedDrg2KiBV1_1, prover, 3))
	if err != nil {
		t.Fatal(err)
	}
	raw, err := c1.Marshal(s.C1)
	if err != nil {
		t.Fatal(err)
	}
	reversed, err := jsonform.ReverseKeys(raw)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := set.Recognize(reversed); err == nil {
		t.Fatalf("the head of a %d-byte C1 with its keys reversed is recognized: not a test of the fallback", len(reversed))
	}
	h := scheme.Hints{ProverID: hex.EncodeToString(prover[:])}
	_, want, canon, err := set.Identify(ctx, "3.c1.json", raw, h)
	if err != nil {
		t.Fatal(err)
	}
	sc, ref, got, err := set.Identify(ctx, "3.c1.json", reversed, h)
	if err != nil {
		t.Fatal(err)
	}
	if sc.Name() != "filecoin" || ref != want || !bytes.Equal(got, canon) {
		t.Errorf("the C1 with its keys reversed: %s %s, want %s", sc.Name(), ref.Identity(), want.Identity())
	}
	if _, _, _, err := set.Identify(ctx, "x.json", append([]byte(`{"x":"`+strings.Repeat("a", scheme.HeadBytes)+`",`), reversed[1:]...), h); err == nil || !strings.Contains(err.Error(), "unknown field") {
		t.Errorf("a C1 with a foreign field first: %v, want it refused by the strict decoder", err)
	}
}
