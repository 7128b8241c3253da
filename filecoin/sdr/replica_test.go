package sdr

import (
	"bytes"
	"crypto/sha256"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/c2flow/c2flow/filecoin/proofs"
)

// TestReplicaID checks generate_replica_id's layout (no upstream vector
// exists): SHA-256 over prover_id, sector_id as u64 big-endian, ticket,
// comm_d and porep_id, trimmed to 254 bits.
func TestReplicaID(t *testing.T) {
	var prover, ticket, commD [32]byte
	for i := range prover {
		prover[i], ticket[i], commD[i] = byte(i), byte(100+i), byte(200+i)
	}
	porepID := proofs.NewPoRepID(uint64(proofs.StackedDrg32GiBV1_1), 0)
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
