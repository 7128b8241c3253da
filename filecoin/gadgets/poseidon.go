package gadgets

import (
	"errors"
	"fmt"
	"sync"

	"github.com/c2flow/c2flow/filecoin/hash"
	"github.com/c2flow/c2flow/filecoin/r1cs"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
)

// SparseMatrix is neptune's SparseMatrix: a matrix whose first row and
// column are dense and whose minor at (0, 0) is the identity. WHat is the
// first column (all rows), VRest the first row but its first entry.
type SparseMatrix struct {
	WHat, VRest []fr.Element
}

// PoseidonConstants are the constants of neptune's Poseidon circuit
// (circuit.rs, the "legacy" circuit storage-proofs uses through
// neptune::circuit::poseidon_hash): round constants compressed by
// neptune's preprocessing.rs and the MDS matrix factored into sparse
// matrices by its mds.rs, exactly as neptune 11 derives them, so that the
// circuit's linear combinations have neptune's coefficients.
type PoseidonConstants struct {
	Arity, Width               int
	FullRounds, HalfFullRounds int
	PartialRounds              int
	DomainTag                  fr.Element
	CompressedRoundConstants   []fr.Element
	MDS                        [][]fr.Element
	PreSparse                  [][]fr.Element
	Sparse                     []SparseMatrix
}

type poseidonKey struct {
	arity    int
	strength hash.Strength
	tag      fr.Element
}

type poseidonEntry struct {
	once sync.Once
	c    *PoseidonConstants
	err  error
}

// poseidonCache memoizes PoseidonConstantsFor; entries are immutable once
// computed.
var poseidonCache sync.Map // poseidonKey -> *poseidonEntry

// PoseidonConstantsFor returns the Standard-strength circuit constants of
// the given arity under the MerkleTree domain tag 2^arity − 1 (neptune's
// PoseidonConstants::new(), which filecoin-hashers and storage-proofs use
// for tree nodes and columns). They are computed once and shared.
func PoseidonConstantsFor(arity int) (*PoseidonConstants, error) {
	hc, err := hash.ConstantsFor(arity, hash.Standard)
	if err != nil {
		return nil, fmt.Errorf("poseidon circuit constants: %w", err)
	}
	return PoseidonConstantsWithTag(hc, hc.MerkleTag())
}

// PoseidonConstantsWithTag returns the circuit constants for the
// permutation hc under an arbitrary domain tag, memoized.
func PoseidonConstantsWithTag(hc *hash.Constants, tag fr.Element) (*PoseidonConstants, error) {
	key := poseidonKey{hc.Arity(), hc.Strength(), tag}
	v, _ := poseidonCache.LoadOrStore(key, &poseidonEntry{})
	e := v.(*poseidonEntry)
	e.once.Do(func() { e.c, e.err = newPoseidonConstants(hc, tag) })
	return e.c, e.err
}

var errSingular = errors.New("singular matrix")

func newPoseidonConstants(hc *hash.Constants, tag fr.Element) (*PoseidonConstants, error) {
	t := hc.Width()
	full, partial := hc.FullRounds(), hc.PartialRounds()
	half := full / 2
	rc := hc.RoundConstants()
	m := hc.MDS()
	if len(rc) < t*(full+partial) {
		return nil, fmt.Errorf("poseidon arity %d: %d round constants: %w", hc.Arity(), len(rc), ErrInput)
	}
	mInv, err := matInvert(m)
	if err != nil {
		return nil, fmt.Errorf("poseidon arity %d: inverting MDS: %w", hc.Arity(), err)
	}

	// preprocessing.rs compress_round_constants with every partial round
	// preprocessed.
	rk := func(r int) []fr.Element { return rc[r*t : (r+1)*t] }
	crc := make([]fr.Element, 0, full*t+partial)
	crc = append(crc, rk(0)...)
	for i := 0; i < half-1; i++ {
		crc = append(crc, applyMatrix(mInv, rk(i+1))...)
	}
	final := half + partial
	acc := append([]fr.Element(nil), rk(final)...)
	partialKeys := make([]fr.Element, 0, partial)
	for i := 0; i < partial; i++ {
		inv := applyMatrix(mInv, acc)
		partialKeys = append(partialKeys, inv[0])
		inv[0].SetZero()
		prev := rk(final - i - 1)
		for k := range inv {
			inv[k].Add(&inv[k], &prev[k])
		}
		acc = inv
	}
	crc = append(crc, applyMatrix(mInv, acc)...)
	for i := len(partialKeys) - 1; i >= 0; i-- {
		crc = append(crc, partialKeys[i])
	}
	for i := 1; i < half; i++ {
		crc = append(crc, applyMatrix(mInv, rk(i+final))...)
	}
	if len(crc) != full*t+partial {
		return nil, fmt.Errorf("poseidon arity %d: %d compressed constants: %w", hc.Arity(), len(crc), ErrInput)
	}

	// mds.rs factor_to_sparse_matrixes(m, partial).
	cur := m
	sparse := make([]SparseMatrix, partial)
	for i := 0; i < partial; i++ {
		mPrime, mDoublePrime, err := deriveMDS(cur)
		if err != nil {
			return nil, fmt.Errorf("poseidon arity %d: factoring MDS: %w", hc.Arity(), err)
		}
		sm := SparseMatrix{WHat: make([]fr.Element, t), VRest: append([]fr.Element(nil), mDoublePrime[0][1:]...)}
		for r := 0; r < t; r++ {
			sm.WHat[r] = mDoublePrime[r][0]
		}
		sparse[partial-1-i] = sm
		cur = matMul(m, mPrime)
	}
	return &PoseidonConstants{
		Arity: hc.Arity(), Width: t, FullRounds: full, HalfFullRounds: half, PartialRounds: partial,
		DomainTag: tag, CompressedRoundConstants: crc, MDS: m, PreSparse: cur, Sparse: sparse,
	}, nil
}

// deriveMDS returns neptune's m_prime and m_double_prime of m.
func deriveMDS(m [][]fr.Element) (mPrime, mDoublePrime [][]fr.Element, err error) {
	t := len(m)
	mHat := make([][]fr.Element, t-1)
	for i := 1; i < t; i++ {
		mHat[i-1] = append([]fr.Element(nil), m[i][1:]...)
	}
	mHatInv, err := matInvert(mHat)
	if err != nil {
		return nil, nil, err
	}
	mPrime = make([][]fr.Element, t)
	mDoublePrime = make([][]fr.Element, t)
	w := make([]fr.Element, t-1)
	for i := 1; i < t; i++ {
		w[i-1] = m[i][0]
	}
	wHat := applyMatrix(mHatInv, w)
	for i := 0; i < t; i++ {
		mPrime[i] = make([]fr.Element, t)
		mDoublePrime[i] = make([]fr.Element, t)
		if i == 0 {
			mPrime[0][0].SetOne()
			mDoublePrime[0][0] = m[0][0]
			copy(mDoublePrime[0][1:], m[0][1:])
			continue
		}
		copy(mPrime[i][1:], m[i][1:])
		mDoublePrime[i][0] = wHat[i-1]
		mDoublePrime[i][i].SetOne()
	}
	return mPrime, mDoublePrime, nil
}

// applyMatrix is neptune's apply_matrix: the row vector v times m.
func applyMatrix(m [][]fr.Element, v []fr.Element) []fr.Element {
	out := make([]fr.Element, len(v))
	var t fr.Element
	for j := range out {
		for i := range m {
			t.Mul(&m[i][j], &v[i])
			out[j].Add(&out[j], &t)
		}
	}
	return out
}

func matMul(a, b [][]fr.Element) [][]fr.Element {
	n := len(a)
	out := make([][]fr.Element, n)
	var t fr.Element
	for i := range out {
		out[i] = make([]fr.Element, len(b[0]))
		for j := range out[i] {
			for k := range b {
				t.Mul(&a[i][k], &b[k][j])
				out[i][j].Add(&out[i][j], &t)
			}
		}
	}
	return out
}

// matInvert inverts a square matrix by Gauss–Jordan elimination (the
// inverse is unique, so it equals neptune's).
func matInvert(m [][]fr.Element) ([][]fr.Element, error) {
	n := len(m)
	a := make([][]fr.Element, n)
	inv := make([][]fr.Element, n)
	for i := range m {
		a[i] = append([]fr.Element(nil), m[i]...)
		inv[i] = make([]fr.Element, n)
		inv[i][i].SetOne()
	}
	var t fr.Element
	for c := 0; c < n; c++ {
		p := -1
		for r := c; r < n; r++ {
			if !a[r][c].IsZero() {
				p = r
				break
			}
		}
		if p < 0 {
			return nil, errSingular
		}
		a[c], a[p] = a[p], a[c]
		inv[c], inv[p] = inv[p], inv[c]
		var pi fr.Element
		pi.Inverse(&a[c][c])
		for k := 0; k < n; k++ {
			a[c][k].Mul(&a[c][k], &pi)
			inv[c][k].Mul(&inv[c][k], &pi)
		}
		for r := 0; r < n; r++ {
			if r == c || a[r][c].IsZero() {
				continue
			}
			f := a[r][c]
			for k := 0; k < n; k++ {
				t.Mul(&f, &a[c][k])
				a[r][k].Sub(&a[r][k], &t)
				t.Mul(&f, &inv[c][k])
				inv[r][k].Sub(&inv[r][k], &t)
			}
		}
	}
	return inv, nil
}

// elt is neptune's Elt: an allocated number, or a Num not yet allocated.
type elt struct {
	allocated bool
	n         AllocatedNum
	num       Num
}

func eltNum(n Num) elt { return elt{num: n} }

func (e *elt) value() fr.Element {
	if e.allocated {
		return e.n.Value
	}
	return e.num.Value
}

func (e *elt) asNum() Num {
	if e.allocated {
		return NumOf(e.n)
	}
	return e.num
}

// ensureAllocated allocates a Num ("allocate for Elt::Num") and enforces
// lc·1 = v ("enforce num allocation preserves lc").
func (e *elt) ensureAllocated(cs r1cs.System) AllocatedNum {
	if e.allocated {
		return e.n
	}
	cs.Push("allocate for Elt::Num")
	v := AllocNum(cs, e.num.Value)
	cs.Pop()
	_, b, c := cs.Scratch()
	cs.Enforce("enforce num allocation preserves lc", e.num.LC, b.Add(r1cs.One), c.Add(v.Var))
	return v
}

type poseidonCircuit struct {
	c            *PoseidonConstants
	elements     []elt
	offset       int
	currentRound int
}

// PoseidonHash hashes preimage (exactly Arity numbers) with neptune's
// legacy Poseidon circuit (neptune 11 circuit.rs poseidon_hash, which
// storage-proofs calls): the state [tag, preimage...] goes through the
// rounds with the compressed constants and sparse matrices, S-boxes
// allocating x², x⁴ and x⁵ (the tag's first S-box is computed as a
// constant), and element 1 is allocated as the result. It costs 311, 377,
// 505 constraints for arities 2, 4, 8.
func PoseidonHash(cs r1cs.System, preimage []AllocatedNum, c *PoseidonConstants) (AllocatedNum, error) {
	if len(preimage) != c.Arity {
		return AllocatedNum{}, fmt.Errorf("poseidon circuit of arity %d given %d elements: %w", c.Arity, len(preimage), ErrInput)
	}
	p := &poseidonCircuit{c: c, elements: make([]elt, c.Width)}
	p.elements[0] = eltNum(NumConst(c.DomainTag))
	for i, x := range preimage {
		p.elements[i+1] = elt{allocated: true, n: x}
	}
	cs.Push("first round")
	p.fullRound(cs, true, false)
	cs.Pop()
	for i := 1; i < c.FullRounds/2; i++ {
		cs.PushIndexed("initial full round", i)
		p.fullRound(cs, false, false)
		cs.Pop()
	}
	for i := 0; i < c.PartialRounds; i++ {
		cs.PushIndexed("partial round", i)
		p.partialRound(cs)
		cs.Pop()
	}
	for i := 0; i < c.FullRounds/2-1; i++ {
		cs.PushIndexed("final full round", i)
		p.fullRound(cs, false, false)
		cs.Pop()
	}
	cs.Push("terminal full round")
	p.fullRound(cs, false, true)
	cs.Pop()
	cs.Push("hash result")
	out := p.elements[1].ensureAllocated(cs)
	cs.Pop()
	return out, nil
}

func (p *poseidonCircuit) fullRound(cs r1cs.System, first, last bool) {
	w := p.c.Width
	off := p.offset
	var pre, post []fr.Element
	if first {
		pre = p.c.CompressedRoundConstants[off : off+w]
		off += w
	}
	if first || !last {
		post = p.c.CompressedRoundConstants[off : off+w]
		off += w
	}
	for i := range p.elements {
		switch {
		case first && i == 0:
			// The tag's S-box is a constant.
			x := p.elements[0].value()
			x.Add(&x, &pre[0])
			var x4 fr.Element
			x4.Square(&x)
			x4.Square(&x4)
			x.Mul(&x, &x4)
			x.Add(&x, &post[0])
			p.elements[0] = eltNum(NumConst(x))
		case first:
			cs.PushIndexed("quintic s-box", i)
			p.elements[i] = elt{allocated: true, n: quinticSBoxPreAdd(cs, &p.elements[i], pre[i], post[i])}
			cs.Pop()
		default:
			var rk *fr.Element
			if post != nil {
				rk = &post[i]
			}
			cs.PushIndexed("quintic s-box", i)
			p.elements[i] = elt{allocated: true, n: quinticSBox(cs, &p.elements[i], rk)}
			cs.Pop()
		}
	}
	p.offset = off
	p.productMDS()
}

func (p *poseidonCircuit) partialRound(cs r1cs.System) {
	rk := p.c.CompressedRoundConstants[p.offset]
	p.offset++
	cs.Push("solitary quintic s-box")
	p.elements[0] = elt{allocated: true, n: quinticSBox(cs, &p.elements[0], &rk)}
	cs.Pop()
	p.productMDS()
}

func (p *poseidonCircuit) productMDS() {
	half := p.c.HalfFullRounds
	sparseOffset := half - 1
	switch {
	case p.currentRound == sparseOffset:
		p.productDense(p.c.PreSparse)
	case p.currentRound > sparseOffset && p.currentRound < half+p.c.PartialRounds:
		p.productSparse(&p.c.Sparse[p.currentRound-sparseOffset-1])
	default:
		p.productDense(p.c.MDS)
	}
	p.currentRound++
}

// scalarProduct is neptune's scalar_product: Σ scalars[i]·elts[i] as a Num.
func scalarProduct(elts []elt, scalars func(i int) *fr.Element) Num {
	var acc Num
	for i := range elts {
		acc = acc.AddScaled(*scalars(i), elts[i].asNum())
	}
	return acc
}

func (p *poseidonCircuit) productDense(m [][]fr.Element) {
	res := make([]elt, p.c.Width)
	for j := range res {
		res[j] = eltNum(scalarProduct(p.elements, func(i int) *fr.Element { return &m[i][j] }))
	}
	p.elements = res
}

func (p *poseidonCircuit) productSparse(s *SparseMatrix) {
	res := make([]elt, p.c.Width)
	res[0] = eltNum(scalarProduct(p.elements, func(i int) *fr.Element { return &s.WHat[i] }))
	e0 := p.elements[0].asNum()
	for j := 1; j < p.c.Width; j++ {
		res[j] = eltNum(p.elements[j].asNum().AddScaled(s.VRest[j-1], e0))
	}
	p.elements = res
}

// quinticSBox allocates l (if a Num), l², l⁴ and l⁵ + rk (neptune's
// quintic_s_box and mul_sum without pre-add).
func quinticSBox(cs r1cs.System, e *elt, rk *fr.Element) AllocatedNum {
	cs.Push("S-box input")
	l := e.ensureAllocated(cs)
	cs.Pop()
	cs.Push("l^2")
	l2 := l.Square(cs)
	cs.Pop()
	cs.Push("l^4")
	l4 := l2.Square(cs)
	cs.Pop()
	cs.Push("(l4 * l) + rk)")
	defer cs.Pop()
	return mulSum(cs, l4, l, nil, rk)
}

// quinticSBoxPreAdd allocates (l + pre)², its square and
// l4·(l + pre) + post (neptune's quintic_s_box_pre_add).
func quinticSBoxPreAdd(cs r1cs.System, e *elt, pre, post fr.Element) AllocatedNum {
	cs.Push("S-box input")
	l := e.ensureAllocated(cs)
	cs.Pop()
	cs.Push("(l+rk)^2")
	l2 := squareSum(cs, pre, l)
	cs.Pop()
	cs.Push("l^4")
	l4 := l2.Square(cs)
	cs.Pop()
	cs.Push("l4 * (l + rk)")
	defer cs.Pop()
	return mulSum(cs, l4, l, &pre, &post)
}

// squareSum allocates (num + toAdd)² ("squared sum") and enforces
// (num + toAdd)·(num + toAdd) = res.
func squareSum(cs r1cs.System, toAdd fr.Element, num AllocatedNum) AllocatedNum {
	var v fr.Element
	v.Add(&num.Value, &toAdd)
	v.Square(&v)
	cs.Push("squared sum")
	res := AllocNum(cs, v)
	cs.Pop()
	a, b, c := cs.Scratch()
	cs.Enforce("squared sum constraint", a.Add(num.Var).AddConst(toAdd), b.Add(num.Var).AddConst(toAdd), c.Add(res.Var))
	return res
}

// mulSum allocates a·(b + preAdd) + postAdd ("mul_sum") and enforces
// (b + preAdd)·a = res − postAdd (neptune's mul_sum; nil adds are absent).
func mulSum(cs r1cs.System, a, b AllocatedNum, preAdd, postAdd *fr.Element) AllocatedNum {
	v := b.Value
	if preAdd != nil {
		v.Add(&v, preAdd)
	}
	v.Mul(&v, &a.Value)
	if postAdd != nil {
		v.Add(&v, postAdd)
	}
	cs.Push("mul_sum")
	res := AllocNum(cs, v)
	cs.Pop()
	la, lb, lc := cs.Scratch()
	la = la.Add(b.Var)
	if preAdd != nil {
		la = la.AddConst(*preAdd)
	}
	lb = lb.Add(a.Var)
	lc = lc.Add(res.Var)
	if postAdd != nil {
		lc = lc.SubCoeff(*postAdd, r1cs.One)
	}
	cs.Enforce("mul sum constraint", la, lb, lc)
	return res
}
