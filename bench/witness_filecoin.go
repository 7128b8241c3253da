package bench

import (
	"fmt"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/c2flow/c2flow/filecoin/c1"
	"github.com/c2flow/c2flow/filecoin/circuit"
	"github.com/c2flow/c2flow/filecoin/post"
	"github.com/c2flow/c2flow/filecoin/proofs"
	"github.com/c2flow/c2flow/filecoin/r1cs"
	"github.com/c2flow/c2flow/prover/packed"
)

// countBlank counts a blank circuit: its sizes with bellperson's
// per-input constraints.
func countBlank(blank func(r1cs.System) error) (r1cs.Counts, error) {
	cnt := r1cs.NewCounter()
	if err := blank(cnt); err != nil {
		return r1cs.Counts{}, err
	}
	if err := cnt.Err(); err != nil {
		return r1cs.Counts{}, err
	}
	st := cnt.Stats()
	return r1cs.Counts{Inputs: st.Inputs, Aux: st.Aux, Constraints: st.Constraints + st.Inputs}, nil
}

// PoRepWitness is the StackedCircuit of a C1's seal proof, its partitions
// the C1's.
func PoRepWitness(c *c1.SealCommitPhase1Output) (WitnessCircuit, error) {
	info, err := proofs.Lookup(c.RegisteredProof)
	if err != nil {
		return WitnessCircuit{}, err
	}
	shape := circuit.ShapeOf(info)
	wc := WitnessCircuit{
		Proof:      info.Name,
		Partitions: len(c.VanillaProofs.Partitions),
		Blank:      func(cs r1cs.System) error { return circuit.Synthesize(cs, shape, nil) },
		Build: func(k int) (func(*r1cs.Witness) error, error) {
			s, w, err := circuit.FromC1(c, k)
			if err != nil {
				return nil, err
			}
			return func(wit *r1cs.Witness) error { return circuit.Synthesize(wit, s, w) }, nil
		},
		Inputs: func(k int) ([]fr.Element, error) {
			return circuit.PublicInputsOf(info, c.ReplicaID, c.CommD, c.CommR, c.Seed, k)
		},
	}
	if wc.Counts, err = countBlank(wc.Blank); err != nil {
		return WitnessCircuit{}, fmt.Errorf("%s: count: %w", info.Name, err)
	}
	return wc, nil
}

// PoStWitness is the FallbackPoSt circuit of proof (a window partition or
// a winning PoSt) over one sector's vanilla proof (bincode, as Curio
// writes post.vproof) and its verify info: the sector padded to the
// partition's sector count as a short window partition is (its last
// sector repeated), the proof's own openings for a window proof. One
// partition.
func PoStWitness(proof string, vproof []byte, pub *post.VerifyInfo) (WitnessCircuit, error) {
	info, err := proofs.PoStByName(proof)
	if err != nil {
		return WitnessCircuit{}, err
	}
	vp, err := post.DecodeVanilla(vproof)
	if err != nil {
		return WitnessCircuit{}, fmt.Errorf("vanilla proof: %w", err)
	}
	p, err := post.NewPartition(info, pub.Randomness, 0, []*post.VanillaProof{vp})
	if err != nil {
		return WitnessCircuit{}, err
	}
	s := p.Shape()
	w, err := p.Witness()
	if err != nil {
		return WitnessCircuit{}, err
	}
	wc := WitnessCircuit{
		Proof:      info.Name,
		Partitions: 1,
		Blank:      func(cs r1cs.System) error { return circuit.SynthesizePoSt(cs, s, nil) },
		System:     func() (packed.Evaluator, error) { return circuit.PoStSystem(s) },
		Build: func(int) (func(*r1cs.Witness) error, error) {
			return func(wit *r1cs.Witness) error { return circuit.SynthesizePoSt(wit, s, w) }, nil
		},
		Inputs: func(int) ([]fr.Element, error) {
			return post.PublicInputs(info, pub.Randomness, pub.Sectors, 0)
		},
	}
	one := s
	one.Sectors = 1
	c, err := countBlank(func(cs r1cs.System) error { return circuit.SynthesizePoSt(cs, one, nil) })
	if err != nil {
		return WitnessCircuit{}, fmt.Errorf("%s: count: %w", info.Name, err)
	}
	// A partition is Sectors copies of one sector's circuit (CountPoSt).
	k := s.Sectors
	wc.Counts = r1cs.Counts{Inputs: 1 + k*(c.Inputs-1), Aux: k * c.Aux}
	wc.Counts.Constraints = k*(c.Constraints-c.Inputs) + wc.Counts.Inputs
	return wc, nil
}
