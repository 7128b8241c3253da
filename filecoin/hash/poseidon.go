package hash

import (
	"errors"
	"fmt"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
)

// optimized holds constants of an equivalent, cheaper evaluation of the
// permutation (see precompute). Its output is identical to the
// straightforward permutation neptune calls hash_correct; tests check this.
type optimized struct {
	// fullRC[r] is added before the S-boxes of full round r. For the first
	// full round after the partial rounds it includes the constants carried
	// forward out of the partial rounds.
	fullRC [][]fr.Element
	// partialK[k] is the single constant added to element 0 before the
	// S-box of partial round k.
	partialK []fr.Element
	// sparse[k] replaces the MDS matrix after partial round k, for all but
	// the last partial round.
	sparse []sparseMatrix
	// lastDense follows the S-box of the last partial round.
	lastDense [][]fr.Element
}

// sparseMatrix is [[a00, v], [w, I]]: a dense first row and column and an
// identity elsewhere.
type sparseMatrix struct {
	a00  fr.Element
	v, w []fr.Element
}

// precompute derives the optimized constants. Two exact rewrites of the
// partial rounds, each x -> M * S0(x + c) where S0 raises element 0 to the
// fifth power:
//
//  1. Constant forwarding: S0(x + c) = S0(x + c0*e0) + (0, c1..), so the
//     part of c outside element 0 passes through the S-box unchanged and can
//     be pushed through M into the next round's constants, and after the
//     last partial round into the first full round.
//  2. Matrix factoring: write the matrix A applied after a partial S-box as
//     A = P * S with P = [[1, 0], [0, Â]] and S = [[a00, v], [Â^-1 w, I]]
//     (A = [[a00, v], [w, Â]]). P leaves element 0 alone, so it commutes
//     with the next round's constant addition and S-box, and merges into
//     the next round's matrix: M * P. Each partial round but the last then
//     costs one sparse product S; the last applies the accumulated dense one.
func (c *Constants) precompute() error {
	t, h := c.width, c.full/2
	rc := func(r int) []fr.Element { return c.roundConstants[r*t : (r+1)*t] }
	o := optimized{
		fullRC:   make([][]fr.Element, c.full),
		partialK: make([]fr.Element, c.partial),
		sparse:   make([]sparseMatrix, c.partial-1),
	}
	for r := 0; r < c.full; r++ {
		src := rc(r)
		if r >= h {
			src = rc(r + c.partial)
		}
		o.fullRC[r] = append([]fr.Element(nil), src...)
	}
	acc := make([]fr.Element, t)
	d := make([]fr.Element, t)
	for k := 0; k < c.partial; k++ {
		cur := rc(h + k)
		for i := range d {
			d[i].Add(&cur[i], &acc[i])
		}
		o.partialK[k] = d[0]
		d[0].SetZero()
		acc = matVec(c.mds, d)
	}
	for i := range acc {
		o.fullRC[h][i].Add(&o.fullRC[h][i], &acc[i])
	}

	a := cloneMatrix(c.mds)
	for k := 0; k < c.partial-1; k++ {
		hat := make([][]fr.Element, t-1)
		w := make([]fr.Element, t-1)
		for i := 1; i < t; i++ {
			hat[i-1] = append([]fr.Element(nil), a[i][1:]...)
			w[i-1] = a[i][0]
		}
		hatInv, err := invertMatrix(hat)
		if err != nil {
			return fmt.Errorf("factor partial round %d matrix: %w", k, err)
		}
		o.sparse[k] = sparseMatrix{
			a00: a[0][0],
			v:   append([]fr.Element(nil), a[0][1:]...),
			w:   matVec(hatInv, w),
		}
		prime := make([][]fr.Element, t)
		for i := range prime {
			prime[i] = make([]fr.Element, t)
		}
		prime[0][0].SetOne()
		for i := 1; i < t; i++ {
			copy(prime[i][1:], hat[i-1])
		}
		a = matMul(c.mds, prime)
	}
	o.lastDense = a
	c.opt = o
	return nil
}

func cloneMatrix(m [][]fr.Element) [][]fr.Element {
	out := make([][]fr.Element, len(m))
	for i := range m {
		out[i] = append([]fr.Element(nil), m[i]...)
	}
	return out
}

// matVec returns m * v for a square matrix m (v as a column vector).
func matVec(m [][]fr.Element, v []fr.Element) []fr.Element {
	out := make([]fr.Element, len(m))
	var tmp fr.Element
	for i := range m {
		for j := range v {
			tmp.Mul(&m[i][j], &v[j])
			out[i].Add(&out[i], &tmp)
		}
	}
	return out
}

// matMul returns a * b for square matrices of one size.
func matMul(a, b [][]fr.Element) [][]fr.Element {
	n := len(a)
	out := make([][]fr.Element, n)
	var tmp fr.Element
	for i := range out {
		out[i] = make([]fr.Element, n)
		for j := 0; j < n; j++ {
			for k := 0; k < n; k++ {
				tmp.Mul(&a[i][k], &b[k][j])
				out[i][j].Add(&out[i][j], &tmp)
			}
		}
	}
	return out
}

var errSingular = errors.New("matrix is singular")

// invertMatrix inverts a square matrix by Gauss-Jordan elimination.
func invertMatrix(m [][]fr.Element) ([][]fr.Element, error) {
	n := len(m)
	a := cloneMatrix(m)
	inv := make([][]fr.Element, n)
	for i := range inv {
		inv[i] = make([]fr.Element, n)
		inv[i][i].SetOne()
	}
	var f, tmp fr.Element
	for col := 0; col < n; col++ {
		p := -1
		for r := col; r < n; r++ {
			if !a[r][col].IsZero() {
				p = r
				break
			}
		}
		if p < 0 {
			return nil, errSingular
		}
		a[col], a[p] = a[p], a[col]
		inv[col], inv[p] = inv[p], inv[col]
		f.Inverse(&a[col][col])
		for j := 0; j < n; j++ {
			a[col][j].Mul(&a[col][j], &f)
			inv[col][j].Mul(&inv[col][j], &f)
		}
		for r := 0; r < n; r++ {
			if r == col || a[r][col].IsZero() {
				continue
			}
			f = a[r][col]
			for j := 0; j < n; j++ {
				tmp.Mul(&f, &a[col][j])
				a[r][j].Sub(&a[r][j], &tmp)
				tmp.Mul(&f, &inv[col][j])
				inv[r][j].Sub(&inv[r][j], &tmp)
			}
		}
	}
	return inv, nil
}

// sbox raises x to the fifth power in place.
func sbox(x *fr.Element) {
	var t fr.Element
	t.Square(x)
	t.Square(&t)
	x.Mul(x, &t)
}

// Permute applies the Poseidon permutation to state in place. state must
// have Width() elements; state[0] is the domain-tag (capacity) element and
// a hash's output is state[1] afterwards.
func (c *Constants) Permute(state []fr.Element) error {
	if len(state) != c.width {
		return fmt.Errorf("poseidon permutation of width %d given %d elements: %w", c.width, len(state), ErrArity)
	}
	c.permute(state)
	return nil
}

// permute is the optimized permutation; len(state) must be c.width.
func (c *Constants) permute(x []fr.Element) {
	h := c.full / 2
	o := &c.opt
	for r := 0; r < h; r++ {
		c.fullRound(x, o.fullRC[r])
	}
	var tmp fr.Element
	for k := 0; k < c.partial; k++ {
		x[0].Add(&x[0], &o.partialK[k])
		sbox(&x[0])
		if k == c.partial-1 {
			denseMul(o.lastDense, x)
			break
		}
		s := &o.sparse[k]
		x0 := x[0]
		x[0].Mul(&s.a00, &x0)
		for j := 1; j < len(x); j++ {
			tmp.Mul(&s.v[j-1], &x[j])
			x[0].Add(&x[0], &tmp)
			tmp.Mul(&s.w[j-1], &x0)
			x[j].Add(&x[j], &tmp)
		}
	}
	for r := h; r < c.full; r++ {
		c.fullRound(x, o.fullRC[r])
	}
}

func (c *Constants) fullRound(x, rc []fr.Element) {
	for i := range x {
		x[i].Add(&x[i], &rc[i])
		sbox(&x[i])
	}
	denseMul(c.mds, x)
}

// denseMul sets x = m * x.
func denseMul(m [][]fr.Element, x []fr.Element) {
	var buf [MaxArity + 1]fr.Element
	y := buf[:len(x)]
	var tmp fr.Element
	for i := range m {
		row := m[i]
		y[i].Mul(&row[0], &x[0])
		for j := 1; j < len(x); j++ {
			tmp.Mul(&row[j], &x[j])
			y[i].Add(&y[i], &tmp)
		}
	}
	copy(x, y)
}

// permuteReference is neptune's hash_correct, step for step: R_F/2 full
// rounds, R_P partial rounds, R_F/2 full rounds; each round adds its round
// constants, applies x^5 (to every element in full rounds, to element 0 in
// partial rounds) and multiplies the state, as a row vector, by the MDS
// matrix.
func (c *Constants) permuteReference(x []fr.Element) {
	t := c.width
	offset := 0
	product := func() {
		y := make([]fr.Element, t)
		var tmp fr.Element
		for j := 0; j < t; j++ {
			for i := 0; i < t; i++ {
				tmp.Mul(&c.mds[i][j], &x[i])
				y[j].Add(&y[j], &tmp)
			}
		}
		copy(x, y)
	}
	full := func() {
		for i := range x {
			x[i].Add(&x[i], &c.roundConstants[offset+i])
			sbox(&x[i])
		}
		offset += t
		product()
	}
	partial := func() {
		for i := range x {
			x[i].Add(&x[i], &c.roundConstants[offset+i])
		}
		offset += t
		sbox(&x[0])
		product()
	}
	for range c.full / 2 {
		full()
	}
	for range c.partial {
		partial()
	}
	for range c.full / 2 {
		full()
	}
}

// Hash returns the Poseidon digest of exactly Arity() elements under the
// HashType::MerkleTree domain tag, as neptune's
// Poseidon::new_with_preimage(preimage, &PoseidonConstants::new()).hash()
// computes it: the state is [2^arity - 1, preimage...] and the digest is
// element 1 after the permutation.
func (c *Constants) Hash(preimage []fr.Element) (fr.Element, error) {
	if len(preimage) != c.arity {
		return fr.Element{}, fmt.Errorf("poseidon hash of arity %d given %d elements: %w", c.arity, len(preimage), ErrArity)
	}
	return c.hashWithTag(c.merkleTag, preimage), nil
}

// HashWithTag returns element 1 of the permuted state [tag, preimage...,
// 0...]: the digest under any neptune domain tag. Shorter preimages are
// padded with zeros, as neptune does for HashType::ConstantLength (whose
// tag is [ConstantLengthTag] of the preimage length).
func (c *Constants) HashWithTag(tag fr.Element, preimage []fr.Element) (fr.Element, error) {
	if len(preimage) > c.arity {
		return fr.Element{}, fmt.Errorf("poseidon hash of arity %d given %d elements: %w", c.arity, len(preimage), ErrArity)
	}
	return c.hashWithTag(tag, preimage), nil
}

func (c *Constants) hashWithTag(tag fr.Element, preimage []fr.Element) fr.Element {
	var buf [MaxArity + 1]fr.Element
	state := buf[:c.width]
	state[0] = tag
	copy(state[1:], preimage)
	c.permute(state)
	return state[1]
}

// Poseidon returns the Standard-strength, MerkleTree-tagged Poseidon digest
// of preimage, whose length (1 to [MaxArity]) is the arity. This is
// filecoin-hashers' shared_hash_frs for Merkle nodes (arities 2, 4, 8, 16)
// and storage-proofs-porep's hash_single_column for a column of
// len(preimage) layer labels (upstream instantiates arities 2 and 11).
func Poseidon(preimage []fr.Element) (fr.Element, error) {
	c, err := ConstantsFor(len(preimage), Standard)
	if err != nil {
		return fr.Element{}, err
	}
	return c.hashWithTag(c.merkleTag, preimage), nil
}

// ColumnHash returns the tree-C leaf of a column of layer labels:
// storage-proofs-porep's hash_single_column, a Poseidon of arity
// len(column) under the MerkleTree tag.
func ColumnHash(column []fr.Element) (fr.Element, error) {
	h, err := Poseidon(column)
	if err != nil {
		return fr.Element{}, fmt.Errorf("column hash of %d labels: %w", len(column), err)
	}
	return h, nil
}

// PoseidonDomains hashes domains (the children of a Merkle node, or any
// preimage) with [Poseidon], decoding each as a canonical field element
// first; non-canonical input yields an error wrapping [ErrNonCanonical]
// (filecoin-hashers panics on it). This is PoseidonFunction's multi_node.
func PoseidonDomains(preimage []Domain) (Domain, error) {
	var buf [MaxArity]fr.Element
	if len(preimage) > MaxArity {
		return Domain{}, fmt.Errorf("poseidon hash of %d domains: %w", len(preimage), ErrArity)
	}
	frs := buf[:len(preimage)]
	for i := range preimage {
		e, err := preimage[i].Element()
		if err != nil {
			return Domain{}, fmt.Errorf("poseidon hash input %d: %w", i, err)
		}
		frs[i] = e
	}
	h, err := Poseidon(frs)
	if err != nil {
		return Domain{}, err
	}
	return DomainOf(h), nil
}

// Hash2 is PoseidonFunction::hash2, the arity-2 MerkleTree-tagged hash of
// two domains. Filecoin's comm_r is Hash2(comm_c, comm_r_last).
func Hash2(a, b Domain) (Domain, error) {
	return PoseidonDomains([]Domain{a, b})
}
