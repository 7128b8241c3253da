package testscheme

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	curve "github.com/consensys/gnark-crypto/ecc/bls12-381"
	groth16bls "github.com/consensys/gnark/backend/groth16/bls12-381"

	"github.com/c2flow/c2flow/scheme/testscheme/porep"
)

// C2 is a sector's Commit-2 proof: one Groth16 proof per partition.
//
// Encoding (all integers big-endian):
//
//	magic    8 bytes  "C2FLOW\x00\x01" (format version 1)
//	nameLen  1 byte   length of the profile name
//	name     nameLen bytes
//	count    2 bytes  number of partition proofs
//	proofs   count x 192 bytes: Ar (G1, 48) | Bs (G2, 96) | Krs (G1, 48),
//	         compressed points as gnark-crypto encodes them
type C2 struct {
	Profile string
	Proofs  []*groth16bls.Proof
}

var c2Magic = []byte("C2FLOW\x00\x01")

// ProofBytes is the size of one encoded partition proof.
const ProofBytes = curve.SizeOfG1AffineCompressed*2 + curve.SizeOfG2AffineCompressed

// MarshalBinary encodes the C2 proof.
func (c *C2) MarshalBinary() ([]byte, error) {
	if len(c.Profile) > 255 || len(c.Proofs) > 65535 {
		return nil, errors.New("c2: profile name or partition count too large")
	}
	var b bytes.Buffer
	b.Write(c2Magic)
	b.WriteByte(byte(len(c.Profile)))
	b.WriteString(c.Profile)
	binary.Write(&b, binary.BigEndian, uint16(len(c.Proofs)))
	for _, p := range c.Proofs {
		if len(p.Commitments) != 0 {
			return nil, errors.New("c2: proofs with commitments cannot be encoded")
		}
		ar, bs, krs := p.Ar.Bytes(), p.Bs.Bytes(), p.Krs.Bytes()
		b.Write(ar[:])
		b.Write(bs[:])
		b.Write(krs[:])
	}
	return b.Bytes(), nil
}

// C2Size is the encoded size of a C2 of profile with partitions proofs:
// a reader can refuse a longer input before reading it.
func C2Size(profile string, partitions int) int64 {
	return int64(len(c2Magic)+1+len(profile)+2) + int64(partitions)*ProofBytes
}

// UnmarshalC2 decodes a C2 proof, checking that every point is on the curve
// and in its subgroup.
func UnmarshalC2(data []byte) (*C2, error) {
	r := bytes.NewReader(data)
	magic := make([]byte, len(c2Magic))
	if _, err := io.ReadFull(r, magic); err != nil || !bytes.Equal(magic, c2Magic) {
		return nil, errors.New("c2: not a c2flow C2 proof (bad magic)")
	}
	n, err := r.ReadByte()
	if err != nil {
		return nil, fmt.Errorf("c2: truncated: %w", err)
	}
	name := make([]byte, n)
	if _, err := io.ReadFull(r, name); err != nil {
		return nil, fmt.Errorf("c2: truncated profile name: %w", err)
	}
	var count uint16
	if err := binary.Read(r, binary.BigEndian, &count); err != nil {
		return nil, fmt.Errorf("c2: truncated: %w", err)
	}
	if r.Len() != int(count)*ProofBytes {
		return nil, fmt.Errorf("c2: %d bytes of proofs for %d partitions, want %d", r.Len(), count, int(count)*ProofBytes)
	}
	c := &C2{Profile: string(name)}
	buf := make([]byte, ProofBytes)
	for i := 0; i < int(count); i++ {
		io.ReadFull(r, buf)
		p := &groth16bls.Proof{}
		if _, err := p.Ar.SetBytes(buf[:48]); err != nil {
			return nil, fmt.Errorf("c2: partition %d: Ar: %w", i, err)
		}
		if _, err := p.Bs.SetBytes(buf[48:144]); err != nil {
			return nil, fmt.Errorf("c2: partition %d: Bs: %w", i, err)
		}
		if _, err := p.Krs.SetBytes(buf[144:]); err != nil {
			return nil, fmt.Errorf("c2: partition %d: Krs: %w", i, err)
		}
		c.Proofs = append(c.Proofs, p)
	}
	return c, nil
}

// VerifyC2 checks every partition proof of a C2 against the statement.
func VerifyC2(vk *groth16bls.VerifyingKey, st porep.Statement, c *C2) error {
	if c.Profile != st.Profile.Name {
		return fmt.Errorf("c2: proof of profile %s for a %s sector", c.Profile, st.Profile.Name)
	}
	if len(c.Proofs) != st.Profile.Partitions {
		return fmt.Errorf("c2: %d partition proofs, the %s profile has %d", len(c.Proofs), c.Profile, st.Profile.Partitions)
	}
	for k, p := range c.Proofs {
		if err := Verify(vk, st, k, p); err != nil {
			return err
		}
	}
	return nil
}
