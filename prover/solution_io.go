package prover

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
)

// solutionMagic starts a serialized solution (version 1).
const solutionMagic = "C2FWIT01"

// MarshalBinary encodes the solution (partition id, W, A, B, C) for a
// witness spilled between a synthesis host and a device host, ending with
// a SHA-256 of what precedes it so a torn or corrupt spill is detected.
func (s *Solution) MarshalBinary() ([]byte, error) {
	if s.A == nil {
		return nil, fmt.Errorf("solution %s: already consumed", s.Partition)
	}
	var buf bytes.Buffer
	buf.Grow(int(s.Bytes()) + 64)
	buf.WriteString(solutionMagic)
	binary.Write(&buf, binary.BigEndian, uint32(len(s.Partition)))
	buf.WriteString(s.Partition)
	binary.Write(&buf, binary.BigEndian, s.SynthTime.Nanoseconds())
	for _, v := range [][]fr.Element{s.W, s.A, s.B, s.C} {
		vec := fr.Vector(v)
		if _, err := vec.WriteTo(&buf); err != nil {
			return nil, err
		}
	}
	sum := sha256.Sum256(buf.Bytes())
	buf.Write(sum[:])
	return buf.Bytes(), nil
}

// UnmarshalSolution decodes a solution written by MarshalBinary; a wrong
// checksum, magic or shape is an error (the partition is synthesized
// again, never proved from a damaged witness).
func UnmarshalSolution(data []byte) (*Solution, error) {
	if len(data) < len(solutionMagic)+sha256.Size {
		return nil, errors.New("spilled witness: truncated")
	}
	body, sum := data[:len(data)-sha256.Size], data[len(data)-sha256.Size:]
	if got := sha256.Sum256(body); !bytes.Equal(got[:], sum) {
		return nil, errors.New("spilled witness: checksum mismatch")
	}
	if string(body[:len(solutionMagic)]) != solutionMagic {
		return nil, errors.New("spilled witness: not a c2flow witness (magic)")
	}
	r := bufio.NewReader(bytes.NewReader(body[len(solutionMagic):]))
	var n uint32
	if err := binary.Read(r, binary.BigEndian, &n); err != nil || n > 256 { // "<prover hex>/<sector>/<k>"
		return nil, fmt.Errorf("spilled witness: partition id length %d: %v", n, err)
	}
	id := make([]byte, n)
	if _, err := io.ReadFull(r, id); err != nil {
		return nil, fmt.Errorf("spilled witness: partition id: %w", err)
	}
	var synthNS int64
	if err := binary.Read(r, binary.BigEndian, &synthNS); err != nil {
		return nil, fmt.Errorf("spilled witness: synth time: %w", err)
	}
	s := &Solution{Partition: string(id)}
	s.SynthTime = time.Duration(synthNS)
	for i, dst := range []*[]fr.Element{&s.W, &s.A, &s.B, &s.C} {
		var vec fr.Vector
		if _, err := vec.ReadFrom(r); err != nil {
			return nil, fmt.Errorf("spilled witness: vector %d: %w", i, err)
		}
		*dst = vec
	}
	if len(s.A) != len(s.B) || len(s.B) != len(s.C) {
		return nil, fmt.Errorf("spilled witness: a, b, c of lengths %d, %d, %d", len(s.A), len(s.B), len(s.C))
	}
	if _, err := r.ReadByte(); err != io.EOF {
		return nil, errors.New("spilled witness: trailing data")
	}
	return s, nil
}
