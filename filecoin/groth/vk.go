package groth

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"os"

	bls "github.com/consensys/gnark-crypto/ecc/bls12-381"
	groth16bls "github.com/consensys/gnark/backend/groth16/bls12-381"
)

// VerifyingKey is bellperson's VerifyingKey<Bls12>: the points of a .vk
// file, in its order.
type VerifyingKey struct {
	AlphaG1 bls.G1Affine
	BetaG1  bls.G1Affine
	BetaG2  bls.G2Affine
	GammaG2 bls.G2Affine
	DeltaG1 bls.G1Affine
	DeltaG2 bls.G2Affine
	// IC has one point per public input, the constant ONE first.
	IC []bls.G1Affine
}

// vkFixedSize is the size of a verifying key's points before the IC count.
const vkFixedSize = 3*G1Uncompressed + 3*G2Uncompressed

// maxICCount bounds the IC count a reader accepts before allocating: far
// above any Filecoin circuit (328 inputs for 32GiB PoRep).
const maxICCount = 1 << 20

// Size returns the encoded size of vk in bytes.
func (vk *VerifyingKey) Size() int64 {
	return vkFixedSize + 4 + int64(len(vk.IC))*G1Uncompressed
}

// NumPublic returns the number of public inputs a proof is verified
// against: len(IC) - 1 (ONE is implicit).
func (vk *VerifyingKey) NumPublic() int { return len(vk.IC) - 1 }

// WriteTo writes vk in bellperson's .vk format.
func (vk *VerifyingKey) WriteTo(w io.Writer) (int64, error) {
	if uint64(len(vk.IC)) > 1<<32-1 {
		return 0, fmt.Errorf("writing verifying key: %d IC points: %w", len(vk.IC), ErrFormat)
	}
	buf := make([]byte, 0, vk.Size())
	for _, p := range []any{&vk.AlphaG1, &vk.BetaG1, &vk.BetaG2, &vk.GammaG2, &vk.DeltaG1, &vk.DeltaG2} {
		switch p := p.(type) {
		case *bls.G1Affine:
			b := p.RawBytes()
			buf = append(buf, b[:]...)
		case *bls.G2Affine:
			b := p.RawBytes()
			buf = append(buf, b[:]...)
		}
	}
	buf = binary.BigEndian.AppendUint32(buf, uint32(len(vk.IC)))
	for i := range vk.IC {
		b := vk.IC[i].RawBytes()
		buf = append(buf, b[:]...)
	}
	n, err := w.Write(buf)
	if err != nil {
		return int64(n), fmt.Errorf("writing verifying key: %w", err)
	}
	return int64(n), nil
}

// ReadVerifyingKey reads a .vk file's contents as bellperson's
// VerifyingKey::read does: every point checked on the curve and in the
// subgroup, no IC point at infinity. It reads exactly the key's bytes.
func ReadVerifyingKey(r io.Reader) (*VerifyingKey, error) {
	vk, _, err := readVerifyingKey(r)
	return vk, err
}

// ICCountError is a verifying key whose header's IC count is not the one
// its circuit needs: a key of another circuit, refused before its IC
// points are read.
type ICCountError struct {
	Got, Want int
}

func (e *ICCountError) Error() string {
	return fmt.Sprintf("reading verifying key: %d IC points, want %d", e.Got, e.Want)
}

// ReadVerifyingKeyFileFor is ReadVerifyingKeyFile for a key that must have
// numIC IC points: the header's count is compared first, so a key claiming
// a huge IC is refused (an *ICCountError) without reading or checking it.
func ReadVerifyingKeyFileFor(path string, numIC int) (*VerifyingKey, error) {
	return readVerifyingKeyFile(path, numIC)
}

func readVerifyingKey(r io.Reader) (*VerifyingKey, int64, error) {
	return readVerifyingKeyFor(r, -1)
}

// readVerifyingKeyFor reads a key; wantIC >= 0 is the IC count it must
// have, checked before any point is decoded.
func readVerifyingKeyFor(r io.Reader, wantIC int) (*VerifyingKey, int64, error) {
	fixed := make([]byte, vkFixedSize+4)
	if _, err := io.ReadFull(r, fixed); err != nil {
		return nil, 0, fmt.Errorf("reading verifying key: %w: %w", ErrFormat, err)
	}
	if n := binary.BigEndian.Uint32(fixed[vkFixedSize:]); wantIC >= 0 && uint64(n) != uint64(wantIC) {
		return nil, 0, &ICCountError{Got: int(n), Want: wantIC}
	}
	vk := new(VerifyingKey)
	off := 0
	g1 := func(name string, p *bls.G1Affine) error {
		err := decodeG1Uncompressed(fixed[off:], p, CheckSubgroup)
		off += G1Uncompressed
		if err != nil {
			return fmt.Errorf("reading verifying key: %s: %w", name, err)
		}
		return nil
	}
	g2 := func(name string, p *bls.G2Affine) error {
		err := decodeG2Uncompressed(fixed[off:], p, CheckSubgroup)
		off += G2Uncompressed
		if err != nil {
			return fmt.Errorf("reading verifying key: %s: %w", name, err)
		}
		return nil
	}
	for _, step := range []func() error{
		func() error { return g1("alpha_g1", &vk.AlphaG1) },
		func() error { return g1("beta_g1", &vk.BetaG1) },
		func() error { return g2("beta_g2", &vk.BetaG2) },
		func() error { return g2("gamma_g2", &vk.GammaG2) },
		func() error { return g1("delta_g1", &vk.DeltaG1) },
		func() error { return g2("delta_g2", &vk.DeltaG2) },
	} {
		if err := step(); err != nil {
			return nil, 0, err
		}
	}
	n := binary.BigEndian.Uint32(fixed[off:])
	if n > maxICCount {
		return nil, 0, fmt.Errorf("reading verifying key: %d IC points: %w", n, ErrFormat)
	}
	ic := make([]byte, int(n)*G1Uncompressed)
	if _, err := io.ReadFull(r, ic); err != nil {
		return nil, 0, fmt.Errorf("reading verifying key: IC (%d points): %w: %w", n, ErrFormat, err)
	}
	vk.IC = make([]bls.G1Affine, n)
	for i := range vk.IC {
		if err := decodeG1Uncompressed(ic[i*G1Uncompressed:], &vk.IC[i], CheckSubgroup); err != nil {
			return nil, 0, fmt.Errorf("reading verifying key: IC %d: %w", i, err)
		}
		if vk.IC[i].IsInfinity() {
			return nil, 0, fmt.Errorf("reading verifying key: IC %d at infinity: %w", i, ErrPoint)
		}
	}
	return vk, vk.Size(), nil
}

// ReadVerifyingKeyFile reads a .vk file; trailing bytes are an error.
func ReadVerifyingKeyFile(path string) (*VerifyingKey, error) {
	return readVerifyingKeyFile(path, -1)
}

func readVerifyingKeyFile(path string, wantIC int) (*VerifyingKey, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("reading verifying key: %w", err)
	}
	defer f.Close()
	br := bufio.NewReader(f)
	vk, _, err := readVerifyingKeyFor(br, wantIC)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if _, err := br.ReadByte(); err != io.EOF {
		return nil, fmt.Errorf("%s: reading verifying key: trailing bytes after %d: %w", path, vk.Size(), ErrFormat)
	}
	return vk, nil
}

// Gnark returns the gnark verifying key of vk: G1.K is the IC, the
// pairing e(alpha, beta) precomputed. It shares vk's IC slice.
func (vk *VerifyingKey) Gnark() (*groth16bls.VerifyingKey, error) {
	if len(vk.IC) == 0 {
		return nil, fmt.Errorf("converting verifying key: no IC point: %w", ErrFormat)
	}
	g := new(groth16bls.VerifyingKey)
	g.G1.Alpha = vk.AlphaG1
	g.G1.Beta = vk.BetaG1
	g.G1.Delta = vk.DeltaG1
	g.G1.K = vk.IC
	g.G2.Beta = vk.BetaG2
	g.G2.Gamma = vk.GammaG2
	g.G2.Delta = vk.DeltaG2
	g.PublicAndCommitmentCommitted = [][]int{}
	if err := g.Precompute(); err != nil {
		return nil, fmt.Errorf("converting verifying key: %w", err)
	}
	return g, nil
}

// VerifyingKeyFromGnark returns the bellperson verifying key of a gnark
// one without commitments. It shares the gnark key's K slice.
func VerifyingKeyFromGnark(g *groth16bls.VerifyingKey) (*VerifyingKey, error) {
	if len(g.CommitmentKeys) != 0 || len(g.PublicAndCommitmentCommitted) != 0 {
		return nil, fmt.Errorf("converting gnark verifying key: commitments have no bellperson form: %w", ErrMismatch)
	}
	if len(g.G1.K) == 0 {
		return nil, fmt.Errorf("converting gnark verifying key: no K point: %w", ErrFormat)
	}
	return &VerifyingKey{
		AlphaG1: g.G1.Alpha, BetaG1: g.G1.Beta, BetaG2: g.G2.Beta,
		GammaG2: g.G2.Gamma, DeltaG1: g.G1.Delta, DeltaG2: g.G2.Delta,
		IC: g.G1.K,
	}, nil
}

// Equal reports whether two verifying keys have the same points.
func (vk *VerifyingKey) Equal(o *VerifyingKey) bool {
	if !vk.AlphaG1.Equal(&o.AlphaG1) || !vk.BetaG1.Equal(&o.BetaG1) || !vk.BetaG2.Equal(&o.BetaG2) ||
		!vk.GammaG2.Equal(&o.GammaG2) || !vk.DeltaG1.Equal(&o.DeltaG1) || !vk.DeltaG2.Equal(&o.DeltaG2) ||
		len(vk.IC) != len(o.IC) {
		return false
	}
	for i := range vk.IC {
		if !vk.IC[i].Equal(&o.IC[i]) {
			return false
		}
	}
	return true
}
