package r1cs

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"

	"github.com/c2flow/c2flow/prover/packed"
)

// SystemDigest returns the digest of the shape sys was recorded from
// ([Shape.Digest]: the SHA-256 of [Shape.WriteTo]'s bytes), computed from
// sys alone (a System, or a PoSt's Repeated one): a circuit of numInputs inputs (ONE included) whose
// per-input constraints are appended, its columns the inputs then the
// aux variables. A circuit too large to hold its Shape beside its System
// (a 32GiB PoRep partition's is about 9 GB) is so named as the Shape
// names it, streaming, from a Recorder's System.
func SystemDigest(sys packed.Rows, numInputs int) (string, error) {
	h := sha256.New()
	if err := writeShapeOf(h, sys, numInputs); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// writeShapeOf writes the serialization Shape.WriteTo gives the shape of
// sys.
func writeShapeOf(w io.Writer, sys packed.Rows, numInputs int) error {
	rows, wires := sys.Rows(), sys.Wires()
	if numInputs < 1 || numInputs > wires || rows < numInputs {
		return fmt.Errorf("shape of a system of %d wires and %d rows with %d inputs: %w", wires, rows, numInputs, ErrBadShapeFile)
	}
	sw := newShapeWriter(w)
	bw, u64, u32 := sw.bw, sw.u64, sw.u32
	sw.header(numInputs, wires-numInputs, rows-numInputs, true, rows, sys.Coeffs())
	for i := range sys.Coeffs() {
		c := sys.Coeff(i)
		b := c.Bytes()
		bw.Write(b[:])
	}
	var row []packed.Entry
	for m := packed.A; m <= packed.C; m++ {
		nnz := [3]int{}
		nnz[0], nnz[1], nnz[2] = sys.NNZ()
		u64(nnz[m])
		for r := range rows {
			row = sys.Row(m, r, row[:0])
			u32(uint32(len(row)))
		}
		for r := range rows {
			row = sys.Row(m, r, row[:0])
			for _, e := range row {
				v := Input(int(e.Col))
				if int(e.Col) >= numInputs {
					v = Aux(int(e.Col) - numInputs)
				}
				u32(uint32(v))
			}
		}
		for r := range rows {
			row = sys.Row(m, r, row[:0])
			for _, e := range row {
				u32(e.Coeff)
			}
		}
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("shape of a system: %w", err)
	}
	return nil
}
