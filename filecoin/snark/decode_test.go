package snark_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/c2flow/c2flow/filecoin/c1"
	"github.com/c2flow/c2flow/filecoin/proofs"
	"github.com/c2flow/c2flow/filecoin/seal"
	"github.com/c2flow/c2flow/filecoin/snark"
	"github.com/c2flow/c2flow/job"
	"github.com/c2flow/c2flow/scheme"
)

// The scheme owns exactly the supported registered seal proofs, and
// bounds a C1 by the decoder's bound for either form.
func TestOwnsAndMaxC1Bytes(t *testing.T) {
	s := snark.New(snark.Params{Dir: t.TempDir()}, nil)
	for _, n := range proofs.Names() {
		if !s.Owns(n) {
			t.Errorf("does not own %s", n)
		}
	}
	for _, n := range []string{"", "2KiB", "StackedDrg2KiBV1_2_Feat_NonInteractivePoRep", "StackedDrgWinning2KiBV1", "stackeddrg2kibv1"} {
		if s.Owns(n) {
			t.Errorf("owns %q", n)
		}
	}
	set := scheme.Set{s}
	if sc, err := set.For("StackedDrg32GiBV1_1"); err != nil || sc.Name() != "filecoin" {
		t.Fatalf("Set.For: %v, %v", sc, err)
	}
	n, err := s.MaxC1Bytes("StackedDrg32GiBV1_1")
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := c1.MaxSize(proofs.StackedDrg32GiBV1_1)
	// A sparse 32GiB C1 is 38.6 MB (README); the bound must take a
	// Commit2In wrapper of the longest one.
	if n <= raw || n < 4*38_600_000/3 {
		t.Fatalf("MaxC1Bytes(32GiB) = %d (raw bound %d)", n, raw)
	}
	if _, err := s.MaxC1Bytes("2KiB"); err == nil {
		t.Fatal("MaxC1Bytes of a foreign proof")
	}
	t.Logf("MaxC1Bytes: 32GiB %d, raw %d", n, raw)
}

// Decode binds a C1 to its sector: the right identity decodes (raw and
// Commit2In) and verifies; a wrong prover id, sector id, declared proof or
// SectorNum, and garbage, are errors naming what is wrong.
func TestDecodeIdentity(t *testing.T) {
	ctx := context.Background()
	s := snark.New(snark.Params{Dir: t.TempDir()}, nil)
	sealed := seal2KiB(t, proofs.StackedDrg2KiBV1_1, 7)
	raw, err := c1.Marshal(sealed.C1)
	if err != nil {
		t.Fatal(err)
	}
	wrapped, err := c1.MarshalCommit2In(7, sealed.C1)
	if err != nil {
		t.Fatal(err)
	}
	id := job.SectorRef{ProverID: seal.Hex32(testProver), SectorID: 7, Profile: "StackedDrg2KiBV1_1"}
	for name, b := range map[string][]byte{"raw": raw, "Commit2In": wrapped} {
		sec, err := s.Decode(b, id)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if sec.Proof() != "StackedDrg2KiBV1_1" || sec.Partitions() != 1 {
			t.Fatalf("%s: proof %s, %d partitions", name, sec.Proof(), sec.Partitions())
		}
		if err := sec.Verify(ctx); err != nil {
			t.Fatalf("%s: verify: %v", name, err)
		}
		pub, ok := sec.(*snark.Sector).Public()
		if !ok || pub != sealed.Public {
			t.Fatalf("%s: public data %+v, sealed %+v", name, pub, sealed.Public)
		}
	}
	anyProof := id
	anyProof.Profile = ""
	if _, err := s.Decode(raw, anyProof); err != nil {
		t.Fatalf("undeclared proof: %v", err)
	}

	otherProver := testProver
	otherProver[0] ^= 1
	for _, c := range []struct {
		name string
		raw  []byte
		id   job.SectorRef
		want []string
		is   error
	}{
		{"wrong prover id", raw, job.SectorRef{ProverID: seal.Hex32(otherProver), SectorID: 7}, []string{"replica_id", "sector 7"}, seal.ErrReplicaID},
		{"wrong sector id", raw, job.SectorRef{ProverID: seal.Hex32(testProver), SectorID: 8}, []string{"replica_id", "sector 8"}, seal.ErrReplicaID},
		{"wrong declared proof (V1)", raw, job.SectorRef{ProverID: seal.Hex32(testProver), SectorID: 7, Profile: "StackedDrg2KiBV1"}, []string{"declared proof StackedDrg2KiBV1", "registered_proof"}, c1.ErrProofMismatch},
		{"wrong declared size", raw, job.SectorRef{ProverID: seal.Hex32(testProver), SectorID: 7, Profile: "StackedDrg8MiBV1_1"}, []string{"declared proof StackedDrg8MiBV1_1"}, c1.ErrProofMismatch},
		{"foreign declared proof", raw, job.SectorRef{ProverID: seal.Hex32(testProver), SectorID: 7, Profile: "2KiB"}, []string{"declared proof", `"2KiB"`}, proofs.ErrUnknown},
		{"Commit2In SectorNum", wrapped, job.SectorRef{ProverID: seal.Hex32(testProver), SectorID: 9}, []string{"SectorNum is 7", "id is 9"}, nil},
		{"no prover id", raw, job.SectorRef{SectorID: 7}, []string{"no prover id"}, nil},
		{"bad prover id", raw, job.SectorRef{ProverID: "0x12", SectorID: 7}, []string{"prover id", "0x12"}, nil},
		{"garbage", []byte("not a C1"), id, []string{"c1: "}, c1.ErrSyntax},
		{"unknown field", bytes.Replace(raw, []byte(`"seed":`), []byte(`"extra":1,"seed":`), 1), id, []string{"extra"}, c1.ErrUnknownField},
		{"bad domain", bytes.Replace(raw, []byte(`"comm_r":[`), []byte(`"comm_r":[256,`), 1), id, []string{"comm_r"}, nil},
	} {
		_, err := s.Decode(c.raw, c.id)
		t.Logf("%s: %v", c.name, err)
		if err == nil {
			t.Errorf("%s: decoded", c.name)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error lacks %q", c.name, w)
			}
		}
		if c.is != nil && !errors.Is(err, c.is) {
			t.Errorf("%s: error is not %v", c.name, c.is)
		}
	}

	// A C1 of its sector whose seed is not the one its proofs were made
	// for decodes (the seed does not enter the replica id) and fails
	// Verify, naming the failure.
	bad := *sealed.C1
	bad.Seed[3] ^= 1
	b, err := c1.Marshal(&bad)
	if err != nil {
		t.Fatal(err)
	}
	sec, err := s.Decode(b, id)
	if err != nil {
		t.Fatal(err)
	}
	err = sec.Verify(ctx)
	t.Logf("other seed: %v", err)
	if !errors.Is(err, seal.ErrChallenge) {
		t.Fatalf("other seed: %v", err)
	}
}
