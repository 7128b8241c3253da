package params_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/consensys/gnark-crypto/ecc"
	"github.com/consensys/gnark/backend/groth16"
	groth16bls "github.com/consensys/gnark/backend/groth16/bls12-381"
	csbls "github.com/consensys/gnark/constraint/bls12-381"
	"github.com/consensys/gnark/frontend"
	"github.com/consensys/gnark/frontend/cs/r1cs"

	"github.com/c2flow/c2flow/scheme/testscheme/params"
	"github.com/c2flow/c2flow/scheme/testscheme/params/paramstest"
)

// commitCircuit is a tiny circuit with a Pedersen commitment over a public
// and a secret input, so that its keys carry every field of the format
// (commitment keys, committed public wires), unlike the PoRep circuit's.
type commitCircuit struct {
	X frontend.Variable `gnark:",public"`
	Y frontend.Variable
}

func (c *commitCircuit) Define(api frontend.API) error {
	cm, err := api.(frontend.Committer).Commit(c.X, c.Y)
	if err != nil {
		return err
	}
	api.AssertIsDifferent(cm, 0)
	api.AssertIsEqual(api.Mul(c.X, c.X), c.Y)
	return nil
}

type rawKeys struct {
	ccs    *csbls.R1CS
	pk, vk []byte
}

var tiny = sync.OnceValues(func() (rawKeys, error) {
	ccs, err := frontend.Compile(ecc.BLS12_381.ScalarField(), r1cs.NewBuilder, &commitCircuit{})
	if err != nil {
		return rawKeys{}, err
	}
	pk, vk, err := groth16.Setup(ccs)
	if err != nil {
		return rawKeys{}, err
	}
	return raw(ccs.(*csbls.R1CS), pk.(*groth16bls.ProvingKey), vk.(*groth16bls.VerifyingKey))
})

func raw(ccs *csbls.R1CS, pk *groth16bls.ProvingKey, vk *groth16bls.VerifyingKey) (rawKeys, error) {
	var p, v bytes.Buffer
	if _, err := pk.WriteRawTo(&p); err != nil {
		return rawKeys{}, err
	}
	if _, err := vk.WriteRawTo(&v); err != nil {
		return rawKeys{}, err
	}
	return rawKeys{ccs, p.Bytes(), v.Bytes()}, nil
}

func tinyKeys(tb testing.TB) rawKeys {
	tb.Helper()
	k, err := tiny()
	if err != nil {
		tb.Fatal(err)
	}
	return k
}

func realKeys(tb testing.TB) rawKeys {
	tb.Helper()
	k := paramstest.Keys(tb, "2KiB")
	r, err := raw(k.CCS, k.PK, k.VK)
	if err != nil {
		tb.Fatal(err)
	}
	return r
}

func hexSum(b []byte) string { h := sha256.Sum256(b); return hex.EncodeToString(h[:]) }

// checkPK and checkVK read b and check what an accepted file must be: a
// key that serializes back to exactly b, with b's SHA-256.
func checkPK(t *testing.T, b []byte, ccs *csbls.R1CS) error {
	t.Helper()
	pk, sum, err := params.ReadPK(b, ccs)
	if sum != hexSum(b) {
		t.Fatalf("SHA-256 %s, want %s (err %v)", sum, hexSum(b), err)
	}
	if err != nil {
		if !errors.Is(err, params.ErrMalformed) {
			t.Fatalf("error does not wrap ErrMalformed: %v", err)
		}
		return err
	}
	var out bytes.Buffer
	if _, err := pk.WriteRawTo(&out); err != nil || !bytes.Equal(out.Bytes(), b) {
		t.Fatalf("accepted pk does not serialize back to its file (%v)", err)
	}
	return nil
}

func checkVK(t *testing.T, b []byte) error {
	t.Helper()
	vk, sum, err := params.ReadVK(b)
	if sum != hexSum(b) {
		t.Fatalf("SHA-256 %s, want %s (err %v)", sum, hexSum(b), err)
	}
	if err != nil {
		if !errors.Is(err, params.ErrMalformed) {
			t.Fatalf("error does not wrap ErrMalformed: %v", err)
		}
		return err
	}
	var out bytes.Buffer
	if _, err := vk.WriteRawTo(&out); err != nil || !bytes.Equal(out.Bytes(), b) {
		t.Fatalf("accepted vk does not serialize back to its file (%v)", err)
	}
	return nil
}

func TestReaderAcceptsRealKeys(t *testing.T) {
	for name, k := range map[string]rawKeys{"2KiB": realKeys(t), "commitment": tinyKeys(t)} {
		if err := checkPK(t, k.pk, k.ccs); err != nil {
			t.Fatalf("%s pk: %v", name, err)
		}
		if err := checkVK(t, k.vk); err != nil {
			t.Fatalf("%s vk: %v", name, err)
		}
	}
}

// pkLengthOffsets gives the offsets of the length fields of a raw proving key, found by walking
// its layout (gnark backend/groth16/bls12-381/marshal.go writeTo).
func pkLengthOffsets(pk []byte) map[string]int {
	off := map[string]int{"FFT domain": 0}
	at := 8 + 5*32 + 1 + 3*96
	for _, f := range []string{"G1.A", "G1.B", "G1.Z", "G1.K"} {
		off[f] = at
		at += 4 + 96*int(binary.BigEndian.Uint32(pk[at:]))
	}
	at += 2 * 192
	off["G2.B"] = at
	at += 4 + 192*int(binary.BigEndian.Uint32(pk[at:]))
	off["wires"] = at
	return off
}

// A flipped header byte that would make gnark allocate hundreds of GiB
// (a fatal error no recover() catches) or panic is an error naming the
// field: a length against the bytes left, a domain against the circuit's.
func TestReaderRejectsCorruptHeaders(t *testing.T) {
	k := realKeys(t)
	for field, at := range pkLengthOffsets(k.pk) {
		b := bytes.Clone(k.pk)
		b[at] ^= 0x80
		err := checkPK(t, b, k.ccs)
		if err == nil || !strings.Contains(err.Error(), field) {
			t.Errorf("%s top bit flipped: %v", field, err)
		}
	}
	b := bytes.Clone(k.vk)
	b[2*96+2*192+96+192] ^= 0x80 // G1.K length
	if err := checkVK(t, b); err == nil || !strings.Contains(err.Error(), "G1.K") {
		t.Errorf("vk G1.K length flipped: %v", err)
	}
	if err := checkVK(t, k.pk[:4096]); err == nil {
		t.Error("a pk's head read as a vk")
	}
	if err := checkPK(t, append(bytes.Clone(k.pk), 0), k.ccs); err == nil || !strings.Contains(err.Error(), "1 bytes after the key") {
		t.Errorf("trailing byte: %v", err)
	}
}

// Every byte of the small keys flipped in turn: an error or a key that is
// exactly its file, never a panic.
func TestReaderSurvivesEveryByteFlip(t *testing.T) {
	k := tinyKeys(t)
	for i := range k.pk {
		b := bytes.Clone(k.pk)
		b[i] ^= 0xff
		checkPK(t, b, k.ccs)
	}
	for i := 0; i < len(k.vk); i += 7 { // the vk decoder computes a pairing: a sample
		b := bytes.Clone(k.vk)
		b[i] ^= 0xff
		checkVK(t, b)
	}
}

// The fuzz targets run only their seeds under plain go test; fuzz with
//
//	go test ./params -run '^$' -fuzz FuzzReadPK -fuzztime 30s -fuzzminimizetime 1s
//
// (the default minimization, a minute per new input, stalls the run).
// Each accepted input must be exactly a key; no input may panic.
func FuzzReadPK(f *testing.F) {
	k := tinyKeys(f)
	f.Add(k.pk)
	f.Add(k.pk[:len(k.pk)/2])
	f.Fuzz(func(t *testing.T, b []byte) { checkPK(t, b, k.ccs) })
}

func FuzzReadVK(f *testing.F) {
	f.Add(realKeys(f).vk)
	f.Add(tinyKeys(f).vk)
	f.Fuzz(func(t *testing.T, b []byte) { checkVK(t, b) })
}
