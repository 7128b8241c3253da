package snark

import (
	"context"
	"fmt"

	groth16bls "github.com/consensys/gnark/backend/groth16/bls12-381"

	"github.com/c2flow/c2flow/filecoin/r1cs"
	"github.com/c2flow/c2flow/prover"
	"github.com/c2flow/c2flow/scheme"
)

// provedBy is a job type of one of the keyring's circuits beside the seal
// proof's (an update's UpdateSector, a PoSt's PoStJob): what the
// generic verifier and circuit need of it.
type provedBy interface {
	scheme.Sector
	proved
	// circuitSpec is the circuit the job's proof is proved by.
	circuitSpec() (*spec, error)
	// builder is partition k's witness builder; an error wrapping the
	// scheme's bad-input error where the job has no vanilla proofs
	// (public data only).
	builder(k int) (func(*r1cs.Witness) error, error)
}

// verifierOf assembles and verifies the proofs of jobs of type S with
// their circuit's verifying key.
type verifierOf[S provedBy] struct {
	k *keys
	// kind names the circuit in errors ("update", "PoSt").
	kind string
}

// circuitOf is a circuit with its keys, proving jobs of type S.
type circuitOf[S provedBy] struct {
	verifierOf[S]
}

// Describe names the verifier's key for a person.
func (v *verifierOf[S]) Describe() string { return (&Verifier{k: v.k}).Describe() }

// Digests implements scheme.Verifier.
func (v *verifierOf[S]) Digests() scheme.Digests { return v.k.digests }

// sector returns s as a job of this circuit.
func (v *verifierOf[S]) sector(s scheme.Sector) (S, error) {
	sec, ok := s.(S)
	if !ok {
		return sec, v.k.wrap(fmt.Errorf("filecoin %s circuit (%s): not a %s job (%T)", v.kind, v.k.key, v.kind, s))
	}
	sp, err := sec.circuitSpec()
	if err != nil {
		return sec, err
	}
	if sp.key != v.k.key {
		return sec, v.k.wrap(fmt.Errorf("filecoin %s circuit (%s): %s is %s's (%s)", v.kind, v.k.key, sec, sp.name, sp.key))
	}
	return sec, nil
}

// Assemble implements scheme.Verifier: the partitions' 192-byte proofs
// concatenated in order, each decoded first.
func (v *verifierOf[S]) Assemble(s scheme.Sector, parts [][]byte) ([]byte, error) {
	sec, err := v.sector(s)
	if err != nil {
		return nil, err
	}
	return v.k.assemble(sec, parts)
}

// VerifyC2 implements scheme.Verifier: exactly one 192-byte proof per
// partition, each verified with the .vk against its partition's public
// inputs (filecoin-proofs' verify_empty_sector_update_proof,
// verify_window_post of one partition, verify_winning_post).
func (v *verifierOf[S]) VerifyC2(s scheme.Sector, proof []byte) error {
	sec, err := v.sector(s)
	if err != nil {
		return err
	}
	return v.k.verifyProofs(sec, proof)
}

func (c *circuitOf[S]) partition(s scheme.Sector, k int) (S, string, error) {
	sec, err := c.sector(s)
	if err != nil {
		return sec, "", err
	}
	id, err := c.k.partition(sec, k)
	return sec, id, err
}

// Prover implements scheme.Circuit: a split prover over the keys (a new
// value each call).
func (c *circuitOf[S]) Prover() *prover.Prover {
	p := *c.k.prover
	return &p
}

// PartitionBytes implements scheme.Circuit: Counts.Bytes of the recorded
// circuit.
func (c *circuitOf[S]) PartitionBytes() int64 { return c.k.counts.Bytes() }

// Synthesize implements scheme.Circuit: partition k's witness from its
// vanilla proofs (the job's builder) through the circuit.
func (c *circuitOf[S]) Synthesize(ctx context.Context, s scheme.Sector, k int) (*prover.Solution, error) {
	sec, id, err := c.partition(s, k)
	if err != nil {
		return nil, err
	}
	build, err := sec.builder(k)
	if err != nil {
		return nil, fmt.Errorf("synthesize %s: %w", id, err)
	}
	return c.k.synthesize(ctx, sec, k, id, build)
}

// VerifyPartition implements scheme.Circuit.
func (c *circuitOf[S]) VerifyPartition(s scheme.Sector, k int, proof *groth16bls.Proof) error {
	sec, id, err := c.partition(s, k)
	if err != nil {
		return err
	}
	return c.k.verifyPartition(sec, k, id, proof)
}

// EncodePartition implements scheme.Circuit: the 192-byte proof.
func (c *circuitOf[S]) EncodePartition(proof *groth16bls.Proof) ([]byte, error) {
	return c.k.encodePartition(proof)
}
