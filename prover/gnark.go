package prover

import (
	"fmt"

	csbls "github.com/consensys/gnark/constraint/bls12-381"

	"github.com/c2flow/c2flow/prover/packed"
)

// GnarkSystem records a gnark R1CS over BLS12-381 as the prover's
// constraint system: its constraints' L, R and O in order, over gnark's
// wire numbering (public, then secret, then internal wires), the rows
// gnark's solver evaluates into its solution's a, b and c.
func GnarkSystem(ccs *csbls.R1CS) (*packed.System, error) {
	internal, secret, public := ccs.GetNbVariables()
	wires := internal + secret + public
	b := packed.NewSystemBuilder(wires, packed.Sizes{Rows: ccs.GetNbConstraints()})
	// gnark's coefficient ids to the system's, 0 for gnark's zero (the
	// term is dropped), else id+1.
	ids := make([]uint32, len(ccs.Coefficients))
	var row []packed.Entry
	it := ccs.GetR1CIterator()
	for r1c := it.Next(); r1c != nil; r1c = it.Next() {
		for m := packed.A; m <= packed.C; m++ {
			le := r1c.L
			switch m {
			case packed.B:
				le = r1c.R
			case packed.C:
				le = r1c.O
			}
			row = row[:0]
			for _, t := range le {
				if int(t.CID) >= len(ids) {
					return nil, fmt.Errorf("gnark system: coefficient %d of %d", t.CID, len(ids))
				}
				c := &ccs.Coefficients[t.CID]
				if c.IsZero() {
					continue
				}
				if ids[t.CID] == 0 {
					ids[t.CID] = b.Coeff(c) + 1
				}
				col := t.VID
				if t.IsConstant() {
					col = 0 // the constant: ONE's wire
				}
				row = append(row, packed.Entry{Col: col, Coeff: ids[t.CID] - 1})
			}
			b.AppendRow(m, row)
		}
	}
	sys, err := b.Build()
	if err != nil {
		return nil, fmt.Errorf("gnark system: %w", err)
	}
	return sys, nil
}
