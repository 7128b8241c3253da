package sdr

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
)

// TestReplicaID checks generate_replica_id's layout (no upstream vector
// exists): SHA-256 over prover_id, sector_id as u64 big-endian, ticket,
// comm_d and porep_id, trimmed to 254 bits.
func TestReplicaID(t *testing.T) {
	var prover, ticket, commD [32]byte
	for i := range prover {
		prover[i], ticket[i], commD[i] = byte(i), byte(100+i), byte(200+i)
	}
	porepID := NewPoRepID(uint64(StackedDrg32GiBV1_1), 0)
	got := ReplicaID(prover, 0x0102030405060708, ticket, commD, porepID)
	var buf bytes.Buffer
	buf.Write(prover[:])
	buf.Write([]byte{1, 2, 3, 4, 5, 6, 7, 8})
	buf.Write(ticket[:])
	buf.Write(commD[:])
	buf.Write(porepID[:])
	want := sha256.Sum256(buf.Bytes())
	want[31] &= 0x3f
	if got != want {
		t.Errorf("replica id %x, want %x", got, want)
	}
	if _, err := fr.LittleEndian.Element(&got); err != nil {
		t.Errorf("replica id is not a canonical field element: %v", err)
	}
	// registry.rs porep_id: id u64 LE, nonce u64 LE, zeros.
	id := NewPoRepID(8, 0x1122)
	if binary.LittleEndian.Uint64(id[:8]) != 8 || binary.LittleEndian.Uint64(id[8:16]) != 0x1122 || [16]byte(id[16:]) != [16]byte{} {
		t.Errorf("porep id layout %x", id)
	}
}

func TestEncodeDecode(t *testing.T) {
	// r - 1 + 2 = 1 (mod r): the addition wraps.
	var rMinus1 fr.Element
	rMinus1.SetInt64(-1)
	var key [32]byte
	fr.LittleEndian.PutElement(&key, rMinus1)
	enc, err := Encode(key, frU64(2))
	if err != nil {
		t.Fatal(err)
	}
	if enc != frU64(1) {
		t.Errorf("Encode(r-1, 2) = %x, want 1", enc)
	}
	dec, err := Decode(key, enc)
	if err != nil || dec != frU64(2) {
		t.Errorf("Decode = %x, %v; want 2", dec, err)
	}
	var bad [32]byte
	for i := range bad {
		bad[i] = 0xff
	}
	if _, err := Encode(bad, frU64(1)); err == nil {
		t.Error("Encode(non-canonical key): no error")
	}
	if _, err := Decode(frU64(1), bad); err == nil {
		t.Error("Decode(non-canonical value): no error")
	}
	seven, two, one := frU64(7), frU64(2), frU64(1)
	keys := append(append([]byte{}, key[:]...), seven[:]...)
	data := append(append([]byte{}, two[:]...), one[:]...)
	out := make([]byte, len(data))
	if err := EncodeNodes(out, keys, data); err != nil {
		t.Fatal(err)
	}
	eight := frU64(8)
	if !bytes.Equal(out[:32], one[:]) || !bytes.Equal(out[32:], eight[:]) {
		t.Errorf("EncodeNodes = %x", out)
	}
	if err := DecodeNodes(out, keys, out); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out, data) {
		t.Errorf("DecodeNodes = %x, want %x", out, data)
	}
	if err := EncodeNodes(out[:32], keys, data); err == nil {
		t.Error("EncodeNodes(length mismatch): no error")
	}
}

// TestSealProofs checks the registry and filecoin-proofs constants
// (rust-filecoin-proofs-api src/registry.rs; filecoin-proofs
// src/constants.rs and parameters.rs).
func TestSealProofs(t *testing.T) {
	type row struct {
		size                                      uint64
		v                                         APIVersion
		mode                                      ChallengeMode
		layers, partitions, minimum, perPartition int
	}
	small, large := uint64(2048), SectorSize32GiB
	for _, c := range []struct {
		p SealProof
		r row
	}{
		{StackedDrg2KiBV1, row{small, V1_0_0, Interactive, 2, 1, 2, 2}},
		{StackedDrg32GiBV1, row{large, V1_0_0, Interactive, 11, 10, 176, 18}},
		{StackedDrg2KiBV1_1, row{small, V1_1_0, Interactive, 2, 1, 2, 2}},
		{StackedDrg32GiBV1_1, row{large, V1_1_0, Interactive, 11, 10, 176, 18}},
		{StackedDrg64GiBV1_1, row{SectorSize64GiB, V1_1_0, Interactive, 11, 10, 176, 18}},
		{StackedDrg512MiBV1_1_Feat_SyntheticPoRep, row{SectorSize512MiB, V1_2_0, Synthetic, 2, 1, 2, 2}},
		{StackedDrg32GiBV1_1_Feat_SyntheticPoRep, row{large, V1_2_0, Synthetic, 11, 10, 176, 18}},
		{StackedDrg8MiBV1_2_Feat_NonInteractivePoRep, row{SectorSize8MiB, V1_2_0, NonInteractive, 2, 13, 26, 2}},
		{StackedDrg32GiBV1_2_Feat_NonInteractivePoRep, row{large, V1_2_0, NonInteractive, 11, 126, 2253, 18}},
	} {
		size, _ := c.p.SectorSize()
		v, _ := c.p.APIVersion()
		mode, _ := c.p.ChallengeMode()
		layers, _ := c.p.Layers()
		parts, _ := c.p.Partitions()
		minimum, _ := c.p.MinimumChallenges()
		per, _ := c.p.ChallengesPerPartition()
		got := row{size, v, mode, layers, parts, minimum, per}
		if got != c.r {
			t.Errorf("proof %d: %+v, want %+v", c.p, got, c.r)
		}
		id, _ := c.p.PoRepID()
		if binary.LittleEndian.Uint64(id[:8]) != uint64(c.p) || id.IsLegacy() != (c.p <= StackedDrg64GiBV1) {
			t.Errorf("proof %d: porep id %x", c.p, id)
		}
	}
	if _, err := SealProof(20).SectorSize(); err == nil {
		t.Error("SealProof(20): no error")
	}
	if _, err := SealProof(20).Graph(); err == nil {
		t.Error("SealProof(20).Graph: no error")
	}
	for _, s := range []string{"1.0.0", "V1_1_0", "1.2.0"} {
		if _, err := ParseAPIVersion(s); err != nil {
			t.Error(err)
		}
	}
	if _, err := ParseAPIVersion("1.3.0"); err == nil {
		t.Error("ParseAPIVersion(1.3.0): no error")
	}
}
