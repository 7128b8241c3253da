package circuit

import (
	"fmt"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/c2flow/c2flow/filecoin/proofs"
	"github.com/c2flow/c2flow/filecoin/sdr"
)

// Graph and challenge constants of the stacked circuit.
const (
	// DRGParents is the number of DRG parents of a node (BASE_DEGREE).
	DRGParents = proofs.DRGParents
	// ExpParents is the number of expander parents (EXP_DEGREE).
	ExpParents = proofs.ExpParents
	// InputsPerChallenge is the number of public inputs each challenge adds:
	// its tree D opening, its 14 parents' tree C openings, the challenge
	// itself, and its tree R and tree C openings.
	InputsPerChallenge = 1 + DRGParents + ExpParents + 1 + 1 + 1
	// FixedInputs is the number of public inputs before the challenges':
	// replica_id, comm_d and comm_r (ONE not counted).
	FixedInputs = 3
)

// NumInputs is the number of public inputs of a circuit of shape s,
// including the constant ONE (bellperson's input 0).
func (s Shape) NumInputs() int { return 1 + FixedInputs + s.Challenges*InputsPerChallenge }

// Public is the public data of one partition's circuit.
type Public struct {
	// ReplicaID, CommD and CommR are the sector's replica id and
	// commitments as 32-byte domains (replica id and comm_r Poseidon, comm_d
	// SHA-254).
	ReplicaID, CommD, CommR [32]byte
	// Challenges are the partition's challenged nodes, in order.
	Challenges []uint64
}

// PublicInputs returns the public inputs of a circuit over graph g with the
// given public data, without ONE, in the order the circuit allocates them:
// StackedCompound::generate_public_inputs (storage-proofs-porep
// stacked/circuit/proof.rs). Each inclusion proof contributes its packed
// path bits, which spell the opened node (PoRCompound::generate_public_inputs
// with a private root), so per challenge c with DRG parents d and expander
// parents e: c, d[0..6], e[0..8], c, c, c.
func PublicInputs(g *sdr.Graph, pub Public) ([]fr.Element, error) {
	out := make([]fr.Element, 0, FixedInputs+len(pub.Challenges)*InputsPerChallenge)
	for _, f := range []struct {
		name string
		b    [32]byte
	}{{"replica_id", pub.ReplicaID}, {"comm_d", pub.CommD}, {"comm_r", pub.CommR}} {
		e, err := element(f.b)
		if err != nil {
			return nil, fmt.Errorf("circuit: public inputs: %s: %w", f.name, err)
		}
		out = append(out, e)
	}
	nodes := g.Nodes()
	var parents [DRGParents + ExpParents]uint32
	node := func(n uint64) (fr.Element, error) {
		if n >= nodes {
			return fr.Element{}, fmt.Errorf("circuit: public inputs: node %d out of range (%d nodes): %w", n, nodes, ErrWitness)
		}
		var e fr.Element
		e.SetUint64(n)
		return e, nil
	}
	for _, c := range pub.Challenges {
		ce, err := node(c)
		if err != nil {
			return nil, err
		}
		if err := g.Parents(c, parents[:]); err != nil {
			return nil, fmt.Errorf("circuit: public inputs: parents of node %d: %w", c, err)
		}
		out = append(out, ce)
		for _, p := range parents {
			pe, err := node(uint64(p))
			if err != nil {
				return nil, err
			}
			out = append(out, pe)
		}
		out = append(out, ce, ce, ce)
	}
	return out, nil
}

// PublicInputsOf returns the public inputs (without ONE) of partition k of
// a sector of a registered proof, from its public data alone: the graph
// and challenges follow from the proof, replica id, comm_r and seed
// (filecoin-proofs' seal_commit_phase2 / verify_seal public inputs).
func PublicInputsOf(info proofs.SealProofInfo, replicaID, commD, commR, seed [32]byte, k int) ([]fr.Element, error) {
	if k < 0 || k >= info.Partitions {
		return nil, fmt.Errorf("circuit: public inputs of %s: partition %d of %d: %w", info.Name, k, info.Partitions, ErrWitness)
	}
	g, err := sdr.GraphFor(info)
	if err != nil {
		return nil, fmt.Errorf("circuit: public inputs of %s: %w", info.Name, err)
	}
	chs, err := sdr.Challenges(sdr.ChallengeParamsFor(info, replicaID, commR, seed), k)
	if err != nil {
		return nil, fmt.Errorf("circuit: public inputs of %s partition %d: challenges: %w", info.Name, k, err)
	}
	return PublicInputs(g, Public{ReplicaID: replicaID, CommD: commD, CommR: commR, Challenges: chs})
}
