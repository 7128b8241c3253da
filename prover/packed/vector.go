// Package packed holds a synthesized partition in the form it waits for a
// device in: the assignment packed by value, and the recorded constraint
// system that evaluates a, b and c from it at the device.
//
// Almost every value of a Filecoin circuit's assignment is 0 or 1 (98.7%
// of a 32GiB PoRep partition's 130M aux values): booleans of SHA-256 and
// of bit decompositions. A [Vector] keeps those as two bits each and the
// rest as field elements, so a partition that is 15.5 GiB of dense W, a,
// b, c is about 90 MB packed. a, b and c are not kept at all: they are
// functions of the assignment and the circuit, and a [System] recorded
// once per circuit evaluates them, row by row and chunk by chunk, where
// the device phase needs them.
package packed

import (
	"errors"
	"fmt"
	"math/bits"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
)

// A Vector is a vector of field elements packed by value. Per block of 64
// elements it holds two words: the nonzero bits, and the "other" bits
// (values that are neither 0 nor 1, kept as field elements in order).
// Elements are zero, one, or an other; an other may hold any value (the
// public inputs are reserved as others before their values are known),
// so the classes say how an element is stored, not only what it is.
//
// A Vector is immutable once built and safe for concurrent readers.
type Vector struct {
	n       int
	words   []uint64 // 2 per block: nonzero, other
	rank    []uint32 // others before each block
	others  [][]fr.Element
	nOthers int
}

// The others are kept in chunks of a fixed size: a builder never copies
// them to grow (a circuit of mostly field elements would briefly hold
// twice its others), and a vector's memory is bounded in advance
// (MaxBytes).
const (
	otherShift = 15
	otherChunk = 1 << otherShift
	otherMask  = otherChunk - 1
)

// other returns the k-th other.
func (v *Vector) other(k int) *fr.Element { return &v.others[k>>otherShift][k&otherMask] }

// MaxBytes bounds the memory of a vector of n elements, whatever their
// values: all of them field elements.
func MaxBytes(n int) int64 {
	blocks := int64(n+63) / 64
	return blocks*(16+4) + int64(n)*fr.Bytes + otherChunk*fr.Bytes
}

// ErrFormat is wrapped by the errors of a malformed encoded vector.
var ErrFormat = errors.New("malformed packed vector")

// MaxLen is the most elements a Vector holds (ranks are 32-bit).
const MaxLen = 1<<32 - 1

var one = fr.One()

// Len is the number of elements.
func (v *Vector) Len() int { return v.n }

// Others is the number of elements kept as field elements.
func (v *Vector) Others() int { return v.nOthers }

// Counts returns how many elements are zero, one and other.
func (v *Vector) Counts() (zeros, ones, others int) {
	nz := 0
	for b := 0; b < len(v.words); b += 2 {
		nz += bits.OnesCount64(v.words[b])
	}
	return v.n - nz, nz - v.nOthers, v.nOthers
}

// Bytes is the memory the vector holds.
func (v *Vector) Bytes() int64 {
	if v == nil {
		return 0
	}
	n := int64(cap(v.words))*8 + int64(cap(v.rank))*4 + int64(cap(v.others))*24
	for _, c := range v.others {
		n += int64(cap(c)) * fr.Bytes
	}
	return n
}

// EncodedBytes is the size of the vector's encoding (WriteTo).
func (v *Vector) EncodedBytes() int64 {
	return headerBytes + int64(len(v.words))*8 + int64(v.nOthers)*fr.Bytes
}

// At returns element i.
func (v *Vector) At(i int) fr.Element {
	var e fr.Element
	switch v.class(i) {
	case classOne:
		e = one
	case classOther:
		e = *v.other(v.otherIndex(i))
	}
	return e
}

type class uint8

const (
	classZero class = iota
	classOne
	classOther
)

func (v *Vector) class(i int) class {
	b := uint(i>>6) << 1
	m := uint64(1) << (uint(i) & 63)
	switch {
	case v.words[b]&m == 0:
		return classZero
	case v.words[b+1]&m == 0:
		return classOne
	}
	return classOther
}

// otherIndex is the index in others of element i, an other.
func (v *Vector) otherIndex(i int) int {
	blk := i >> 6
	below := v.words[blk<<1|1] & (uint64(1)<<(uint(i)&63) - 1)
	return int(v.rank[blk]) + bits.OnesCount64(below)
}

// Expand writes elements [lo, lo+len(dst)) into dst.
func (v *Vector) Expand(dst []fr.Element, lo int) {
	if lo < 0 || lo+len(dst) > v.n {
		panic(fmt.Sprintf("packed: expand [%d, %d) of %d elements", lo, lo+len(dst), v.n))
	}
	if len(dst) == 0 {
		return
	}
	oi := v.otherIndex(lo) // the others before lo
	for j := range dst {
		i := lo + j
		b := uint(i>>6) << 1
		m := uint64(1) << (uint(i) & 63)
		switch {
		case v.words[b]&m == 0:
			dst[j] = fr.Element{}
		case v.words[b+1]&m == 0:
			dst[j] = one
		default:
			dst[j] = *v.other(oi)
			oi++
		}
	}
}

// ExpandSkip fills dst with the elements from index from on whose skip
// entry is false (skip may be shorter than the vector: entries past it
// are kept), as a Groth16 prover drops the wires whose proving-key point
// is at infinity. It returns the index after the last element read; dst
// is filled fully unless the vector ends first, and the count filled is
// returned too.
func (v *Vector) ExpandSkip(dst []fr.Element, from int, skip []bool) (next, filled int) {
	i := from
	oi := 0
	if i < v.n {
		oi = v.otherIndex(i)
	}
	for filled < len(dst) && i < v.n {
		b := uint(i>>6) << 1
		m := uint64(1) << (uint(i) & 63)
		nz, other := v.words[b]&m != 0, v.words[b+1]&m != 0
		if i < len(skip) && skip[i] {
			if other {
				oi++
			}
			i++
			continue
		}
		switch {
		case !nz:
			dst[filled] = fr.Element{}
		case !other:
			dst[filled] = one
		default:
			dst[filled] = *v.other(oi)
			oi++
		}
		filled++
		i++
	}
	return i, filled
}

// Builder appends elements to a Vector. The zero Builder is empty and
// ready to use.
type Builder struct {
	v Vector
}

// NewBuilder returns a builder with room for n elements (a hint).
func NewBuilder(n int) *Builder {
	b := &Builder{}
	blocks := (n + 63) / 64
	b.v.words = make([]uint64, 0, 2*blocks)
	b.v.rank = make([]uint32, 0, blocks)
	return b
}

// Len is the number of elements appended.
func (b *Builder) Len() int { return b.v.n }

// Bytes is the memory the builder holds.
func (b *Builder) Bytes() int64 { return b.v.Bytes() }

// Append appends x, as a bit when it is 0 or 1.
func (b *Builder) Append(x *fr.Element) {
	w, m := b.next()
	switch {
	case x.IsZero():
	case *x == one:
		b.v.words[w] |= m
	default:
		b.v.words[w] |= m
		b.v.words[w+1] |= m
		b.appendOther(x)
	}
}

func (b *Builder) appendOther(x *fr.Element) {
	k := len(b.v.others) - 1
	if k < 0 || len(b.v.others[k]) == otherChunk {
		b.v.others = append(b.v.others, make([]fr.Element, 0, otherChunk))
		k++
	}
	b.v.others[k] = append(b.v.others[k], *x)
	b.v.nOthers++
}

// next takes the next element's slot: its block's word index and bit.
func (b *Builder) next() (w uint, m uint64) {
	i := b.v.n
	if i&63 == 0 {
		b.grow()
	}
	b.v.n++
	return uint(i>>6) << 1, uint64(1) << (uint(i) & 63)
}

// AppendOther appends x as a field element whatever its value: a slot
// whose value SetOther may give later.
func (b *Builder) AppendOther(x *fr.Element) {
	w, m := b.next()
	b.v.words[w] |= m
	b.v.words[w+1] |= m
	b.appendOther(x)
}

// SetOther sets element i, which AppendOther appended, to x.
func (b *Builder) SetOther(i int, x *fr.Element) error {
	if i < 0 || i >= b.v.n || b.v.class(i) != classOther {
		return fmt.Errorf("packed: element %d is not a field-element slot", i)
	}
	*b.v.other(b.v.otherIndex(i)) = *x
	return nil
}

// AppendAll appends every element of xs.
func (b *Builder) AppendAll(xs []fr.Element) {
	for i := range xs {
		b.Append(&xs[i])
	}
}

func (b *Builder) grow() {
	if b.v.n >= MaxLen {
		panic("packed: vector longer than MaxLen")
	}
	b.v.rank = append(b.v.rank, uint32(b.v.nOthers))
	b.v.words = append(b.v.words, 0, 0)
}

// Vector returns the vector built so far and resets the builder.
func (b *Builder) Vector() *Vector {
	v := b.v
	b.v = Vector{}
	if k := len(v.others) - 1; k >= 0 && len(v.others[k]) < otherChunk {
		v.others[k] = append([]fr.Element(nil), v.others[k]...) // the last chunk's spare room
	}
	if len(v.words) == 0 {
		v.words, v.rank = []uint64{}, []uint32{}
	}
	return &v
}

// Pack packs xs.
func Pack(xs []fr.Element) *Vector {
	b := NewBuilder(len(xs))
	b.AppendAll(xs)
	return b.Vector()
}
