package packed

import (
	"bufio"
	"bytes"
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
)

// randomValues returns n values, most 0 or 1 as a circuit's are, with a
// share of others (some small, some full-size).
func randomValues(rng *rand.Rand, n int, otherShare float64) []fr.Element {
	xs := make([]fr.Element, n)
	for i := range xs {
		switch r := rng.Float64(); {
		case r < otherShare/2:
			xs[i].SetUint64(rng.Uint64())
		case r < otherShare:
			xs[i].SetRandom()
		case r < (1+otherShare)/2:
			xs[i].SetOne()
		}
	}
	return xs
}

func TestVectorMatchesDense(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 63, 64, 65, 1000, 4097, 2*otherChunk + 3} {
		for _, share := range []float64{0, 0.013, 0.5, 1} {
			xs := randomValues(rng, n, share)
			v := Pack(xs)
			if v.Len() != n {
				t.Fatalf("len %d, want %d", v.Len(), n)
			}
			if v.Bytes() > MaxBytes(n) {
				t.Fatalf("n=%d share=%v: %d bytes, MaxBytes %d", n, share, v.Bytes(), MaxBytes(n))
			}
			zeros, ones, others := v.Counts()
			if zeros+ones+others != n || others != v.Others() {
				t.Fatalf("counts %d+%d+%d of %d", zeros, ones, others, n)
			}
			for i := range xs {
				if got := v.At(i); got != xs[i] {
					t.Fatalf("n=%d share=%v: At(%d) = %v, want %v", n, share, i, got.String(), xs[i].String())
				}
			}
			for _, lo := range []int{0, n / 3, max(n-1, 0)} {
				dst := make([]fr.Element, n-lo)
				v.Expand(dst, lo)
				for j := range dst {
					if dst[j] != xs[lo+j] {
						t.Fatalf("Expand from %d: element %d differs", lo, lo+j)
					}
				}
			}
			skip := make([]bool, n/2) // shorter than the vector: the rest kept
			for i := range skip {
				skip[i] = rng.IntN(3) == 0
			}
			var want []fr.Element
			for i := range xs {
				if i >= len(skip) || !skip[i] {
					want = append(want, xs[i])
				}
			}
			var got []fr.Element
			buf := make([]fr.Element, 7)
			for from := 0; from < n; {
				next, k := v.ExpandSkip(buf, from, skip)
				got = append(got, buf[:k]...)
				from = next
			}
			if len(got) != len(want) {
				t.Fatalf("ExpandSkip: %d elements, want %d", len(got), len(want))
			}
			for i := range got {
				if got[i] != want[i] {
					t.Fatalf("ExpandSkip: element %d differs", i)
				}
			}
		}
	}
}

func TestBuilderReservedSlots(t *testing.T) {
	b := NewBuilder(10)
	var zero, x fr.Element
	x.SetUint64(5)
	b.AppendOther(&zero) // reserved: its value comes later
	b.AppendOther(&zero)
	b.Append(&x)
	o := fr.One()
	b.Append(&o)
	if err := b.SetOther(1, &o); err != nil {
		t.Fatal(err)
	}
	if err := b.SetOther(3, &x); err == nil {
		t.Fatal("SetOther on a bit slot accepted")
	}
	v := b.Vector()
	for i, want := range []fr.Element{zero, o, x, o} {
		if got := v.At(i); got != want {
			t.Fatalf("element %d = %s, want %s", i, got.String(), want.String())
		}
	}
}

func encode(t *testing.T, v *Vector) []byte {
	t.Helper()
	var buf bytes.Buffer
	n, err := v.WriteTo(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if n != int64(buf.Len()) || n != v.EncodedBytes() {
		t.Fatalf("wrote %d bytes, buffer %d, EncodedBytes %d", n, buf.Len(), v.EncodedBytes())
	}
	return buf.Bytes()
}

func TestCodecRoundTripAndRefusals(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	xs := randomValues(rng, 1000, 0.05)
	v := Pack(xs)
	data := encode(t, v)
	back, err := ReadVector(bufio.NewReader(bytes.NewReader(append(data, 0xEE))), 1000)
	if err != nil {
		t.Fatal(err)
	}
	for i := range xs {
		if back.At(i) != xs[i] {
			t.Fatalf("element %d differs after a round trip", i)
		}
	}
	if _, err := ReadVector(bytes.NewReader(data), 999); !errors.Is(err, ErrFormat) {
		t.Fatalf("a vector longer than allowed: %v", err)
	}
	for cut := 0; cut < len(data); cut += 97 {
		if _, err := ReadVector(bytes.NewReader(data[:cut]), 1000); !errors.Is(err, ErrFormat) {
			t.Fatalf("truncated at %d: %v", cut, err)
		}
	}
	mutate := func(f func(b []byte)) []byte {
		b := append([]byte(nil), data...)
		f(b)
		return b
	}
	firstOther := -1
	for i := range xs {
		if v.class(i) == classOther {
			firstOther = i
			break
		}
	}
	for name, bad := range map[string][]byte{
		"other where zero": mutate(func(b []byte) {
			// clear the nonzero bit of an other
			blk := firstOther / 64
			b[headerBytes+16*blk+(firstOther%64)/8] &^= 1 << (firstOther % 8)
		}),
		"others miscounted": mutate(func(b []byte) { b[8]++ }),
		"bits past the end": mutate(func(b []byte) { b[headerBytes+16*15+7] |= 0x80 }),
		"non-canonical element": mutate(func(b []byte) {
			off := len(b) - 32
			for i := 0; i < 32; i++ {
				b[off+i] = 0xFF
			}
		}),
	} {
		if _, err := ReadVector(bytes.NewReader(bad), 1000); !errors.Is(err, ErrFormat) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func FuzzReadVector(f *testing.F) {
	rng := rand.New(rand.NewPCG(5, 6))
	var buf bytes.Buffer
	Pack(randomValues(rng, 130, 0.1)).WriteTo(&buf)
	f.Add(buf.Bytes())
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := ReadVector(bytes.NewReader(data), 1<<16)
		if err != nil {
			return
		}
		for i := 0; i < v.Len(); i++ {
			v.At(i)
		}
		var again bytes.Buffer
		v.WriteTo(&again)
		if !bytes.Equal(again.Bytes(), data[:again.Len()]) {
			t.Fatal("an accepted vector re-encodes differently")
		}
	})
}

// randomSystem records a random sparse system over wires wires and
// returns it with its rows as dense terms for a naive evaluation.
func randomSystem(t *testing.T, rng *rand.Rand, wires, rows, coeffs int) (*System, [3][][]struct {
	col int
	c   fr.Element
}) {
	t.Helper()
	table := make([]fr.Element, coeffs)
	for i := range table {
		switch i {
		case 0:
			table[i].SetOne()
		case 1:
			table[i].SetOne()
			table[i].Neg(&table[i])
		default:
			table[i].SetUint64(uint64(i) * 7919)
		}
	}
	b := NewSystemBuilder(wires, Sizes{Rows: rows})
	var dense [3][][]struct {
		col int
		c   fr.Element
	}
	var row []Entry
	for r := 0; r < rows; r++ {
		for m := A; m <= C; m++ {
			row = row[:0]
			var terms []struct {
				col int
				c   fr.Element
			}
			for k := rng.IntN(5); k > 0; k-- {
				c := table[rng.IntN(len(table))]
				col := rng.IntN(wires)
				row = append(row, Entry{Col: uint32(col), Coeff: b.Coeff(&c)})
				terms = append(terms, struct {
					col int
					c   fr.Element
				}{col, c})
			}
			b.AppendRow(m, row)
			dense[m] = append(dense[m], terms)
		}
	}
	s, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return s, dense
}

func TestSystemEvalMatchesNaive(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, coeffs := range []int{40, 70_000} { // 16-bit indices, and widened
		wires, rows := 3000, 9000
		s, dense := randomSystem(t, rng, wires, rows, coeffs)
		xs := randomValues(rng, wires, 0.1)
		w := Pack(xs)
		if s.Rows() != rows || s.Wires() != wires {
			t.Fatalf("system of %d rows over %d wires", s.Rows(), s.Wires())
		}
		for m := A; m <= C; m++ {
			for _, lo := range []int{0, 17, rows - 100} {
				dst := make([]fr.Element, min(rows-lo+50, 8300)) // past the last row: zeros
				for i := range dst {
					dst[i].SetUint64(99) // must be overwritten
				}
				if err := s.Eval(m, w, lo, dst); err != nil {
					t.Fatal(err)
				}
				for j := range dst {
					var want fr.Element
					if r := lo + j; r < rows {
						for _, term := range dense[m][r] {
							var p fr.Element
							p.Mul(&term.c, &xs[term.col])
							want.Add(&want, &p)
						}
					}
					if dst[j] != want {
						t.Fatalf("coeffs=%d matrix %d row %d differs", coeffs, m, lo+j)
					}
				}
			}
		}
		if err := s.Eval(A, Pack(xs[:10]), 0, make([]fr.Element, 1)); err == nil {
			t.Fatal("an assignment of the wrong length evaluated")
		}
	}
}

func TestCheckRowsFindsTheBrokenRow(t *testing.T) {
	// x_i * x_i = y_i for wires (1, x, y...): a boolean check and a square.
	const pairs = 5000
	b := NewSystemBuilder(1+2*pairs, Sizes{})
	one := fr.One()
	c1 := b.Coeff(&one)
	xs := make([]fr.Element, 1+2*pairs)
	xs[0].SetOne()
	for i := 0; i < pairs; i++ {
		x, y := 1+2*i, 2+2*i
		xs[x].SetUint64(uint64(i % 3))
		xs[y].Mul(&xs[x], &xs[x])
		b.AppendRow(A, []Entry{{uint32(x), c1}})
		b.AppendRow(B, []Entry{{uint32(x), c1}})
		b.AppendRow(C, []Entry{{uint32(y), c1}})
	}
	s, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	if rc, err := CheckRows(s, Pack(xs), 0, pairs, 777); err != nil || rc.Bad != -1 {
		t.Fatalf("a satisfying assignment: row %d, %v", rc.Bad, err)
	}
	xs[2+2*4321].SetUint64(7)
	if rc, err := CheckRows(s, Pack(xs), 0, pairs, 777); err != nil || rc.Bad != 4321 {
		t.Fatalf("broken row 4321 reported as %d, %v", rc.Bad, err)
	}
}

// A Repeated system evaluates as the system its copies make when
// recorded whole: copy j's inputs and aux moved to copy j's, then the
// per-input rows.
func TestRepeatedMatchesWhole(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	const copies, blockIn, blockAux, blockRows = 5, 3, 40, 300
	block, dense := randomSystem(t, rng, 1+blockIn+blockAux, blockRows, 30)
	rep, err := NewRepeated(block, copies, blockIn, true)
	if err != nil {
		t.Fatal(err)
	}
	inputs := 1 + copies*blockIn
	wires := inputs + copies*blockAux
	if rep.Wires() != wires || rep.Rows() != copies*blockRows+inputs {
		t.Fatalf("%d wires, %d rows", rep.Wires(), rep.Rows())
	}
	col := func(j, c int) int {
		switch {
		case c == 0:
			return 0
		case c <= blockIn:
			return c + j*blockIn
		}
		return inputs + j*blockAux + c - 1 - blockIn
	}
	b := NewSystemBuilder(wires, Sizes{})
	var row []Entry
	for j := range copies {
		for r := range blockRows {
			for m := A; m <= C; m++ {
				row = row[:0]
				for _, term := range dense[m][r] {
					row = append(row, Entry{Col: uint32(col(j, term.col)), Coeff: b.Coeff(&term.c)})
				}
				b.AppendRow(m, row)
			}
		}
	}
	one := fr.One()
	for i := range inputs {
		b.AppendRow(A, []Entry{{Col: uint32(i), Coeff: b.Coeff(&one)}})
		b.AppendRow(B, nil)
		b.AppendRow(C, nil)
	}
	whole, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	w := Pack(randomValues(rng, wires, 0.3))
	for m := A; m <= C; m++ {
		for _, lo := range []int{0, blockRows - 7, 2*blockRows + 11, rep.Rows() - 5} {
			n := min(rep.Rows()-lo+9, 2*blockRows+3) // across copies and past the end
			got, want := make([]fr.Element, n), make([]fr.Element, n)
			if err := rep.Eval(m, w, lo, got); err != nil {
				t.Fatal(err)
			}
			if err := whole.Eval(m, w, lo, want); err != nil {
				t.Fatal(err)
			}
			for i := range got {
				if got[i] != want[i] {
					t.Fatalf("matrix %d row %d: the repeated system differs from the whole", m, lo+i)
				}
			}
		}
	}
	if rep.Bytes() >= whole.Bytes() {
		t.Fatalf("the repeated system holds %d bytes, the whole %d", rep.Bytes(), whole.Bytes())
	}
}
