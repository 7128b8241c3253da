package update

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// An updated sector's vanilla proofs verify natively in every partition,
// survive bincode and Curio's snap-vproof.json form byte for byte, and
// their witnesses (from the decoded proofs) satisfy the circuit.
func TestVanillaProofsRoundTrip(t *testing.T) {
	rep := testReplica(t, 16<<10)
	var proofs []*PartitionProof
	for k := range rep.Shape.Partitions() {
		p, err := rep.PartitionProof(k)
		if err != nil {
			t.Fatal(err)
		}
		if err := p.Verify(rep.Shape, k, rep.Public()); err != nil {
			t.Fatalf("partition %d: %v", k, err)
		}
		proofs = append(proofs, p)
	}
	js, err := EncodeCurioVanilla(proofs)
	if err != nil {
		t.Fatal(err)
	}
	back, err := DecodeCurioVanilla(js)
	if err != nil {
		t.Fatal(err)
	}
	for k, p := range back {
		if !bytes.Equal(p.Bincode(), proofs[k].Bincode()) {
			t.Fatalf("partition %d: bincode differs after the JSON round trip", k)
		}
		w, err := p.Witness(rep.Shape, k, rep.Public())
		if err != nil {
			t.Fatal(err)
		}
		if err, _ := synthesize(t, rep.Shape, w); err != nil {
			t.Fatalf("partition %d from decoded proofs: %v", k, err)
		}
	}
	// Truncated or padded bincode is refused, naming the proof's fault.
	b := proofs[0].Bincode()
	for _, bad := range [][]byte{b[:len(b)-1], append(append([]byte(nil), b...), 0), b[:31]} {
		if _, err := DecodePartitionProof(bad); !errors.Is(err, ErrBadVanilla) {
			t.Errorf("%d bytes of a %d-byte proof: %v", len(bad), len(b), err)
		}
	}
	if _, err := DecodeCurioVanilla([]byte(`{"not":"an array"}`)); !errors.Is(err, ErrBadVanilla) {
		t.Errorf("a JSON object: %v", err)
	}
}

// Native verification refuses a tampered vanilla proof, naming the
// partition, challenge and tree of the first failure, and a proof checked
// against another partition or other public data.
func TestVanillaVerifyRefuses(t *testing.T) {
	rep := testReplica(t, 16<<10)
	fresh := func() *PartitionProof {
		p, err := rep.PartitionProof(1)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, tc := range []struct {
		name   string
		tamper func(p *PartitionProof)
		want   string
	}{
		{"comm_c", func(p *PartitionProof) { p.CommC[0] ^= 1 }, "comm_r_old"},
		{"a new label", func(p *PartitionProof) { p.Challenges[3].RNew.Leaf[0] ^= 1 }, "challenge 3"},
		{"a new-data sibling", func(p *PartitionProof) { p.Challenges[5].DNew.Base[0].Hashes[0][1] ^= 1 }, "challenge 5"},
		{"an apex leaf", func(p *PartitionProof) { p.ApexLeaves[7][2] ^= 1 }, "apex tree"},
		{"a missing challenge", func(p *PartitionProof) { p.Challenges = p.Challenges[1:] }, "challenge proofs"},
		{"swapped openings", func(p *PartitionProof) { p.Challenges[0], p.Challenges[1] = p.Challenges[1], p.Challenges[0] }, "challenge 0"},
	} {
		p := fresh()
		tc.tamper(p)
		err := p.Verify(rep.Shape, 1, rep.Public())
		if !errors.Is(err, ErrBadVanilla) || !strings.Contains(err.Error(), "partition 1") || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error naming %q", tc.name, err, tc.want)
		}
	}
	if err := fresh().Verify(rep.Shape, 0, rep.Public()); !errors.Is(err, ErrBadVanilla) {
		t.Errorf("partition 1's proof as partition 0's: %v", err)
	}
	pub := rep.Public()
	pub.CommDNew = rep.CommROld
	if err := fresh().Verify(rep.Shape, 1, pub); !errors.Is(err, ErrBadVanilla) {
		t.Errorf("against another comm_d_new: %v", err)
	}
}
