package groth

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	bls "github.com/consensys/gnark-crypto/ecc/bls12-381"

	"github.com/c2flow/c2flow/internal/iocount"
)

// A .vk whose header claims 2^20 IC points, for a circuit of 3 inputs, is
// refused on its header: none of its IC points is read (reading and
// subgroup-checking them all took 34 s).
func TestVerifyingKeyICCountComparedFirst(t *testing.T) {
	_, _, g1, g2 := bls.Generators()
	vk := &VerifyingKey{AlphaG1: g1, BetaG1: g1, BetaG2: g2, GammaG2: g2, DeltaG1: g1, DeltaG2: g2, IC: []bls.G1Affine{g1, g1, g1}}
	var b bytes.Buffer
	if _, err := vk.WriteTo(&b); err != nil {
		t.Fatal(err)
	}
	const huge = 1 << 20
	header := b.Bytes()[:vkFixedSize+4]
	binary.BigEndian.PutUint32(header[vkFixedSize:], huge)
	icBytes := int64(huge) * G1Uncompressed
	r := &iocount.Reader{R: io.MultiReader(bytes.NewReader(header), io.LimitReader(zeros{}, icBytes))}
	_, _, err := readVerifyingKeyFor(r, 3)
	var ic *ICCountError
	if !errors.As(err, &ic) || ic.Got != huge || ic.Want != 3 {
		t.Fatalf("a vk claiming %d IC points for 3 inputs: %v", huge, err)
	}
	if r.N > int64(len(header)) {
		t.Fatalf("read %d bytes of a vk refused on its header (%d bytes)", r.N, len(header))
	}
	// The file reader too, on a file of the header alone.
	p := filepath.Join(t.TempDir(), "huge.vk")
	if err := os.WriteFile(p, header, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadVerifyingKeyFileFor(p, 3); !errors.As(err, &ic) || ic.Got != huge {
		t.Fatalf("ReadVerifyingKeyFileFor: %v", err)
	}
	// The right count still reads the key.
	got, err := ReadVerifyingKeyFileFor(writeVK(t, vk), 3)
	if err != nil || !got.Equal(vk) {
		t.Fatalf("a good key: %v", err)
	}
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

func writeVK(t *testing.T, vk *VerifyingKey) string {
	p := filepath.Join(t.TempDir(), "good.vk")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := vk.WriteTo(f); err != nil {
		t.Fatal(err)
	}
	return p
}
