package sdr

import (
	"bytes"
	"encoding/hex"
	"testing"
)

func mustHex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func seq(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i)
	}
	return b
}

func TestChaCha8Rng(t *testing.T) {
	// draft-strombergson-chacha-test-vectors-01 TC1, 8 rounds, 256-bit
	// zero key, zero IV: the first two keystream blocks.
	want := mustHex(t, "3e00ef2f895f40d67f5bb8e81f09a5a12c840ec3ce9a7f3b181be188ef711a1e"+
		"984ce172b9216f419f445367456d5619314a42a3da86b001387bfdb80e0cfe42"+
		"d2aefa0deaa5c151bf0adb6c01f2a5adc0fd581259f9a2aadcf20f8fd566a26b"+
		"5032ec38bbc5da98ee0c6f568b872a65a08abf251deb21bb4b56e5d8821e68aa")
	var seed [32]byte
	r := newChaCha8Rng(&seed)
	var got []byte
	for range 16 {
		v := r.nextU64()
		for i := range 8 {
			got = append(got, byte(v>>(8*i)))
		}
	}
	if !bytes.Equal(got, want) {
		t.Errorf("chacha8 keystream\n%x\nwant\n%x", got, want)
	}
}

func TestChaCha20IETF(t *testing.T) {
	// RFC 8439 section 2.3.2: key 00..1f, nonce 000000090000004a00000000,
	// block counter 1.
	key := (*[32]byte)(seq(32))
	nonce := (*[12]byte)(mustHex(t, "000000090000004a00000000"))
	want := mustHex(t, "10f1e7e4d13b5915500fdd1fa32071c4c7d1f4c733c068030422aa9ac3d46c4ed2826446079faa0914c2d705d98b02a2b5129cd1de164eb9cbd083e8a2503c4e")
	c := newChaCha20IETF(key, nonce)
	c.seek(64)
	got := make([]byte, 64)
	c.keystream(got)
	if !bytes.Equal(got, want) {
		t.Errorf("chacha20 block 1 = %x", got)
	}
	// Seeking to any byte offset continues the same keystream.
	full := make([]byte, 300)
	c.seek(0)
	c.keystream(full)
	if !bytes.Equal(full[64:128], want) {
		t.Error("sequential keystream disagrees with block 1")
	}
	for _, off := range []uint64{0, 1, 31, 32, 63, 64, 100, 200} {
		part := make([]byte, 300-off)
		c.seek(off)
		c.keystream(part[:7])
		c.keystream(part[7:])
		if !bytes.Equal(part, full[off:]) {
			t.Errorf("seek(%d) keystream differs", off)
		}
	}
}
