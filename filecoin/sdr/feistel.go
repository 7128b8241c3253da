package sdr

import (
	"encoding/binary"

	"golang.org/x/crypto/blake2b"
)

// Feistel permutation used by the expander graph, ported from
// storage-proofs-core/src/crypto/feistel.rs (rust-fil-proofs).

// feistelRounds is the number of Feistel rounds; only the first
// feistelRounds keys are used.
const feistelRounds = 3

// feistelPrecomputed holds the masks for a domain of num_elements values,
// represented with an even number of bits (2*halfBits).
type feistelPrecomputed struct {
	leftMask, rightMask uint64
	halfBits            uint
}

// feistelPrecompute returns the masks for the smallest power of four that is
// at least numElements (and at least 4).
func feistelPrecompute(numElements uint64) feistelPrecomputed {
	nextPow4 := uint64(4)
	log4 := uint(1)
	for nextPow4 < numElements {
		nextPow4 *= 4
		log4++
	}
	return feistelPrecomputed{
		leftMask:  ((uint64(1) << log4) - 1) << log4,
		rightMask: (uint64(1) << log4) - 1,
		halfBits:  log4,
	}
}

// feistelPermute maps index (< numElements) to a pseudo-random position in
// [0, numElements), cycle-walking until the value lands in range.
func feistelPermute(numElements, index uint64, keys *[4]uint64, p feistelPrecomputed) uint64 {
	u := feistelEncode(index, keys, p)
	for u >= numElements {
		u = feistelEncode(u, keys, p)
	}
	return u
}

// feistelInvertPermute is the inverse of feistelPermute.
func feistelInvertPermute(numElements, index uint64, keys *[4]uint64, p feistelPrecomputed) uint64 {
	u := feistelDecode(index, keys, p)
	for u >= numElements {
		u = feistelDecode(u, keys, p)
	}
	return u
}

func feistelEncode(index uint64, keys *[4]uint64, p feistelPrecomputed) uint64 {
	left := (index & p.leftMask) >> p.halfBits
	right := index & p.rightMask
	for i := range feistelRounds {
		left, right = right, left^feistelRound(right, keys[i], p.rightMask)
	}
	return left<<p.halfBits | right
}

func feistelDecode(index uint64, keys *[4]uint64, p feistelPrecomputed) uint64 {
	left := (index & p.leftMask) >> p.halfBits
	right := index & p.rightMask
	for i := feistelRounds - 1; i >= 0; i-- {
		left, right = right^feistelRound(left, keys[i], p.rightMask), left
	}
	return left<<p.halfBits | right
}

// feistelRound is F(right, key): BLAKE2b-512 over right (8 bytes, big-endian)
// followed by key (8 bytes, big-endian); the first 8 digest bytes read
// big-endian, masked with rightMask.
func feistelRound(right, key, rightMask uint64) uint64 {
	var in [16]byte
	binary.BigEndian.PutUint64(in[:8], right)
	binary.BigEndian.PutUint64(in[8:], key)
	d := blake2b.Sum512(in[:])
	return binary.BigEndian.Uint64(d[:8]) & rightMask
}

// feistelTable tabulates the round function: the right half of a Feistel
// input has only 2^halfBits values (at most 2^18 for 2^32 nodes) and only
// feistelRounds keys are used, so F(right, keys[i]) for every right and i
// fits in a small table that replaces millions of BLAKE2b calls when a whole
// graph's expander parents are generated.
type feistelTable struct {
	p    feistelPrecomputed
	f    [feistelRounds][]uint32 // f[i][right] = feistelRound(right, keys[i], rightMask)
	keys [4]uint64
}

func newFeistelTable(keys *[4]uint64, p feistelPrecomputed) *feistelTable {
	t := &feistelTable{p: p, keys: *keys}
	n := p.rightMask + 1
	for i := range feistelRounds {
		t.f[i] = make([]uint32, n)
		for r := range n {
			t.f[i][r] = uint32(feistelRound(r, keys[i], p.rightMask))
		}
	}
	return t
}

// permute is feistelPermute using the table.
func (t *feistelTable) permute(numElements, index uint64) uint64 {
	u := t.encode(index)
	for u >= numElements {
		u = t.encode(u)
	}
	return u
}

func (t *feistelTable) encode(index uint64) uint64 {
	left := (index & t.p.leftMask) >> t.p.halfBits
	right := index & t.p.rightMask
	for i := range feistelRounds {
		left, right = right, left^uint64(t.f[i][right])
	}
	return left<<t.p.halfBits | right
}
