package registry_test

import (
	"bytes"
	"context"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/c2flow/c2flow/filecoin/post/posttest"
	"github.com/c2flow/c2flow/filecoin/proofs"
	"github.com/c2flow/c2flow/registry"
	"github.com/c2flow/c2flow/scheme"
)

// Every registered scheme passes one contract: it owns the names it lists,
// and no other scheme does; an input of its smallest proof identifies,
// its canonical bytes identify as themselves (the same content is the same
// job) and decode bound to their identity; the input damaged is refused or
// is another job, never the same one; truncated, it does not decode.
// Proving and verifying are each scheme's own tests (they need keys).
func TestSchemeContract(t *testing.T) {
	ctx := context.Background()
	set := registry.Schemes(registry.Options{})
	if err := set.Check(); err != nil {
		t.Fatalf("the registered schemes: %v", err)
	}
	for _, sc := range set {
		t.Run(sc.Name(), func(t *testing.T) {
			id, ok := sc.(scheme.Identifier)
			if !ok {
				t.Fatalf("scheme %s identifies no input file", sc.Name())
			}
			name, raw := sampleInput(t, ctx, sc)
			ref, canon, err := id.Identify(ctx, name, raw, scheme.Hints{})
			if err != nil {
				t.Fatalf("identify its own input %s: %v", name, err)
			}
			if !sc.Owns(ref.Proof) {
				t.Errorf("its input names proof %q, which it does not own", ref.Proof)
			}
			ref2, canon2, err := id.Identify(ctx, name, canon, scheme.Hints{})
			if err != nil || ref2 != ref || !bytes.Equal(canon2, canon) {
				t.Errorf("its canonical bytes identify as %+v (%v), want %+v, themselves", ref2, err, ref)
			}
			if max, err := sc.MaxC1Bytes(ref.Proof); err != nil || int64(len(canon)) > max {
				t.Errorf("MaxC1Bytes(%s) = %d, %v; its input has %d bytes", ref.Proof, max, err, len(canon))
			}
			if _, err := sc.Decode(canon, ref); err != nil {
				t.Errorf("decode its canonical input: %v", err)
			}
			if _, err := sc.Decode(canon[:len(canon)/2], ref); err == nil {
				t.Error("half its canonical input decodes")
			}
			other := ref
			other.SectorID++
			if _, err := sc.Decode(canon, other); err == nil {
				t.Errorf("its input decodes as sector %d's", other.SectorID)
			}
			for _, at := range []int{0, len(canon) / 3, len(canon) / 2, len(canon) - 2} {
				bad := bytes.Clone(canon)
				bad[at] ^= 0x04
				if r, _, err := id.Identify(ctx, name, bad, scheme.Hints{}); err == nil && r == ref {
					t.Errorf("byte %d flipped: the same job %s", at, r.Identity())
				}
			}
		})
	}
}

// A set where a second scheme claims an existing proof name fails the
// contract, and For refuses the name rather than pick one.
func TestSchemeContractRefusesTwoOwners(t *testing.T) {
	set := registry.Schemes(registry.Options{})
	name := set[0].Proofs()[0]
	twice := append(slices.Clone(set), claimer{set[1], name})
	err := twice.Check()
	if err == nil || !strings.Contains(err.Error(), name) {
		t.Fatalf("a second owner of %q: Check = %v", name, err)
	}
	if _, err := twice.For(name); err == nil || !strings.Contains(err.Error(), "two schemes") {
		t.Errorf("For(%q) with two owners: %v", name, err)
	}
}

// An Admitter that declares an unsound policy for a request kind (here
// none: priority 0), or files its proofs under no kind it admits (status
// could not count its jobs), fails the contract, naming what is wrong.
func TestSchemeContractRefusesBadAdmitter(t *testing.T) {
	set := registry.Schemes(registry.Options{})
	for _, tc := range []struct {
		what  string
		wrap  func(scheme.Admitter) scheme.Admitter
		names func(scheme.Admitter) string // what the error must name
		want  string
	}{
		{"without a policy", func(a scheme.Admitter) scheme.Admitter { return noPolicy{a} },
			func(a scheme.Admitter) string { return a.Kinds()[0] }, "priorities"},
		{"filing its proofs under no kind", func(a scheme.Admitter) scheme.Admitter { return noKind{a} },
			func(a scheme.Admitter) string { return a.Proofs()[0] }, "request kind"},
	} {
		for i, sc := range set {
			a, ok := sc.(scheme.Admitter)
			if !ok {
				continue
			}
			bad := slices.Clone(set)
			bad[i] = tc.wrap(a)
			err := bad.Check()
			if err == nil || !strings.Contains(err.Error(), tc.names(a)) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s %s: Check = %v", sc.Name(), tc.what, err)
			}
		}
	}
}

// noKind is an Admitter that files its proofs under no kind.
type noKind struct{ scheme.Admitter }

func (noKind) KindOf(string) string { return "" }

// noPolicy is an Admitter that declares no policy.
type noPolicy struct{ scheme.Admitter }

func (noPolicy) Policy(string) scheme.Policy { return scheme.Policy{} }

// claimer is a scheme that also claims one name of another's.
type claimer struct {
	scheme.Scheme
	name string
}

func (c claimer) Name() string           { return "claimer" }
func (c claimer) Owns(proof string) bool { return proof == c.name || c.Scheme.Owns(proof) }
func (c claimer) Proofs() []string       { return append(c.Scheme.Proofs(), c.name) }

// sampleInput is an input file of sc's smallest proof (its name is where
// it lies: a Filecoin C1's prover and sector are in sectors.json beside it): sealed by the
// scheme where it seals test sectors, else (PoSt) the canonical input its
// Admit stores for a request made of upstream-format vanilla proofs.
func sampleInput(t *testing.T, ctx context.Context, sc scheme.Scheme) (string, []byte) {
	t.Helper()
	if ts, ok := sc.(scheme.TestSealer); ok {
		proof := sc.Proofs()[0]
		for _, p := range sc.Proofs() {
			if strings.Contains(p, "2KiB") {
				proof = p
				break
			}
		}
		files, err := ts.SealTest(ctx, scheme.SealRequest{Proof: proof, Prover: scheme.TestProver(), First: 3, N: 1, Dir: t.TempDir()})
		if err != nil || len(files) != 1 {
			t.Fatalf("seal a %s test sector: %v (%d files)", proof, err, len(files))
		}
		raw, err := os.ReadFile(files[0])
		if err != nil {
			t.Fatal(err)
		}
		return files[0], raw
	}
	a, ok := sc.(scheme.Admitter)
	if !ok {
		t.Fatalf("scheme %s neither seals test sectors nor admits requests: no input to check", sc.Name())
	}
	info, err := proofs.LookupPoSt(proofs.StackedDrgWindow2KiBV1_2)
	if err != nil {
		t.Fatal(err)
	}
	var r [32]byte
	vs, err := posttest.Bincodes(info, r, 5, 6)
	if err != nil {
		t.Fatal(err)
	}
	_, raw, err := a.Admit(ctx, scheme.Request{Kind: scheme.KindWindowPoSt, RegisteredProof: uint64(info.Proof), MinerID: 1000,
		SectorSize: info.SectorSize, Vanilla: vs, Randomness: r[:]})
	if err != nil {
		t.Fatalf("admit a 2KiB window partition: %v", err)
	}
	return "post.json", raw
}
