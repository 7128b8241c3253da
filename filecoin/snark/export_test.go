package snark

import (
	"fmt"

	"github.com/c2flow/c2flow/filecoin/r1cs"
	"github.com/c2flow/c2flow/scheme"
)

// DenseABC synthesizes partition k of s (any of the keyring's jobs) as
// the prover did before its witness was packed: the dense assignment and
// a, b, c, bellperson's per-input constraints appended (tests only).
func DenseABC(s scheme.Sector, k int) (*r1cs.Witness, error) {
	b, ok := s.(interface {
		builder(int) (func(*r1cs.Witness) error, error)
	})
	if !ok {
		return nil, fmt.Errorf("a %T has no witness builder", s)
	}
	build, err := b.builder(k)
	if err != nil {
		return nil, err
	}
	wit := r1cs.NewWitness(r1cs.WitnessOptions{ABC: true})
	if err := build(wit); err != nil {
		return nil, err
	}
	wit.AppendInputConstraints()
	return wit, wit.Err()
}
