package circuit

import (
	"fmt"

	"github.com/c2flow/c2flow/filecoin/gadgets"
	"github.com/c2flow/c2flow/filecoin/r1cs"
)

// This file ports storage-proofs-core src/gadgets/insertion.rs: inserting
// a number into a list at a position given by bits, the Merkle path step
// that puts the path's node among its siblings.

// pick returns a if cond, else b: it allocates the result ("pick result")
// and enforces (b − a)·cond = b − result ("pick"), as insertion.rs pick.
func pick(cs r1cs.System, cond gadgets.Boolean, a, b gadgets.AllocatedNum) gadgets.AllocatedNum {
	v := b.Value
	if cond.Value() {
		v = a.Value
	}
	cs.Push("pick result")
	c := gadgets.AllocNum(cs, v)
	cs.Pop()
	la, lb, lc := cs.Scratch()
	la = la.Add(b.Var).Sub(a.Var)
	lb = cond.AppendLC(lb, frOne)
	lc = lc.Add(b.Var).Sub(c.Var)
	cs.Enforce("pick", la, lb, lc)
	return c
}

// pickNamed is pick under the namespace name.
func pickNamed(cs r1cs.System, name string, cond gadgets.Boolean, a, b gadgets.AllocatedNum) gadgets.AllocatedNum {
	cs.Push(name)
	c := pick(cs, cond, a, b)
	cs.Pop()
	return c
}

// insert returns elements with element inserted at the position bits spell
// (least significant bit first); len(elements)+1 must be 2^len(bits). It
// is insertion.rs insert: hand-optimized for 2, 4 and 8 (2, 8 and 22
// constraints), the general selection otherwise (size·(size−1)).
func insert(cs r1cs.System, element gadgets.AllocatedNum, bits []gadgets.Boolean, elements []gadgets.AllocatedNum) ([]gadgets.AllocatedNum, error) {
	size := len(elements) + 1
	if len(bits) >= 31 || 1<<len(bits) != size {
		return nil, fmt.Errorf("insert into %d elements with %d bits: %w", len(elements), len(bits), ErrShape)
	}
	switch size {
	case 2:
		return insert2(cs, element, bits, elements), nil
	case 4:
		return insert4(cs, element, bits, elements), nil
	case 8:
		return insert8(cs, element, bits, elements)
	}
	out := make([]gadgets.AllocatedNum, size)
	choices := make([]gadgets.AllocatedNum, size)
	for pos := range size {
		// choices[index] is the element at pos when inserting at index.
		for index := range size {
			switch {
			case pos < index:
				choices[index] = elements[pos]
			case pos == index:
				choices[index] = element
			default:
				choices[index] = elements[pos-1]
			}
		}
		cs.PushIndexed("choice at", pos)
		out[pos] = selectNum(cs, choices, bits)
		cs.Pop()
	}
	return out, nil
}

func insert2(cs r1cs.System, a gadgets.AllocatedNum, bits []gadgets.Boolean, e []gadgets.AllocatedNum) []gadgets.AllocatedNum {
	return []gadgets.AllocatedNum{
		pickNamed(cs, "binary insert 0", bits[0], e[0], a),
		pickNamed(cs, "binary insert 1", bits[0], a, e[0]),
	}
}

func insert4(cs r1cs.System, a gadgets.AllocatedNum, bits []gadgets.Boolean, e []gadgets.AllocatedNum) []gadgets.AllocatedNum {
	b0, b1 := bits[0], bits[1]
	b, c, d := e[0], e[1], e[2]
	p0x0 := pickNamed(cs, "p0_x0", b0, b, a)
	p0 := pickNamed(cs, "p0", b1, b, p0x0)
	p1x0 := pickNamed(cs, "p1_x0", b0, a, b)
	p1 := pickNamed(cs, "p1", b1, c, p1x0)
	p2x1 := pickNamed(cs, "p2_x1", b0, d, a)
	p2 := pickNamed(cs, "p2", b1, p2x1, c)
	p3x1 := pickNamed(cs, "p3_x1", b0, a, d)
	p3 := pickNamed(cs, "p3", b1, p3x1, d)
	return []gadgets.AllocatedNum{p0, p1, p2, p3}
}

func insert8(cs r1cs.System, a gadgets.AllocatedNum, bits []gadgets.Boolean, e []gadgets.AllocatedNum) ([]gadgets.AllocatedNum, error) {
	b0, b1, b2 := bits[0], bits[1], bits[2]
	ab0, ok0 := b0.Bit()
	ab1, ok1 := b1.Bit()
	if !ok0 || !ok1 || b0.IsNegated() || b1.IsNegated() {
		return nil, fmt.Errorf("insert into 7 elements: bits must be allocated and unnegated: %w", ErrShape)
	}
	b, c, d, ee, f, g, h := e[0], e[1], e[2], e[3], e[4], e[5], e[6]

	cs.Push("b0 nor b1")
	nor := gadgets.Is(gadgets.NorBits(cs, ab0, ab1))
	cs.Pop()
	cs.Push("b0 and b1")
	and := gadgets.Is(gadgets.AndBits(cs, ab0, ab1))
	cs.Pop()

	p0xx0 := pickNamed(cs, "p0_xx0", nor, a, b)
	p0 := pickNamed(cs, "p0", b2, b, p0xx0)

	p1x00 := pickNamed(cs, "p1_x00", b0, a, b)
	p1xx0 := pickNamed(cs, "p1_xx0", b1, c, p1x00)
	p1 := pickNamed(cs, "p1", b2, c, p1xx0)

	p2x10 := pickNamed(cs, "p2_x10", b0, d, a)
	p2xx0 := pickNamed(cs, "p2_xx0", b1, p2x10, c)
	p2 := pickNamed(cs, "p2", b2, d, p2xx0)

	p3xx0 := pickNamed(cs, "p3_xx0", and, a, d)
	p3 := pickNamed(cs, "p3", b2, ee, p3xx0)

	p4xx1 := pickNamed(cs, "p4_xx1", nor, a, f)
	p4 := pickNamed(cs, "p4", b2, p4xx1, ee)

	p5x01 := pickNamed(cs, "p5_x01", b0, a, f)
	p5xx1 := pickNamed(cs, "p5_xx1", b1, g, p5x01)
	p5 := pickNamed(cs, "p5", b2, p5xx1, f)

	p6x11 := pickNamed(cs, "p6_x11", b0, h, a)
	p6xx1 := pickNamed(cs, "p6_xx1", b1, p6x11, g)
	p6 := pickNamed(cs, "p6", b2, p6xx1, g)

	p7xx1 := pickNamed(cs, "p7_xx1", and, a, h)
	p7 := pickNamed(cs, "p7", b2, p7xx1, h)

	return []gadgets.AllocatedNum{p0, p1, p2, p3, p4, p5, p6, p7}, nil
}

// selectNum returns from[n] where bits spell n (least significant first),
// halving the candidates once per bit from the most significant
// (insertion.rs select). len(from) must be 2^len(bits).
func selectNum(cs r1cs.System, from []gadgets.AllocatedNum, bits []gadgets.Boolean) gadgets.AllocatedNum {
	state := append([]gadgets.AllocatedNum(nil), from...)
	half := len(from) / 2
	for i := range bits {
		bit := bits[len(bits)-1-i]
		next := make([]gadgets.AllocatedNum, half)
		for j := range half {
			cs.Push(fmt.Sprintf("pick %d, %d", i, j))
			next[j] = pick(cs, bit, state[half+j], state[j])
			cs.Pop()
		}
		state = next
		half /= 2
	}
	return state[0]
}
