package gadgets

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/c2flow/c2flow/filecoin/r1cs"
)

// Upstream facts in this file come from filecoin-project/bellperson
// src/gadgets/sha256.rs at tag v0.27.0 (commit
// bb36c30260f88b7417cad6573b381db9362db46e), the version rust-fil-proofs
// pins.

func bitsToBytes(bits []bool) []byte {
	out := make([]byte, len(bits)/8)
	for i, b := range bits {
		if b {
			out[i/8] |= 0x80 >> (i % 8)
		}
	}
	return out
}

func TestSHA256BlankHash(t *testing.T) {
	// test_blank_hash: the padded empty message as constant bits compresses
	// with no constraint to SHA-256("").
	input := make([]Boolean, 512)
	input[0] = Constant(true)
	w, _ := synth(t, func(cs r1cs.System) {
		st, err := SHA256Compression(cs, input, SHA256IV())
		if err != nil {
			t.Fatal(err)
		}
		got := bitsToBytes(bitsOf(stateBitsBE(&st)))
		// Expected digest from test_blank_hash.
		if hex.EncodeToString(got) != "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" {
			t.Fatalf("blank hash %x", got)
		}
	})
	if w.NumConstraints() != 0 {
		t.Fatalf("blank hash: %d constraints, want 0", w.NumConstraints())
	}
}

func TestSHA256FullBlock(t *testing.T) {
	rng := newRand()
	vals := make([]bool, 512)
	for i := range vals {
		vals[i] = rng.Uint32()%2 != 0
	}
	w, s := synth(t, func(cs r1cs.System) {
		in := allocBits(cs, "input bit", vals)
		cs.Push("sha256")
		if _, err := SHA256Compression(cs, in, SHA256IV()); err != nil {
			t.Fatal(err)
		}
		cs.Pop()
	})
	// test_full_block: num_constraints() - 512 == 25840.
	if got := w.NumConstraints() - 512; got != 25840 {
		t.Fatalf("one compression: %d constraints, want 25840", got)
	}
	h, err := s.BellpersonHash()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("one compression after 512 allocated bits: %v; bellperson test-cs hash %s", s.Stats(), h)

	// A flipped bit of w[16] is first caught where it is first used: bit
	// 13 of the first s1 xor of w[18] (w[16] rotr 19, bit 0).
	ue := tampered(t, "sha256/w extension 16/computation of w[i]/result bit 0", flip, func(cs r1cs.System) {
		in := allocBits(cs, "input bit", vals)
		cs.Push("sha256")
		SHA256Compression(cs, in, SHA256IV())
		cs.Pop()
	})
	if ue.Path != "sha256/w extension 18/first xor for s1/xor of bit 13/xor constraint" {
		t.Fatalf("tampered sum reported at %q", ue.Path)
	}
	// The last sum's bits are used nowhere else: flipping one breaks the
	// final batched equality, enforced when the MultiEq is closed.
	ue = tampered(t, "sha256/new h7/result bit 5", flip, func(cs r1cs.System) {
		in := allocBits(cs, "input bit", vals)
		cs.Push("sha256")
		SHA256Compression(cs, in, SHA256IV())
		cs.Pop()
	})
	if !strings.HasPrefix(ue.Path, "sha256/multieq ") {
		t.Fatalf("tampered final sum reported at %q", ue.Path)
	}
	// A wrong maj bit fails its defining constraint.
	ue = tampered(t, "sha256/compression round 3/maj/maj 7", addOne, func(cs r1cs.System) {
		in := allocBits(cs, "input bit", vals)
		cs.Push("sha256")
		SHA256Compression(cs, in, SHA256IV())
		cs.Pop()
	})
	if ue.Path != "sha256/compression round 3/maj/maj 7/maj computation" {
		t.Fatalf("tampered maj reported at %q", ue.Path)
	}
}

func TestSHA256FullHash(t *testing.T) {
	rng := newRand()
	vals := make([]bool, 512)
	for i := range vals {
		vals[i] = rng.Uint32()%2 != 0
	}
	var out []Boolean
	w, _ := synth(t, func(cs r1cs.System) {
		in := allocBits(cs, "input bit", vals)
		cs.Push("sha256")
		var err error
		if out, err = SHA256(cs, in); err != nil {
			t.Fatal(err)
		}
		cs.Pop()
	})
	// test_full_hash: num_constraints() - 512 == 44874.
	if got := w.NumConstraints() - 512; got != 44874 {
		t.Fatalf("sha256 of 512 bits: %d constraints, want 44874", got)
	}
	want := sha256.Sum256(bitsToBytes(vals))
	if got := bitsToBytes(bitsOf(out)); !bytes.Equal(got, want[:]) {
		t.Fatalf("digest %x, want %x", got, want)
	}
}

func TestSHA256AgainstVectors(t *testing.T) {
	// test_against_vectors' lengths: 0..32 bytes, then multiples of 8 up to
	// 248; the expected digests come from crypto/sha256.
	rng := newRand()
	var lens []int
	for l := 0; l < 32; l++ {
		lens = append(lens, l)
	}
	for l := 32; l < 256; l += 8 {
		lens = append(lens, l)
	}
	if testing.Short() {
		lens = lens[:8]
	}
	for _, l := range lens {
		data := make([]byte, l)
		for i := range data {
			data[i] = byte(rng.Uint32())
		}
		want := sha256.Sum256(data)
		w := r1cs.NewWitness(r1cs.WitnessOptions{Check: true})
		out, err := SHA256(w, allocBits(w, "input bit", BytesToBits(data)))
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Err(); err != nil {
			t.Fatalf("len %d: %v", l, err)
		}
		if got := bitsToBytes(bitsOf(out)); !bytes.Equal(got, want[:]) {
			t.Fatalf("len %d: digest %x, want %x", l, got, want)
		}
	}
}

func TestSHA256BlockNoPadding(t *testing.T) {
	// A block that is the padded form of a short message compresses (from
	// the IV) to that message's SHA-256.
	rng := newRand()
	msg := make([]byte, 40)
	for i := range msg {
		msg[i] = byte(rng.Uint32())
	}
	block := make([]byte, 64)
	copy(block, msg)
	block[len(msg)] = 0x80
	block[62], block[63] = byte(len(msg)*8>>8), byte(len(msg)*8)
	var out []Boolean
	w, _ := synth(t, func(cs r1cs.System) {
		var err error
		out, err = SHA256BlockNoPadding(cs, allocBits(cs, "input bit", BytesToBits(block)))
		if err != nil {
			t.Fatal(err)
		}
	})
	want := sha256.Sum256(msg)
	if got := bitsToBytes(bitsOf(out)); !bytes.Equal(got, want[:]) {
		t.Fatalf("digest %x, want %x", got, want)
	}
	if got := w.NumConstraints() - 512; got != 25840 {
		t.Fatalf("block: %d constraints, want 25840", got)
	}
	if _, err := SHA256BlockNoPadding(w, out); err == nil {
		t.Fatal("256-bit block accepted")
	}
	if _, err := SHA256(w, out[:7]); err == nil {
		t.Fatal("7-bit message accepted")
	}
}
