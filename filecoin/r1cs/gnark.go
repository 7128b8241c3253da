package r1cs

import (
	"fmt"
	"strconv"

	"github.com/consensys/gnark-crypto/ecc"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/consensys/gnark/backend/witness"
	"github.com/consensys/gnark/constraint"
	csbls "github.com/consensys/gnark/constraint/bls12-381"
)

// Gnark converts the recorded system to gnark's R1CS over BLS12-381, so
// gnark's groth16.Setup, Prove and Verify (and c2flow's split prover) work
// over it. The wires map as gnark's own frontend lays them out: gnark wire 0
// is its constant-one public wire and is bellperson's input 0 ([One]);
// inputs 1.. are the next public wires ("input_i"); aux j is secret wire
// NumInputs + j ("aux_j"). There are no internal wires, so gnark's solver
// computes nothing and only checks each constraint: the full witness must
// be supplied (see [GnarkWitness]). Constraints keep their order; the
// per-input constraints are included only if appended.
func (s *Shape) Gnark() (*csbls.R1CS, error) {
	if s.overflow != nil {
		return nil, fmt.Errorf("converting shape to gnark: %w", s.overflow)
	}
	rows := s.NumConstraints()
	cs := csbls.NewR1CS(rows)
	cs.AddPublicVariable("1")
	for i := 1; i < s.NumInputs; i++ {
		cs.AddPublicVariable("input_" + strconv.Itoa(i))
	}
	for j := 0; j < s.NumAux; j++ {
		cs.AddSecretVariable("aux_" + strconv.Itoa(j))
	}
	bID := cs.AddBlueprint(&constraint.BlueprintGenericR1C{})

	// gnark coefficient IDs for s.Coeffs, resolved once.
	ids := make([]constraint.Term, len(s.Coeffs))
	for k := range s.Coeffs {
		var u constraint.U64
		copy(u[:], s.Coeffs[k][:])
		ids[k] = cs.MakeTerm(u, 0)
	}
	var r1c constraint.R1C
	le := func(dst constraint.LinearExpression, m *Matrix, r int) constraint.LinearExpression {
		dst = dst[:0]
		for k := m.RowStart[r]; k < m.RowStart[r+1]; k++ {
			t := ids[m.Coeffs[k]]
			t.VID = uint32(s.Column(m.Vars[k]))
			dst = append(dst, t)
		}
		return dst
	}
	for r := 0; r < rows; r++ {
		r1c.L = le(r1c.L, &s.A, r)
		r1c.R = le(r1c.R, &s.B, r)
		r1c.O = le(r1c.O, &s.C, r)
		cs.AddR1C(r1c, bID)
	}
	return cs, nil
}

// GnarkWitness returns gnark's full witness for the assignment (inputs,
// aux): inputs[1:] as the public part (gnark's witness omits the one wire),
// aux as the secret part. inputs[0] must be one.
func GnarkWitness(inputs, aux []fr.Element) (witness.Witness, error) {
	if len(inputs) == 0 || !inputs[0].IsOne() {
		return nil, fmt.Errorf("building gnark witness: input 0 is not one: %w", ErrWrongAssignment)
	}
	w, err := witness.New(ecc.BLS12_381.ScalarField())
	if err != nil {
		return nil, fmt.Errorf("building gnark witness: %w", err)
	}
	ch := make(chan any, 1024)
	go func() {
		defer close(ch)
		for i := 1; i < len(inputs); i++ {
			ch <- inputs[i]
		}
		for j := range aux {
			ch <- aux[j]
		}
	}()
	if err := w.Fill(len(inputs)-1, len(aux), ch); err != nil {
		for range ch { // drain so the producer ends
		}
		return nil, fmt.Errorf("building gnark witness: %w", err)
	}
	return w, nil
}

// GnarkPublicWitness returns gnark's public witness for the inputs (One
// first, omitted as gnark omits it), for groth16.Verify.
func GnarkPublicWitness(inputs []fr.Element) (witness.Witness, error) {
	w, err := GnarkWitness(inputs, nil)
	if err != nil {
		return nil, err
	}
	pw, err := w.Public()
	if err != nil {
		return nil, fmt.Errorf("building gnark public witness: %w", err)
	}
	return pw, nil
}
