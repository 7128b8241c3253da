package groth

import (
	"fmt"
	"math/bits"

	bls "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr/fft"
	groth16bls "github.com/consensys/gnark/backend/groth16/bls12-381"
	"github.com/consensys/gnark/constraint"
	csbls "github.com/consensys/gnark/constraint/bls12-381"

	"github.com/c2flow/c2flow/filecoin/r1cs"
)

// Density is what a circuit contributes to its parameters' layout: the
// constraint count (the domain) and which variables have a zero A or B
// polynomial, whose points bellperson's generator leaves out of a, b_g1
// and b_g2 and gnark marks in InfinityA and InfinityB. Variables are
// numbered as gnark's wires and bellperson's queries: inputs (ONE first),
// then aux.
type Density struct {
	// NumConstraints counts every constraint, bellperson's per-input
	// constraints included.
	NumConstraints int
	// NumInputs counts inputs, ONE included; NumAux the aux variables.
	NumInputs, NumAux int
	// InfinityA[i] (InfinityB[i]) is true when variable i appears in no
	// constraint's A (B).
	InfinityA, InfinityB []bool
}

// NumVars returns NumInputs + NumAux.
func (d *Density) NumVars() int { return d.NumInputs + d.NumAux }

// Counts returns the number of variables with a nonzero A polynomial and
// with a nonzero B polynomial: the lengths of a and of b_g1 and b_g2.
func (d *Density) Counts() (a, b int) {
	for i := range d.InfinityA {
		if !d.InfinityA[i] {
			a++
		}
		if !d.InfinityB[i] {
			b++
		}
	}
	return a, b
}

// DomainSize returns the size of the evaluation domain, the constraint
// count rounded up to a power of two (bellperson's EvaluationDomain and
// gnark's fft.NewDomain alike).
func (d *Density) DomainSize() int {
	if d.NumConstraints <= 1 {
		return 1
	}
	return 1 << bits.Len(uint(d.NumConstraints-1))
}

// DensityOf returns the density of a recorded shape, which must hold
// bellperson's per-input constraints (Shape.AppendInputConstraints), as
// the parameters were generated over them.
func DensityOf(s *r1cs.Shape) (*Density, error) {
	if err := s.Err(); err != nil {
		return nil, fmt.Errorf("density of shape: %w", err)
	}
	if !s.InputConstraints {
		return nil, fmt.Errorf("density of shape: bellperson's per-input constraints are not appended: %w", ErrMismatch)
	}
	d := &Density{NumConstraints: s.NumConstraints(), NumInputs: s.NumInputs, NumAux: s.NumAux}
	mark := func(m *r1cs.Matrix) []bool {
		inf := make([]bool, d.NumVars())
		for i := range inf {
			inf[i] = true
		}
		for _, v := range m.Vars {
			inf[s.Column(v)] = false
		}
		return inf
	}
	d.InfinityA, d.InfinityB = mark(&s.A), mark(&s.B)
	return d, nil
}

// DensityOfGnark returns the density of a gnark R1CS (whose per-input
// constraints, if it is to fit Filecoin's parameters, must be among its
// constraints). Circuits with internal (solver-computed) wires and
// commitments have no bellperson form.
func DensityOfGnark(ccs *csbls.R1CS) (*Density, error) {
	if ccs.NbInternalVariables != 0 {
		return nil, fmt.Errorf("density of gnark R1CS: %d internal wires: %w", ccs.NbInternalVariables, ErrMismatch)
	}
	if c, ok := ccs.CommitmentInfo.(constraint.Groth16Commitments); ok && len(c) != 0 {
		return nil, fmt.Errorf("density of gnark R1CS: commitments have no bellperson form: %w", ErrMismatch)
	}
	d := &Density{NumConstraints: ccs.GetNbConstraints(), NumInputs: ccs.GetNbPublicVariables(), NumAux: ccs.GetNbSecretVariables()}
	d.InfinityA = make([]bool, d.NumVars())
	d.InfinityB = make([]bool, d.NumVars())
	for i := range d.InfinityA {
		d.InfinityA[i], d.InfinityB[i] = true, true
	}
	it := ccs.GetR1CIterator()
	for c := it.Next(); c != nil; c = it.Next() {
		for _, t := range c.L {
			if t.CoeffID() != constraint.CoeffIdZero {
				d.InfinityA[t.WireID()] = false
			}
		}
		for _, t := range c.R {
			if t.CoeffID() != constraint.CoeffIdZero {
				d.InfinityB[t.WireID()] = false
			}
		}
	}
	return d, nil
}

// bitReverse returns i with its log2(n) low bits reversed (n a power of
// two).
func bitReverse(i, n int) int {
	if n <= 1 {
		return 0
	}
	return int(bits.Reverse64(uint64(i)) >> (64 - uint(bits.TrailingZeros(uint(n)))))
}

// permuteH reorders h (n-1 points, n the domain size) between
// bellperson's natural order and gnark's bit-reversed G1.Z in place: Z[j]
// = h[bitrev(j)]. Bit reversal is an involution fixing n-1, so the same
// swaps convert either way.
func permuteH(h []bls.G1Affine) {
	n := len(h) + 1
	for i := range h {
		if j := bitReverse(i, n); j > i {
			h[i], h[j] = h[j], h[i]
		}
	}
}

// Check reports whether p fits d: the IC and l counts, the counts of a,
// b_g1 and b_g2 against the density, every input present in a (the
// per-input constraints), and h against the domain.
func (p *Params) Check(d *Density) error {
	if len(d.InfinityA) != d.NumVars() || len(d.InfinityB) != d.NumVars() {
		return fmt.Errorf("params vs circuit: density masks of %d and %d for %d variables: %w", len(d.InfinityA), len(d.InfinityB), d.NumVars(), ErrMismatch)
	}
	if len(p.VK.IC) != d.NumInputs {
		return fmt.Errorf("params vs circuit: %d IC points, circuit has %d inputs: %w", len(p.VK.IC), d.NumInputs, ErrMismatch)
	}
	if len(p.L) != d.NumAux {
		return fmt.Errorf("params vs circuit: %d l points, circuit has %d aux variables: %w", len(p.L), d.NumAux, ErrMismatch)
	}
	for i := range d.NumInputs {
		if d.InfinityA[i] {
			return fmt.Errorf("params vs circuit: input %d has no A entry (per-input constraints missing): %w", i, ErrMismatch)
		}
	}
	na, nb := d.Counts()
	if len(p.A) != na {
		return fmt.Errorf("params vs circuit: %d a points, circuit has %d variables in A: %w", len(p.A), na, ErrMismatch)
	}
	if len(p.BG1) != nb || len(p.BG2) != nb {
		return fmt.Errorf("params vs circuit: %d b_g1 and %d b_g2 points, circuit has %d variables in B: %w", len(p.BG1), len(p.BG2), nb, ErrMismatch)
	}
	if n := d.DomainSize(); len(p.H) != n-1 {
		return fmt.Errorf("params vs circuit: %d h points, circuit's domain of %d needs %d: %w", len(p.H), n, n-1, ErrMismatch)
	}
	return nil
}

// ToGnark converts p, checked against the circuit's density, into the
// gnark proving and verifying keys gnark's prover and c2flow's split
// prover consume. The points move without copying: p.H is reordered in
// place into gnark's G1.Z and p is emptied (its slices now belong to the
// keys).
func (p *Params) ToGnark(d *Density) (*groth16bls.ProvingKey, *groth16bls.VerifyingKey, error) {
	if err := p.Check(d); err != nil {
		return nil, nil, err
	}
	vk, err := p.VK.Gnark()
	if err != nil {
		return nil, nil, err
	}
	pk := new(groth16bls.ProvingKey)
	pk.Domain = *fft.NewDomain(uint64(d.NumConstraints), fft.WithoutPrecompute())
	if int(pk.Domain.Cardinality) != d.DomainSize() {
		return nil, nil, fmt.Errorf("params to gnark: gnark's domain has %d elements, bellperson's %d: %w", pk.Domain.Cardinality, d.DomainSize(), ErrMismatch)
	}
	pk.G1.Alpha, pk.G1.Beta, pk.G1.Delta = p.VK.AlphaG1, p.VK.BetaG1, p.VK.DeltaG1
	pk.G2.Beta, pk.G2.Delta = p.VK.BetaG2, p.VK.DeltaG2
	pk.G1.A, pk.G1.B, pk.G2.B = p.A, p.BG1, p.BG2
	pk.G1.K = p.L
	permuteH(p.H)
	pk.G1.Z = p.H
	pk.InfinityA = append([]bool(nil), d.InfinityA...)
	pk.InfinityB = append([]bool(nil), d.InfinityB...)
	na, nb := d.Counts()
	pk.NbInfinityA = uint64(d.NumVars() - na)
	pk.NbInfinityB = uint64(d.NumVars() - nb)
	*p = Params{}
	return pk, vk, nil
}

// FromGnark returns the bellperson parameters of gnark keys made for a
// circuit without commitments or internal wires (a development setup over
// a recorded shape): h is G1.Z in natural order (a new slice); a, b_g1,
// b_g2, l and the IC share the keys' slices. bellperson refuses points at
// infinity in every query, and an l point at infinity (an aux variable in
// no constraint) in particular: both are errors.
func FromGnark(pk *groth16bls.ProvingKey, vk *groth16bls.VerifyingKey) (*Params, error) {
	if len(pk.CommitmentKeys) != 0 {
		return nil, fmt.Errorf("params from gnark: commitments have no bellperson form: %w", ErrMismatch)
	}
	bvk, err := VerifyingKeyFromGnark(vk)
	if err != nil {
		return nil, err
	}
	// gnark's verifying key carries beta and delta in G1 only "for
	// compatibility"; the proving key's are the ones its prover uses.
	bvk.BetaG1, bvk.DeltaG1 = pk.G1.Beta, pk.G1.Delta
	if !vk.G2.Delta.Equal(&pk.G2.Delta) || !vk.G2.Beta.Equal(&pk.G2.Beta) || !vk.G1.Alpha.Equal(&pk.G1.Alpha) {
		return nil, fmt.Errorf("params from gnark: proving and verifying keys of different setups: %w", ErrMismatch)
	}
	n := int(pk.Domain.Cardinality)
	if n < 1 || bits.OnesCount(uint(n)) != 1 || len(pk.G1.Z) != n-1 {
		return nil, fmt.Errorf("params from gnark: %d Z points for a domain of %d: %w", len(pk.G1.Z), n, ErrMismatch)
	}
	if len(pk.G1.B) != len(pk.G2.B) {
		return nil, fmt.Errorf("params from gnark: %d B points in G1, %d in G2: %w", len(pk.G1.B), len(pk.G2.B), ErrMismatch)
	}
	h := append([]bls.G1Affine(nil), pk.G1.Z...)
	permuteH(h)
	p := &Params{VK: *bvk, H: h, L: pk.G1.K, A: pk.G1.A, BG1: pk.G1.B, BG2: pk.G2.B}
	for _, q := range []struct {
		name string
		pts  []bls.G1Affine
	}{{"IC", p.VK.IC}, {"h", p.H}, {"l", p.L}, {"a", p.A}, {"b_g1", p.BG1}} {
		for i := range q.pts {
			if q.pts[i].IsInfinity() {
				return nil, fmt.Errorf("params from gnark: %s point %d at infinity (an unconstrained variable?): %w", q.name, i, ErrPoint)
			}
		}
	}
	for i := range p.BG2 {
		if p.BG2[i].IsInfinity() {
			return nil, fmt.Errorf("params from gnark: b_g2 point %d at infinity: %w", i, ErrPoint)
		}
	}
	return p, nil
}

// LoadProvingKey reads a .params file (mapped, points checked per opts)
// and converts it for the circuit of density d: the gnark keys gnark's
// prover and c2flow's split prover consume, in one pass and one copy of
// the points.
func LoadProvingKey(path string, d *Density, opts ReadOptions) (*groth16bls.ProvingKey, *groth16bls.VerifyingKey, error) {
	p, err := ReadParamsFile(path, opts)
	if err != nil {
		return nil, nil, err
	}
	pk, vk, err := p.ToGnark(d)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	return pk, vk, nil
}
