package groth

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	bls "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	groth16bls "github.com/consensys/gnark/backend/groth16/bls12-381"

	"github.com/c2flow/c2flow/filecoin/r1cs"
	"github.com/c2flow/c2flow/internal/mapped"
)

// saveParams writes p as name.params and its key as name.vk in dir.
func saveParams(t testing.TB, dir, name string, p *Params) (paramsPath, vkPath string) {
	t.Helper()
	paramsPath, vkPath = filepath.Join(dir, name+".params"), filepath.Join(dir, name+".vk")
	var pb, vb bytes.Buffer
	if n, err := p.WriteTo(&pb); err != nil || n != p.Size() || int64(pb.Len()) != n {
		t.Fatalf("writing params: %d bytes (size %d, buffer %d): %v", n, p.Size(), pb.Len(), err)
	}
	if n, err := p.VK.WriteTo(&vb); err != nil || n != p.VK.Size() {
		t.Fatalf("writing vk: %d bytes: %v", n, err)
	}
	// A .params file starts with its .vk (bellperson's Parameters::write).
	if !bytes.HasPrefix(pb.Bytes(), vb.Bytes()) {
		t.Fatal(".params does not start with the .vk bytes")
	}
	if err := os.WriteFile(paramsPath, pb.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(vkPath, vb.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return paramsPath, vkPath
}

func equalG1s(a, b []bls.G1Affine) bool {
	return slices.EqualFunc(a, b, func(x, y bls.G1Affine) bool { return x.Equal(&y) })
}

func equalG2s(a, b []bls.G2Affine) bool {
	return slices.EqualFunc(a, b, func(x, y bls.G2Affine) bool { return x.Equal(&y) })
}

func paramsEqual(a, b *Params) bool {
	return a.VK.Equal(&b.VK) && equalG1s(a.H, b.H) && equalG1s(a.L, b.L) && equalG1s(a.A, b.A) &&
		equalG1s(a.BG1, b.BG1) && equalG2s(a.BG2, b.BG2)
}

// readBack reads a .params file both ways (mapped, and through an
// io.ReaderAt) with subgroup checks, and its .vk.
func readBack(t testing.TB, paramsPath, vkPath string) (*Params, *VerifyingKey) {
	t.Helper()
	mapped, err := ReadParamsFile(paramsPath, ReadOptions{Check: CheckSubgroup, Workers: 3})
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(paramsPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, _ := f.Stat()
	viaReaderAt, err := ReadParams(f, st.Size(), ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !paramsEqual(mapped, viaReaderAt) {
		t.Fatal("mapped and io.ReaderAt reads differ")
	}
	vk, err := ReadVerifyingKeyFile(vkPath)
	if err != nil {
		t.Fatal(err)
	}
	if !vk.Equal(&mapped.VK) {
		t.Fatal(".vk and the .params' key differ")
	}
	return mapped, vk
}

// checkProof encodes p in Filecoin's format, decodes it, and verifies it
// with the bellperson key and with gnark's verifier; a flipped bit and
// another public input are rejected.
func checkProof(t *testing.T, who string, p Proof, vk *VerifyingKey, gvk *groth16bls.VerifyingKey, public []fr.Element) {
	t.Helper()
	b := p.Bytes()
	d, err := DecodeProof(b[:])
	if err != nil {
		t.Fatalf("%s: decoding its own proof: %v", who, err)
	}
	pvk := vk.Prepare()
	if err := pvk.Verify(&d, public); err != nil {
		t.Fatalf("%s: proof rejected: %v", who, err)
	}
	if err := groth16bls.Verify(d.Gnark(), gvk, public); err != nil {
		t.Fatalf("%s: gnark's verifier rejects the proof: %v", who, err)
	}
	for _, bit := range []int{0, 7 * 8, 60 * 8, 150 * 8, 191*8 + 7} {
		f := b
		f[bit/8] ^= 1 << (bit % 8)
		d2, err := DecodeProof(f[:])
		if err == nil {
			err = pvk.Verify(&d2, public)
		}
		if err == nil {
			t.Fatalf("%s: proof with bit %d flipped accepted", who, bit)
		}
	}
	other := slices.Clone(public)
	one := fr.One()
	other[0].Add(&other[0], &one)
	if err := pvk.Verify(&d, other); !errors.Is(err, ErrInvalidProof) {
		t.Fatalf("%s: proof verifies with another public input: %v", who, err)
	}
}

// The round trip the issue asks for, over a dense and a sparse circuit: a
// gnark development setup over the recorded shape, written in bellperson's
// .params/.vk format, read back (mapped and through io.ReaderAt, subgroups
// checked), converted back into gnark keys identical to the setup's, and
// proofs by gnark's prover and by c2flow's split prover over the converted
// keys, in Filecoin's 192-byte format, verified by this package and by
// gnark. gnark's own infinity masks are the densities DensityOf computes.
func TestGnarkSetupRoundTrip(t *testing.T) {
	for _, c := range []testCircuit{denseCircuit, sparseCircuit} {
		t.Run(c.name, func(t *testing.T) {
			shape := shapeOf(t, c)
			d, err := DensityOf(shape)
			if err != nil {
				t.Fatal(err)
			}
			ccs, err := shape.Gnark()
			if err != nil {
				t.Fatal(err)
			}
			dg, err := DensityOfGnark(ccs)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(d.InfinityA, dg.InfinityA) || !slices.Equal(d.InfinityB, dg.InfinityB) || d.NumConstraints != dg.NumConstraints {
				t.Fatal("DensityOf and DensityOfGnark differ")
			}
			na, nb := d.Counts()
			t.Logf("%s: %d constraints, %d inputs, %d aux; %d in A, %d in B", c.name, d.NumConstraints, d.NumInputs, d.NumAux, na, nb)
			if c.name == "dense" && (na != d.NumVars() || nb != d.NumVars()) {
				t.Fatalf("dense circuit has variables outside A or B")
			}
			if c.name == "sparse" && (na == d.NumVars() || nb == d.NumVars() || !d.InfinityB[2]) {
				t.Fatalf("sparse circuit has no infinity points")
			}

			pk := new(groth16bls.ProvingKey)
			vk := new(groth16bls.VerifyingKey)
			if err := groth16bls.Setup(ccs, pk, vk); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(pk.InfinityA, d.InfinityA) || !slices.Equal(pk.InfinityB, d.InfinityB) {
				t.Fatalf("gnark's infinity masks differ from the density")
			}
			p, err := FromGnark(pk, vk)
			if err != nil {
				t.Fatal(err)
			}
			if err := p.Check(d); err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			pp, vp := saveParams(t, dir, c.name, p)
			back, bvk := readBack(t, pp, vp)
			if !paramsEqual(back, p) {
				t.Fatal("params read back differ from those written")
			}
			pk2, vk2, err := back.ToGnark(d)
			if err != nil {
				t.Fatal(err)
			}
			if back.H != nil {
				t.Fatal("ToGnark left the params' slices in place")
			}
			if !equalG1s(pk2.G1.Z, pk.G1.Z) || !equalG1s(pk2.G1.A, pk.G1.A) || !equalG1s(pk2.G1.B, pk.G1.B) ||
				!equalG1s(pk2.G1.K, pk.G1.K) || !equalG2s(pk2.G2.B, pk.G2.B) || !equalG1s(vk2.G1.K, vk.G1.K) ||
				pk2.Domain.Cardinality != pk.Domain.Cardinality || !pk2.Domain.Generator.Equal(&pk.Domain.Generator) ||
				pk2.NbInfinityA != pk.NbInfinityA || pk2.NbInfinityB != pk.NbInfinityB ||
				!pk2.G1.Alpha.Equal(&pk.G1.Alpha) || !pk2.G1.Beta.Equal(&pk.G1.Beta) || !pk2.G1.Delta.Equal(&pk.G1.Delta) ||
				!pk2.G2.Beta.Equal(&pk.G2.Beta) || !pk2.G2.Delta.Equal(&pk.G2.Delta) || !vk2.G2.Gamma.Equal(&vk.G2.Gamma) {
				t.Fatal("converted gnark keys differ from the setup's")
			}

			w := witnessOf(t, c, elt(3))
			public := w.Inputs[1:]
			checkProof(t, "gnark prover", proveGnark(t, ccs, pk2, w), bvk, vk2, public)
			checkProof(t, "split prover", proveSplit(t, ccs, pk2, vk2, w), bvk, vk2, public)

			// The key as a mapped file: the same points, read in place
			// (read-only: a prover that wrote one would fault), and both
			// provers' proofs verify.
			kp := filepath.Join(dir, "key")
			if err := WriteKeyFile(kp, pk2, KeyMeta{Circuit: "test"}); err != nil {
				t.Fatal(err)
			}
			mk, err := MapKeyFile(context.Background(), kp, bvk, mapped.Stamps{Dir: filepath.Join(dir, "stamps")})
			if err != nil {
				t.Fatal(err)
			}
			defer mk.Close()
			pk3 := mk.PK
			if !equalG1s(pk3.G1.Z, pk.G1.Z) || !equalG1s(pk3.G1.A, pk.G1.A) || !equalG1s(pk3.G1.B, pk.G1.B) ||
				!equalG1s(pk3.G1.K, pk.G1.K) || !equalG2s(pk3.G2.B, pk.G2.B) || !slices.Equal(pk3.InfinityA, pk.InfinityA) ||
				!slices.Equal(pk3.InfinityB, pk.InfinityB) || pk3.NbInfinityA != pk.NbInfinityA || pk3.NbInfinityB != pk.NbInfinityB ||
				pk3.Domain.Cardinality != pk.Domain.Cardinality || !pk3.G1.Delta.Equal(&pk.G1.Delta) || !pk3.G2.Delta.Equal(&pk.G2.Delta) {
				t.Fatal("the mapped key differs from the setup's")
			}
			checkProof(t, "gnark prover, mapped key", proveGnark(t, ccs, pk3, w), bvk, vk2, public)
			checkProof(t, "split prover, mapped key", proveSplit(t, ccs, pk3, vk2, w), bvk, vk2, public)
		})
	}
}

// Params that do not fit the circuit are refused: counts of a, b, l, IC
// and h each checked against the density.
func TestParamsCheckMismatch(t *testing.T) {
	shape := shapeOf(t, sparseCircuit)
	d, err := DensityOf(shape)
	if err != nil {
		t.Fatal(err)
	}
	good := bellpersonSetup(t, shape)
	if err := good.Check(d); err != nil {
		t.Fatal(err)
	}
	for name, mut := range map[string]func(p *Params){
		"a":    func(p *Params) { p.A = p.A[1:] },
		"b_g1": func(p *Params) { p.BG1 = p.BG1[1:] },
		"b_g2": func(p *Params) { p.BG2 = append(p.BG2, p.BG2[0]) },
		"l":    func(p *Params) { p.L = p.L[1:] },
		"ic":   func(p *Params) { p.VK.IC = p.VK.IC[1:] },
		"h":    func(p *Params) { p.H = append(p.H, p.H[0]) },
	} {
		p := *good
		mut(&p)
		if _, _, err := p.ToGnark(d); !errors.Is(err, ErrMismatch) {
			t.Errorf("%s: error %v, want ErrMismatch", name, err)
		}
	}
	noInputConstraints := r1cs.NewShape()
	sparseCircuit.build(noInputConstraints, fr.Element{})
	if _, err := DensityOf(noInputConstraints); !errors.Is(err, ErrMismatch) {
		t.Errorf("shape without per-input constraints: error %v", err)
	}
}
