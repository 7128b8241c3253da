package hash

import (
	"errors"
	"fmt"
	"math"
	"sync"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
)

// Strength selects neptune's security margin. Filecoin uses Standard
// everywhere; Strengthened (25% more partial rounds) exists in neptune for a
// quick switch should new attacks appear.
type Strength int

const (
	// Standard is neptune's default strength (Strength::Standard).
	Standard Strength = iota
	// Strengthened is neptune's Strength::Strengthened.
	Strengthened
)

// String returns neptune's name for s.
func (s Strength) String() string {
	switch s {
	case Standard:
		return "standard"
	case Strengthened:
		return "strengthened"
	default:
		return fmt.Sprintf("Strength(%d)", int(s))
	}
}

// MaxArity is the largest Poseidon arity supported (neptune implements
// Arity for U1..U36).
const MaxArity = 36

// ErrArity is returned for an arity neptune does not support, or a preimage
// whose length does not fit the arity.
var ErrArity = errors.New("unsupported Poseidon arity")

// neptune's Grain LFSR parameters: a prime field (1) and the x^5 S-box (1).
const (
	grainField = 1
	grainSBox  = 1
	// fieldBits is F::NUM_BITS of the BLS12-381 scalar field.
	fieldBits = 255
)

// RoundNumbers returns the full and partial round counts neptune v11 uses for
// a Poseidon of the given arity (width arity+1) and strength. The numbers
// come from neptune's port of the Poseidon authors' calc_round_numbers.py
// (a 256-bit modulus, 128-bit security, with the security margin: two more
// full rounds and 7.5% more partial rounds), all evaluated in f32 as neptune
// does; Strengthened adds a further 25% partial rounds, rounded up.
func RoundNumbers(arity int, strength Strength) (full, partial int, err error) {
	if arity < 1 || arity > MaxArity {
		return 0, 0, fmt.Errorf("poseidon round numbers for arity %d: %w", arity, ErrArity)
	}
	full, partial = calcRoundNumbers(arity+1, true)
	switch strength {
	case Standard:
	case Strengthened:
		partial = int(math.Ceil(float64(partial) * 1.25))
	default:
		return 0, 0, fmt.Errorf("poseidon round numbers for arity %d: unknown strength %d", arity, int(strength))
	}
	return full, partial, nil
}

// calcRoundNumbers ports neptune's round_numbers.rs calc_round_numbers: the
// (R_F, R_P) minimizing the S-box count t*R_F + R_P among secure choices.
func calcRoundNumbers(t int, securityMargin bool) (rf, rp int) {
	minCost := math.MaxInt
	for rfTest := 2; rfTest <= 1000; rfTest += 2 {
		for rpTest := 4; rpTest < 200; rpTest++ {
			if !roundNumbersAreSecure(t, rfTest, rpTest) {
				continue
			}
			f, p := rfTest, rpTest
			if securityMargin {
				f += 2
				p = int(math.Ceil(float64(float32(1.075) * float32(rpTest))))
			}
			cost := t*f + p
			if cost < minCost || (cost == minCost && f < rf) {
				rf, rp, minCost = f, p, cost
			}
		}
	}
	return rf, rp
}

// roundNumbersAreSecure ports neptune's round_numbers_are_secure, keeping its
// f32 arithmetic. Every intermediate is converted to float32 explicitly so
// that the compiler cannot fuse operations.
func roundNumbersAreSecure(t, rf, rp int) bool {
	const n, m = float32(256), float32(128) // PRIME_BITLEN, security level M
	rpF, tF := float32(rp), float32(t)
	rfStat := float32(10)
	if m <= float32(float32(n-3)*float32(tF+1)) {
		rfStat = 6
	}
	log2t := float32(math.Log2(float64(tF)))
	rfInterp := float32(float32(float32(float32(0.43)*m)+log2t) - rpF)
	rfGrob1 := float32(float32(float32(0.21)*n) - rpF)
	rfGrob2 := float32(float32(float32(float32(float32(0.14)*n)-1)-rpF) / float32(tF-1))
	rfMax := 0
	for _, v := range []float32{rfStat, rfInterp, rfGrob1, rfGrob2} {
		c := math.Ceil(float64(v))
		if c < 0 { // Rust's `as usize` saturates negatives to 0.
			c = 0
		}
		if int(c) > rfMax {
			rfMax = int(c)
		}
	}
	return rf >= rfMax
}

// GenerateRoundConstants ports neptune's round_constants.rs
// generate_constants for the BLS12-381 scalar field: (R_F+R_P)*t field
// elements drawn from the Grain LFSR in self-shrinking mode, initialized with
// the field type, S-box, field size (255 bits), t, R_F and R_P. Each
// candidate is 255 generated bits read as a big-endian integer; candidates
// not below the modulus are discarded.
func GenerateRoundConstants(t, rf, rp int) []fr.Element {
	g := newGrain(grainField, grainSBox, fieldBits, t, rf, rp)
	out := make([]fr.Element, 0, (rf+rp)*t)
	for len(out) < (rf+rp)*t {
		var be [32]byte
		// 255 = 7 + 31*8: the partial byte comes first.
		be[0] = g.nextByte(fieldBits % 8)
		for i := 1; i < 32; i++ {
			be[i] = g.nextByte(8)
		}
		e, err := fr.BigEndian.Element(&be)
		if err != nil {
			continue // not below the modulus: draw again
		}
		out = append(out, e)
	}
	return out
}

// grain is the 80-bit Grain LFSR of the Poseidon reference scripts, kept as
// a ring buffer: state[(head+i)%80] is bit i.
type grain struct {
	state [80]bool
	head  int
}

func newGrain(field, sbox, fieldSize, t, rf, rp int) *grain {
	g := &grain{}
	i := 0
	appendBits := func(n int, v uint64) {
		for b := n - 1; b >= 0; b-- {
			g.state[i] = (v>>uint(b))&1 == 1
			i++
		}
	}
	appendBits(2, uint64(field))
	appendBits(4, uint64(sbox))
	appendBits(12, uint64(fieldSize))
	appendBits(12, uint64(t))
	appendBits(10, uint64(rf))
	appendBits(10, uint64(rp))
	appendBits(30, 1<<30-1)
	for range 160 {
		g.step()
	}
	return g
}

func (g *grain) bit(i int) bool { return g.state[(g.head+i)%80] }

// step computes b_{i+80} = b_{i+62} ^ b_{i+51} ^ b_{i+38} ^ b_{i+23} ^
// b_{i+13} ^ b_i, drops b_i and appends the new bit.
func (g *grain) step() bool {
	nb := g.bit(62) != g.bit(51)
	nb = nb != g.bit(38)
	nb = nb != g.bit(23)
	nb = nb != g.bit(13)
	nb = nb != g.bit(0)
	g.state[g.head] = nb
	g.head = (g.head + 1) % 80
	return nb
}

// next returns the next self-shrunk bit: bits are taken in pairs and the
// second is output only when the first is 1.
func (g *grain) next() bool {
	for !g.step() {
		g.step()
	}
	return g.step()
}

// nextByte packs n bits, first generated most significant.
func (g *grain) nextByte(n int) byte {
	var acc byte
	for range n {
		acc <<= 1
		if g.next() {
			acc |= 1
		}
	}
	return acc
}

// GenerateMDS returns neptune's t x t MDS matrix: the Cauchy matrix
// M[i][j] = 1 / (x_i + y_j) with x_i = i and y_j = t + j. It is symmetric.
func GenerateMDS(t int) [][]fr.Element {
	m := make([][]fr.Element, t)
	for i := range m {
		m[i] = make([]fr.Element, t)
		for j := range m[i] {
			var e fr.Element
			e.SetUint64(uint64(i + t + j))
			m[i][j].Inverse(&e)
		}
	}
	return m
}

// MerkleTreeTag is neptune's HashType::MerkleTree domain tag, 2^arity - 1:
// the tag of every Poseidon hash Filecoin's PoRep computes (tree nodes,
// column hashes, comm_r).
func MerkleTreeTag(arity int) (fr.Element, error) {
	if arity < 1 || arity > MaxArity {
		return fr.Element{}, fmt.Errorf("merkle tree tag for arity %d: %w", arity, ErrArity)
	}
	var e fr.Element
	e.SetUint64(uint64(1)<<uint(arity) - 1)
	return e, nil
}

// ConstantLengthTag is neptune's HashType::ConstantLength(length) domain
// tag, length * 2^64.
func ConstantLengthTag(length int) fr.Element {
	var e, s fr.Element
	e.SetUint64(uint64(length))
	s.SetUint64(1 << 32)
	s.Square(&s) // 2^64
	e.Mul(&e, &s)
	return e
}

// CustomTag is neptune's HashType::Custom(CType::Arbitrary(id)) domain tag,
// id * 2^40, for 1 <= id <= 256 (storage-proofs-update uses id 1 for its
// randomness hash).
func CustomTag(id uint64) (fr.Element, error) {
	if id < 1 || id > 256 {
		return fr.Element{}, fmt.Errorf("custom domain tag id %d out of range [1, 256]", id)
	}
	var e fr.Element
	e.SetUint64(id << 40)
	return e, nil
}

// Constants holds everything a Poseidon permutation of one arity and
// strength needs. Obtain them with [ConstantsFor]; they are immutable and
// safe for concurrent use.
type Constants struct {
	arity, width   int
	full, partial  int
	strength       Strength
	merkleTag      fr.Element
	roundConstants []fr.Element   // width * (full + partial), round-major
	mds            [][]fr.Element // width x width, symmetric
	opt            optimized
}

type constantsKey struct {
	arity    int
	strength Strength
}

type constantsEntry struct {
	once sync.Once
	c    *Constants
	err  error
}

// constantsCache memoizes ConstantsFor; entries are written once and then
// only read.
var constantsCache sync.Map // constantsKey -> *constantsEntry

// ConstantsFor returns the Poseidon constants of the given arity (1 to
// [MaxArity]) and strength, as neptune's PoseidonConstants::new_with_strength
// builds them. They are computed on first use and cached; concurrent callers
// share one computation.
func ConstantsFor(arity int, strength Strength) (*Constants, error) {
	if arity < 1 || arity > MaxArity {
		return nil, fmt.Errorf("poseidon constants for arity %d: %w", arity, ErrArity)
	}
	key := constantsKey{arity, strength}
	v, ok := constantsCache.Load(key)
	if !ok {
		v, _ = constantsCache.LoadOrStore(key, &constantsEntry{})
	}
	e := v.(*constantsEntry)
	e.once.Do(func() { e.c, e.err = newConstants(arity, strength) })
	return e.c, e.err
}

func newConstants(arity int, strength Strength) (*Constants, error) {
	full, partial, err := RoundNumbers(arity, strength)
	if err != nil {
		return nil, err
	}
	tag, err := MerkleTreeTag(arity)
	if err != nil {
		return nil, err
	}
	t := arity + 1
	c := &Constants{
		arity:          arity,
		width:          t,
		full:           full,
		partial:        partial,
		strength:       strength,
		merkleTag:      tag,
		roundConstants: GenerateRoundConstants(t, full, partial),
		mds:            GenerateMDS(t),
	}
	if err := c.precompute(); err != nil {
		return nil, fmt.Errorf("poseidon constants for arity %d: %w", arity, err)
	}
	return c, nil
}

// Arity returns the number of preimage elements a hash absorbs.
func (c *Constants) Arity() int { return c.arity }

// Width returns the permutation width, arity + 1.
func (c *Constants) Width() int { return c.width }

// FullRounds returns R_F (half before and half after the partial rounds).
func (c *Constants) FullRounds() int { return c.full }

// PartialRounds returns R_P.
func (c *Constants) PartialRounds() int { return c.partial }

// Strength returns the strength the constants were built for.
func (c *Constants) Strength() Strength { return c.strength }

// MerkleTag returns the HashType::MerkleTree domain tag, 2^arity - 1.
func (c *Constants) MerkleTag() fr.Element { return c.merkleTag }

// RoundConstants returns a copy of the unoptimized round constants, width
// per round, in round order (neptune's round_constants).
func (c *Constants) RoundConstants() []fr.Element {
	return append([]fr.Element(nil), c.roundConstants...)
}

// MDS returns a copy of the MDS matrix (neptune's mds_matrices.m).
func (c *Constants) MDS() [][]fr.Element {
	out := make([][]fr.Element, len(c.mds))
	for i := range c.mds {
		out[i] = append([]fr.Element(nil), c.mds[i]...)
	}
	return out
}
