package snark

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	groth16bls "github.com/consensys/gnark/backend/groth16/bls12-381"

	"github.com/c2flow/c2flow/filecoin/groth"
	"github.com/c2flow/c2flow/filecoin/proofs"
	"github.com/c2flow/c2flow/filecoin/r1cs"
	"github.com/c2flow/c2flow/prover"
	"github.com/c2flow/c2flow/scheme"
)

// keys are one circuit shape's loaded parameters, shared by the proofs of
// that shape.
type keys struct {
	key    string // spec.key
	files  Files
	dev    bool
	counts Counts
	digest string // the recorded shape's SHA-256 (hex)
	// paramsDigest and vkDigest are parameters.json's digests of the
	// files ("" when it does not list them).
	paramsDigest, vkDigest string
	vk                     *groth.VerifyingKey
	pvk                    *groth.PreparedVerifyingKey
	gvk                    *groth16bls.VerifyingKey
	prover                 *prover.Prover
	mapped                 *groth.MappedKey // the prover's key, mapped
	digests                scheme.Digests
}

// wrap marks an error of a development setup's circuit as such.
func (k *keys) wrap(err error) error {
	if err == nil || !k.dev {
		return err
	}
	return fmt.Errorf("%w [parameters: DEVELOPMENT SETUP]", err)
}

// Verifier assembles and verifies one seal proof's C2s with its verifying
// key. Scheme.Verifier gives one over the .vk alone where the process has
// not loaded the circuit.
type Verifier struct {
	info proofs.SealProofInfo
	k    *keys // for a verifier over the .vk alone: shape, files, dev, vk, pvk and the VK digest
}

var _ scheme.Verifier = (*Verifier)(nil)

// Circuit is one seal proof's circuit with its keys.
type Circuit struct {
	Verifier
}

var _ scheme.Circuit = (*Circuit)(nil)

// Info is the circuit's registered seal proof (the one it was loaded for;
// it proves sectors of every proof of its shape).
func (c *Circuit) Info() proofs.SealProofInfo { return c.info }

// Files are the circuit's parameter files.
func (c *Verifier) Files() Files { return c.k.files }

// Dev reports whether the parameters are a development setup.
func (c *Verifier) Dev() bool { return c.k.dev }

// Describe names the verifier's key for a person: the .vk, and whether it
// is a development setup's.
func (c *Verifier) Describe() string {
	d := filepath.Base(c.k.files.VK)
	if c.k.dev {
		d += " [DEVELOPMENT SETUP: proofs worthless on chain]"
	}
	return d
}

// Describe names the circuit's keys for a person: the parameter file, the
// circuit's sizes and shape, and whether they are a development setup.
func (c *Circuit) Describe() string {
	n := c.k.counts
	d := fmt.Sprintf("%s (%d constraints, %d inputs, %d aux; shape %s)", filepath.Base(c.k.files.Params), n.Constraints, n.Inputs, n.Aux, c.k.digest[:16])
	if c.k.dev {
		d += " [DEVELOPMENT SETUP: proofs worthless on chain]"
	}
	return d
}

// Counts are one partition's circuit sizes, as recorded.
func (c *Circuit) Counts() Counts { return c.k.counts }

// ParamDigests are parameters.json's digests of the .vk and .params
// (the first 32 hex digits of their BLAKE2b-512, groth.FileDigest), which
// the files were checked against; "" when parameters.json does not list
// them (a development setup found by search, or Params.Pair).
func (c *Circuit) ParamDigests() (vk, params string) { return c.k.vkDigest, c.k.paramsDigest }

// Prover implements scheme.Circuit: a split prover over the keys (a new
// value each call, so a caller's settings stay its own).
func (c *Circuit) Prover() *prover.Prover {
	p := *c.k.prover
	return &p
}

// PartitionBytes implements scheme.Circuit: Counts.Bytes of the recorded
// circuit.
func (c *Circuit) PartitionBytes() int64 { return c.k.counts.Bytes() }

// Digests implements scheme.Circuit: the hex SHA-256 of the .vk and
// .params files (not parameters.json's digests: see ParamDigests) and the
// recorded circuit shape's SHA-256.
func (c *Verifier) Digests() scheme.Digests { return c.k.digests }

// sector returns s as a sector this circuit proves.
func (c *Verifier) sector(s scheme.Sector) (*Sector, error) {
	sec, ok := s.(*Sector)
	if !ok {
		return nil, c.k.wrap(fmt.Errorf("filecoin circuit %s: not a Filecoin sector (%T)", c.info.Name, s))
	}
	if sp := sealSpec(sec.info); sp.key != c.k.key {
		return nil, c.k.wrap(fmt.Errorf("filecoin circuit %s (%s): sector %d is a %s sector (%s)", c.info.Name, c.k.key, sec.SectorID(), sec.info.Name, sp.key))
	}
	return sec, nil
}

func (c *Circuit) partition(s scheme.Sector, k int) (*Sector, string, error) {
	sec, err := c.sector(s)
	if err != nil {
		return nil, "", err
	}
	id, err := c.k.partition(sec, k)
	return sec, id, err
}

// Synthesize implements scheme.Circuit: partition k of s (checked by
// Verify) solved by the witness builder into the assignment (inputs, then
// aux) and a, b, c, bellperson's per-input constraints included; the
// counts must be the circuit's and the input assignment the sector's
// public inputs.
func (c *Circuit) Synthesize(ctx context.Context, s scheme.Sector, k int) (*prover.Solution, error) {
	sec, id, err := c.partition(s, k)
	if err != nil {
		return nil, err
	}
	build, err := sec.builder(k)
	if err != nil {
		return nil, c.k.wrap(fmt.Errorf("synthesize %s: %w", id, err))
	}
	return c.k.synthesize(ctx, sec, k, id, build)
}

// VerifyPartition implements scheme.Circuit: gnark's verifier with the
// verifying key and partition k's public inputs from s's public data.
func (c *Circuit) VerifyPartition(s scheme.Sector, k int, proof *groth16bls.Proof) error {
	sec, id, err := c.partition(s, k)
	if err != nil {
		return err
	}
	return c.k.verifyPartition(sec, k, id, proof)
}

// EncodePartition implements scheme.Circuit: Filecoin's 192-byte proof
// (A, B, C compressed).
func (c *Circuit) EncodePartition(proof *groth16bls.Proof) ([]byte, error) {
	return c.k.encodePartition(proof)
}

// Assemble implements scheme.Verifier: the partitions' 192-byte proofs,
// each decoded (points on the curve and in the subgroup), concatenated in
// order: SealCommitPhase2's proof.
func (c *Verifier) Assemble(s scheme.Sector, parts [][]byte) ([]byte, error) {
	sec, err := c.sector(s)
	if err != nil {
		return nil, err
	}
	return c.k.assemble(sec, parts)
}

// VerifyC2 implements scheme.Verifier: c2 must be exactly Partitions()
// 192-byte proofs, each verified with the Filecoin verifying key (.vk)
// against its partition's public inputs.
func (c *Verifier) VerifyC2(s scheme.Sector, c2 []byte) error {
	sec, err := c.sector(s)
	if err != nil {
		return err
	}
	return c.k.verifyProofs(sec, c2)
}

// proved is what proving and verifying a sector's partitions needs of it,
// whichever Filecoin proof it is (a seal's Sector, an UpdateSector).
type proved interface {
	Partitions() int
	// PublicInputs are partition k's public inputs, without ONE.
	PublicInputs(k int) ([]fr.Element, error)
	// partitionID names partition k in logs and errors.
	partitionID(k int) string
	// String names the sector in errors ("sector 5").
	String() string
}

// partition checks k is one of sec's partitions and names it.
func (k *keys) partition(sec proved, part int) (string, error) {
	id := sec.partitionID(part)
	if part < 0 || part >= sec.Partitions() {
		return id, k.wrap(fmt.Errorf("partition %s: %s has %d partitions", id, sec, sec.Partitions()))
	}
	return id, nil
}

// synthesize solves partition part of sec, named id, by build into the
// packed assignment (inputs, then aux; a, b and c are evaluated at the
// device from the circuit's recorded system), bellperson's per-input
// constraints counted; the counts must be the circuit's and the input
// assignment sec's public inputs. No dense vector of the partition's size
// is ever made: a 32GiB partition's synthesis holds its packed assignment
// (about 90 MB) and the circuit's own working memory.
func (k *keys) synthesize(ctx context.Context, sec proved, part int, id string, build func(*r1cs.Witness) error) (*prover.Solution, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	t0 := time.Now()
	w, inputs, err := r1cs.SynthesizePacked(ctx, r1cs.Counts(k.counts), build)
	if err != nil {
		return nil, k.wrap(fmt.Errorf("synthesize %s: %w", id, err))
	}
	pub, err := sec.PublicInputs(part)
	if err != nil {
		return nil, k.wrap(fmt.Errorf("synthesize %s: %w", id, err))
	}
	for i := range pub {
		if !pub[i].Equal(&inputs[i+1]) {
			return nil, k.wrap(fmt.Errorf("synthesize %s: input %d of the witness is not the one the sector's public data give", id, i+1))
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return &prover.Solution{Partition: id, W: w, SynthTime: time.Since(t0)}, nil
}

// verifyPartition is gnark's verifier with the verifying key and
// partition part's public inputs from sec's public data.
func (k *keys) verifyPartition(sec proved, part int, id string, proof *groth16bls.Proof) error {
	in, err := sec.PublicInputs(part)
	if err != nil {
		return k.wrap(fmt.Errorf("verify %s: %w", id, err))
	}
	if err := groth16bls.Verify(proof, k.gvk, in); err != nil {
		return k.wrap(fmt.Errorf("verify %s: %w", id, err))
	}
	return nil
}

// encodePartition is Filecoin's 192-byte proof (A, B, C compressed).
func (k *keys) encodePartition(proof *groth16bls.Proof) ([]byte, error) {
	p, err := groth.ProofFromGnark(proof)
	if err != nil {
		return nil, k.wrap(err)
	}
	b := p.Bytes()
	return b[:], nil
}

// assemble concatenates sec's partitions' 192-byte proofs in order, each
// decoded first (points on the curve and in the subgroup).
func (k *keys) assemble(sec proved, parts [][]byte) ([]byte, error) {
	if len(parts) != sec.Partitions() {
		return nil, k.wrap(fmt.Errorf("assemble %s: %d partition proofs, it has %d", sec, len(parts), sec.Partitions()))
	}
	out := make([]byte, 0, len(parts)*groth.ProofSize)
	for i, p := range parts {
		if _, err := groth.DecodeProof(p); err != nil {
			return nil, k.wrap(fmt.Errorf("assemble: partition %s: %w", sec.partitionID(i), err))
		}
		out = append(out, p...)
	}
	return out, nil
}

// verifyProofs checks sec's proof bytes: exactly Partitions() 192-byte
// proofs, each verified with the verifying key (.vk) against its
// partition's public inputs.
func (k *keys) verifyProofs(sec proved, c2 []byte) error {
	n := sec.Partitions()
	if len(c2) != n*groth.ProofSize {
		return k.wrap(fmt.Errorf("C2 of %s: %d bytes, its proof is %d (%d proofs of %d bytes)", sec, len(c2), n*groth.ProofSize, n, groth.ProofSize))
	}
	ps, err := groth.DecodeProofs(c2, n)
	if err != nil {
		return k.wrap(fmt.Errorf("C2 of %s: %w", sec, err))
	}
	inputs := make([][]fr.Element, n)
	for i := range n {
		if inputs[i], err = sec.PublicInputs(i); err != nil {
			return k.wrap(fmt.Errorf("C2 of %s: %w", sec, err))
		}
	}
	if err := k.pvk.VerifyPartitions(ps, inputs); err != nil {
		return k.wrap(fmt.Errorf("C2 of %s does not verify with %s: %w", sec, k.files.VK, err))
	}
	return nil
}
