package sdr

import (
	"encoding/binary"
	"fmt"
	"math/bits"

	"golang.org/x/crypto/chacha20"
)

// Two ChaCha generators:
//   - chacha8Rng reproduces rand_chacha 0.3's ChaCha8Rng (8 rounds, 64-bit
//     block counter in words 12-13, 64-bit stream id in words 14-15, zero),
//     as used by BucketGraph parent sampling. No library here has 8-round
//     ChaCha (x/crypto's is 20 rounds only), so its block function is here;
//   - chacha20IETF is the RustCrypto chacha20 0.9 ChaCha20 cipher (20
//     rounds, 32-bit counter in word 12, 96-bit nonce in words 13-15) over
//     x/crypto's, as used by synthetic PoRep challenge generation.

// chachaBlock writes the keystream block for the input state in to out
// (16 little-endian words), running rounds rounds (even).
func chachaBlock(out, in *[16]uint32, rounds int) {
	x0, x1, x2, x3 := in[0], in[1], in[2], in[3]
	x4, x5, x6, x7 := in[4], in[5], in[6], in[7]
	x8, x9, x10, x11 := in[8], in[9], in[10], in[11]
	x12, x13, x14, x15 := in[12], in[13], in[14], in[15]
	for i := 0; i < rounds; i += 2 {
		// column round
		x0, x4, x8, x12 = chachaQR(x0, x4, x8, x12)
		x1, x5, x9, x13 = chachaQR(x1, x5, x9, x13)
		x2, x6, x10, x14 = chachaQR(x2, x6, x10, x14)
		x3, x7, x11, x15 = chachaQR(x3, x7, x11, x15)
		// diagonal round
		x0, x5, x10, x15 = chachaQR(x0, x5, x10, x15)
		x1, x6, x11, x12 = chachaQR(x1, x6, x11, x12)
		x2, x7, x8, x13 = chachaQR(x2, x7, x8, x13)
		x3, x4, x9, x14 = chachaQR(x3, x4, x9, x14)
	}
	out[0], out[1], out[2], out[3] = x0+in[0], x1+in[1], x2+in[2], x3+in[3]
	out[4], out[5], out[6], out[7] = x4+in[4], x5+in[5], x6+in[6], x7+in[7]
	out[8], out[9], out[10], out[11] = x8+in[8], x9+in[9], x10+in[10], x11+in[11]
	out[12], out[13], out[14], out[15] = x12+in[12], x13+in[13], x14+in[14], x15+in[15]
}

func chachaQR(a, b, c, d uint32) (uint32, uint32, uint32, uint32) {
	a += b
	d = bits.RotateLeft32(d^a, 16)
	c += d
	b = bits.RotateLeft32(b^c, 12)
	a += b
	d = bits.RotateLeft32(d^a, 8)
	c += d
	b = bits.RotateLeft32(b^c, 7)
	return a, b, c, d
}

// chachaInit fills the constant and key words of a ChaCha state.
func chachaInit(st *[16]uint32, key *[32]byte) {
	st[0], st[1], st[2], st[3] = 0x61707865, 0x3320646e, 0x79622d32, 0x6b206574 // "expand 32-byte k"
	for i := range 8 {
		st[4+i] = binary.LittleEndian.Uint32(key[4*i:])
	}
}

// chacha8Rng is rand_chacha's ChaCha8Rng seeded with from_seed (stream 0,
// counter 0). rand_core's BlockRng returns next_u64 as the next two
// keystream words (low word first) regardless of buffer boundaries, so a
// plain word stream is exact.
type chacha8Rng struct {
	state [16]uint32
	buf   [16]uint32
	idx   int // next unread word in buf; 16 = empty
}

func newChaCha8Rng(seed *[32]byte) chacha8Rng {
	var r chacha8Rng
	chachaInit(&r.state, seed)
	r.idx = 16
	return r
}

func (r *chacha8Rng) nextU32() uint32 {
	if r.idx == 16 {
		chachaBlock(&r.buf, &r.state, 8)
		// 64-bit block counter in words 12 (low) and 13 (high).
		r.state[12]++
		if r.state[12] == 0 {
			r.state[13]++
		}
		r.idx = 0
	}
	w := r.buf[r.idx]
	r.idx++
	return w
}

func (r *chacha8Rng) nextU64() uint64 {
	lo := r.nextU32()
	hi := r.nextU32()
	return uint64(hi)<<32 | uint64(lo)
}

// chacha20IETF is a ChaCha20 keystream (RFC 8439 layout) positioned at a
// byte offset, matching RustCrypto's ChaCha20 with try_seek(byte offset).
type chacha20IETF struct {
	key   [32]byte
	nonce [12]byte
	c     *chacha20.Cipher
}

func newChaCha20IETF(key *[32]byte, nonce *[12]byte) *chacha20IETF {
	c := &chacha20IETF{key: *key, nonce: *nonce}
	c.seek(0)
	return c
}

// seek positions the keystream at byte pos (pos/64 must fit in 32 bits).
// x/crypto's cipher only moves forward, so a seek starts a new one.
func (c *chacha20IETF) seek(pos uint64) {
	ci, err := chacha20.NewUnauthenticatedCipher(c.key[:], c.nonce[:])
	if err != nil { // key and nonce have the sizes it wants
		panic(fmt.Sprintf("sdr: chacha20: %v", err))
	}
	ci.SetCounter(uint32(pos / 64))
	var skip [64]byte
	ci.XORKeyStream(skip[:pos%64], skip[:pos%64])
	c.c = ci
}

// keystream fills p with the next len(p) keystream bytes.
func (c *chacha20IETF) keystream(p []byte) {
	clear(p)
	c.c.XORKeyStream(p, p)
}
