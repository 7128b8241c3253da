package groth

import (
	"context"
	"encoding/json"
	"fmt"

	bls "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr/fft"
	groth16bls "github.com/consensys/gnark/backend/groth16/bls12-381"

	"github.com/c2flow/c2flow/internal/mapped"
)

// keyKind names a proving key as a mapped file (internal/mapped): gnark's
// points in gnark-crypto's in-memory form, which the MSMs read in place.
const keyKind = "c2flow.groth16-pk.bls12-381.v1"

// KeyMeta is what a key file records of its origin and its sizes.
type KeyMeta struct {
	// Params and VK are the SHA-256 of the .params/.vk pair the key was
	// converted from (the pair checked to match), Circuit the digest of
	// the circuit whose density placed its points.
	Params  string `json:"params_sha256"`
	VK      string `json:"vk_sha256"`
	Circuit string `json:"circuit"`
	Domain  uint64 `json:"domain"`
	Wires   int    `json:"wires"`
	A       int    `json:"a"`
	B       int    `json:"b"`
	K       int    `json:"k"`
	Z       int    `json:"z"`
}

// WriteKeyFile writes pk's points to path, whole or not at all, as a file
// MapKeyFile maps: the .params file is converted once per box, and every
// worker process maps the result (one copy, in the page cache). The small
// points (α, β, δ) are not kept: they come from the .vk at every map.
func WriteKeyFile(path string, pk *groth16bls.ProvingKey, meta KeyMeta) error {
	if len(pk.CommitmentKeys) != 0 {
		return fmt.Errorf("write key %s: commitments have no key file: %w", path, ErrMismatch)
	}
	meta.Domain, meta.Wires = pk.Domain.Cardinality, len(pk.InfinityA)
	meta.A, meta.B, meta.K, meta.Z = len(pk.G1.A), len(pk.G1.B), len(pk.G1.K), len(pk.G1.Z)
	if len(pk.InfinityB) != meta.Wires || len(pk.G2.B) != meta.B {
		return fmt.Errorf("write key %s: %d wires in A's density, %d in B's; %d B points in G1, %d in G2: %w",
			path, meta.Wires, len(pk.InfinityB), meta.B, len(pk.G2.B), ErrMismatch)
	}
	return mapped.Write(path, keyKind, meta,
		mapped.Bytes(pk.G1.A), mapped.Bytes(pk.G1.B), mapped.Bytes(pk.G1.K), mapped.Bytes(pk.G1.Z),
		mapped.Bytes(pk.G2.B), mapped.Bytes(pk.InfinityA), mapped.Bytes(pk.InfinityB))
}

// MappedKey is a proving key over a mapped key file. Its points are
// read-only: writing one faults.
type MappedKey struct {
	PK   *groth16bls.ProvingKey
	Meta KeyMeta
	file *mapped.File
}

// Close unmaps the key: it must not be used after.
func (k *MappedKey) Close() error { return k.file.Close() }

// FileBytes is the size of the mapped file.
func (k *MappedKey) FileBytes() int64 { return k.file.Size() }

// MapKeyFile maps the key file at path and completes its proving key with
// vk's small points; its domain precomputes nothing (the FFTs make their
// twiddles as they go: a 2^27 domain's tables are 16 GiB). The file's
// digest is checked in full when stamps has not seen it as it is now.
func MapKeyFile(ctx context.Context, path string, vk *VerifyingKey, stamps mapped.Stamps) (*MappedKey, error) {
	f, err := mapped.Open(ctx, path, keyKind, stamps)
	if err != nil {
		return nil, err
	}
	k, err := keyOf(f, vk)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("map key %s: %w", path, err)
	}
	return k, nil
}

func keyOf(f *mapped.File, vk *VerifyingKey) (*MappedKey, error) {
	var m KeyMeta
	if err := json.Unmarshal(f.Meta, &m); err != nil {
		return nil, fmt.Errorf("metadata: %v: %w", err, mapped.ErrBadFile)
	}
	if len(f.Sections) != 7 || m.Domain < 2 || m.Domain&(m.Domain-1) != 0 || m.Domain > 1<<32 || m.Z != int(m.Domain)-1 ||
		m.A > m.Wires || m.B > m.Wires || m.K > m.Wires {
		return nil, fmt.Errorf("%d sections, sizes %+v: %w", len(f.Sections), m, mapped.ErrBadFile)
	}
	pk := new(groth16bls.ProvingKey)
	var err error
	g1 := func(i, n int) []bls.G1Affine {
		var s []bls.G1Affine
		if err == nil {
			s, err = mapped.Slice[bls.G1Affine](f.Sections[i], n)
		}
		return s
	}
	pk.G1.A, pk.G1.B, pk.G1.K, pk.G1.Z = g1(0, m.A), g1(1, m.B), g1(2, m.K), g1(3, m.Z)
	if err == nil {
		pk.G2.B, err = mapped.Slice[bls.G2Affine](f.Sections[4], m.B)
	}
	if err == nil {
		pk.InfinityA, err = mapped.Slice[bool](f.Sections[5], m.Wires)
	}
	if err == nil {
		pk.InfinityB, err = mapped.Slice[bool](f.Sections[6], m.Wires)
	}
	if err != nil {
		return nil, err
	}
	pk.NbInfinityA, pk.NbInfinityB = uint64(m.Wires-m.A), uint64(m.Wires-m.B)
	pk.Domain = *fft.NewDomain(m.Domain, fft.WithoutPrecompute())
	pk.G1.Alpha, pk.G1.Beta, pk.G1.Delta = vk.AlphaG1, vk.BetaG1, vk.DeltaG1
	pk.G2.Beta, pk.G2.Delta = vk.BetaG2, vk.DeltaG2
	return &MappedKey{PK: pk, Meta: m, file: f}, nil
}

// Touch reads every page of the mapped file (mapped.File.Touch).
func (k *MappedKey) Touch() int64 { return k.file.Touch() }
