package groth

import (
	"math/big"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr/fft"
)

// blstrs' scalar constants, little-endian u64 limbs in Montgomery form
// with R = 2^256 mod r (filecoin-project/blstrs v0.7.0, commit
// 540a954cfe1153d33d692fb816faa5ebd2911667, src/scalar.rs: GENERATOR,
// ROOT_OF_UNITY, S). bellperson 0.27.0 (Cargo.toml: blstrs 0.7.0) builds its
// EvaluationDomain from them (src/domain.rs from_coeffs, coset_fft,
// divide_by_z_on_coset). gnark-crypto's fr.Element is the same Montgomery
// form with the same R, so the limbs are an fr.Element as they stand.
var (
	blstrsGenerator   = fr.Element{0x0000_000e_ffff_fff1, 0x17e3_63d3_0018_9c0f, 0xff9c_5787_6f84_57b0, 0x3513_3220_8fc5_a8c4}
	blstrsRootOfUnity = fr.Element{0xb9b5_8d8c_5f0e_466a, 0x5b1b_4c80_1819_d7ec, 0x0af5_3ae3_52a3_1e64, 0x5bf3_adda_19e9_b27b}
)

const blstrsS = 32

// bellpersonOmega is EvaluationDomain::from_coeffs's omega for a domain of
// 2^exp elements: ROOT_OF_UNITY squared S - exp times.
func bellpersonOmega(exp int) fr.Element {
	w := blstrsRootOfUnity
	for range blstrsS - exp {
		w.Square(&w)
	}
	return w
}

// gnark-crypto's FFT domains and bellperson's EvaluationDomain agree: the
// same multiplicative generator 7 as the coset shift, the same 2^32-th
// root of unity, hence the same generator for every domain size (the
// domain of an H query is a power of two up to 2^27 for 32GiB).
func TestDomainMatchesBellperson(t *testing.T) {
	var seven fr.Element
	seven.SetUint64(7)
	if !blstrsGenerator.Equal(&seven) {
		t.Fatalf("blstrs GENERATOR limbs are %v, not 7", blstrsGenerator.String())
	}
	if g := fft.GeneratorFullMultiplicativeGroup(); !g.Equal(&blstrsGenerator) {
		t.Fatalf("gnark's coset shift %v, blstrs' MULTIPLICATIVE_GENERATOR %v", g.String(), blstrsGenerator.String())
	}
	// ROOT_OF_UNITY has order exactly 2^32.
	var x fr.Element
	x.Exp(blstrsRootOfUnity, new(big.Int).Lsh(big.NewInt(1), blstrsS))
	if !x.IsOne() {
		t.Fatal("blstrs ROOT_OF_UNITY^(2^32) != 1")
	}
	x.Exp(blstrsRootOfUnity, new(big.Int).Lsh(big.NewInt(1), blstrsS-1))
	if x.IsOne() {
		t.Fatal("blstrs ROOT_OF_UNITY^(2^31) == 1")
	}
	g32, err := fr.Generator(1 << blstrsS)
	if err != nil {
		t.Fatal(err)
	}
	if !g32.Equal(&blstrsRootOfUnity) {
		t.Fatalf("gnark's 2^32-th root %v, blstrs' %v", g32.String(), blstrsRootOfUnity.String())
	}
	for exp := 0; exp <= 27; exp++ {
		d := fft.NewDomain(uint64(1)<<exp, fft.WithoutPrecompute())
		want := bellpersonOmega(exp)
		if d.Cardinality != 1<<exp || !d.Generator.Equal(&want) || !d.FrMultiplicativeGen.Equal(&blstrsGenerator) {
			t.Fatalf("domain 2^%d: gnark cardinality %d generator %v shift %v; bellperson omega %v",
				exp, d.Cardinality, d.Generator.String(), d.FrMultiplicativeGen.String(), want.String())
		}
	}
	// Sizes that are not powers of two round up alike (from_coeffs).
	for _, n := range []int{3, 5, 1000, 2_709_033} {
		d := (&Density{NumConstraints: n}).DomainSize()
		if g := fft.NewDomain(uint64(n), fft.WithoutPrecompute()); int(g.Cardinality) != d {
			t.Fatalf("%d constraints: gnark's domain %d, bellperson's %d", n, g.Cardinality, d)
		}
	}
}
