package snark

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/c2flow/c2flow/filecoin/circuit"
	"github.com/c2flow/c2flow/filecoin/groth"
	"github.com/c2flow/c2flow/filecoin/post"
	"github.com/c2flow/c2flow/filecoin/proofs"
	"github.com/c2flow/c2flow/filecoin/r1cs"
	"github.com/c2flow/c2flow/job"
	"github.com/c2flow/c2flow/prover"
	"github.com/c2flow/c2flow/prover/packed"
	"github.com/c2flow/c2flow/scheme"
)

// PoStScheme is Filecoin's proof of spacetime (WindowPoSt partitions and
// WinningPoSt, FallbackPoStCompound) behind scheme.Scheme: a PoStInput in,
// the partition's 192-byte Groth16 proof out, what
// generate_single_window_post_with_vanilla (a window partition) and
// generate_winning_post_with_vanilla return. Each job is one partition, so
// the pipeline's sector has one partition. Its proofs go by
// filecoin-proofs-api's names (StackedDrgWindow32GiBV1_2,
// StackedDrgWinning32GiBV1). It shares its Scheme's parameters and loads
// (Scheme.PoSt): once loaded, a PoSt circuit's keys stay resident, counted
// in the host's key bytes like every other circuit's.
type PoStScheme struct {
	kind[proofs.PoStProofInfo, *circuitOf[*PoStJob], *verifierOf[*PoStJob]]
}

var (
	_ scheme.Scheme     = (*PoStScheme)(nil)
	_ scheme.Admitter   = (*PoStScheme)(nil)
	_ scheme.Identifier = (*PoStScheme)(nil)
	_ scheme.KeyMaker   = (*PoStScheme)(nil)
)

// PoSt is Filecoin's PoSt scheme over the same parameters and loads.
func (s *Scheme) PoSt() *PoStScheme {
	return &PoStScheme{kind[proofs.PoStProofInfo, *circuitOf[*PoStJob], *verifierOf[*PoStJob]]{s.keyring, postKind}}
}

// postInfo is the registered PoSt proof of a profile: filecoin-proofs-api's
// name alone, so that one proof has one name in identities.
func postInfo(proof string) (proofs.PoStProofInfo, error) {
	info, err := proofs.PoStByName(proof)
	if err != nil {
		return info, err
	}
	if info.Name != proof {
		return info, fmt.Errorf("registered PoSt proof %q: c2flow names it by filecoin-proofs-api's name, %s", proof, info.Name)
	}
	return info, nil
}

// postSpec is a PoSt proof's circuit: window V1 and V1_2 of a size share
// it (their challenges differ, not the circuit), as they share Filecoin's
// parameter files.
func postSpec(info proofs.PoStProofInfo) (*spec, error) {
	s := circuit.PoStShapeOf(info)
	c, err := circuit.CountPoSt(s)
	if err != nil {
		return nil, err
	}
	params, _ := info.ParamsFiles()
	return &spec{
		name: info.Name, key: "post " + s.String(), sectorSize: info.SectorSize, numInputs: s.NumInputs(),
		// The published name ends in the SHA-256 of the public parameters:
		// a development setup replaces that with its own identifier.
		prefix:    params[:strings.LastIndexByte(params, '-')+1],
		published: strings.TrimSuffix(params, ".params"),
		shapeName: "post-" + info.Name,
		synth:     func(cs r1cs.System) error { return circuit.SynthesizePoSt(cs, s, nil) },
		system:    func() (*packed.Repeated, error) { return circuit.PoStSystem(s) },
		known:     Counts{Inputs: c.Inputs, Aux: c.Aux, Constraints: c.Constraints + c.Inputs}, knownOK: true,
	}, nil
}

// postKind is the PoSt proofs' kind (filecoin-proofs-api's names).
var postKind = &kindSpec[proofs.PoStProofInfo, *circuitOf[*PoStJob], *verifierOf[*PoStJob]]{
	name: "filecoin-post", what: "filecoin PoSt",
	// The chain bounds both, and an operator may send them to a cuzk
	// daemon. WinningPoSt alone is urgent (job.PriorityUrgent: the urgent
	// lanes and timeouts): its late proof is a lost block. WindowPoSt
	// comes next (a late one is a faulted partition), above PoRep and
	// SnapDeals.
	requests: []request{
		{scheme.KindWindowPoSt, scheme.Policy{Priorities: scheme.Priorities{High: 2, Normal: 2, Low: 2}, Due: postDue, Forwardable: true}},
		{scheme.KindWinningPoSt, scheme.Policy{Priorities: scheme.Priorities{High: job.PriorityUrgent, Normal: job.PriorityUrgent, Low: job.PriorityUrgent},
			Due: postDue, Forwardable: true}},
	},
	kindOf: func(info proofs.PoStProofInfo) string {
		if info.Type == proofs.PoStWinning {
			return scheme.KindWinningPoSt
		}
		return scheme.KindWindowPoSt
	},
	proofs:    proofs.PoStNames,
	recognize: func(h scheme.Head) bool { return h.Has("registered_post_proof") },
	info:      postInfo, spec: postSpec,
	maxInput: func(info proofs.PoStProofInfo) (int64, error) { return MaxPoStInputBytes(info), nil },
	circuit: func(_ proofs.PoStProofInfo, k *keys) *circuitOf[*PoStJob] {
		return &circuitOf[*PoStJob]{verifierOf[*PoStJob]{k: k, kind: "PoSt"}}
	},
	verifier: func(_ proofs.PoStProofInfo, k *keys) *verifierOf[*PoStJob] {
		return &verifierOf[*PoStJob]{k: k, kind: "PoSt"}
	},
}

// Identify implements scheme.Identifier: a PoStInput names its prover and
// proof; hints, where given, must agree (the sector hint with its first
// sector). Its vanilla proofs are verified natively; the canonical input
// (PoStInput.Encode of the decoding) is what is stored.
func (s *PoStScheme) Identify(ctx context.Context, name string, raw []byte, h scheme.Hints) (job.Ref, []byte, error) {
	in, err := DecodePoStInput(raw)
	if err != nil {
		return job.Ref{}, nil, err
	}
	if err := checkHints(h, in.ProverID, in.FirstSector(), "the PoSt input", "the PoSt input's first sector is"); err != nil {
		return job.Ref{}, nil, err
	}
	return s.bind(ctx, in)
}

// bind verifies in's vanilla proofs natively and gives its identity and
// canonical bytes.
func (s *PoStScheme) bind(ctx context.Context, in *PoStInput) (job.Ref, []byte, error) {
	raw, err := in.Encode()
	if err != nil {
		return job.Ref{}, nil, err
	}
	ref := job.NewRef(in.ProverID, in.FirstSector(), raw)
	ref.Proof = in.Proof.Name
	sec, err := NewPoStJob(in)
	if err != nil {
		return job.Ref{}, nil, err
	}
	if err := sec.Verify(ctx); err != nil {
		return job.Ref{}, nil, err
	}
	return ref, raw, nil
}

// Decode implements scheme.Scheme (DecodePoSt).
func (s *PoStScheme) Decode(raw []byte, id job.Ref) (scheme.Sector, error) {
	return s.DecodePoSt(raw, id)
}

// DecodePoSt decodes a PoStInput strictly (DecodePoStInput), checks that
// it is id's (its prover, first sector and, where id names one, its
// proof) and lays out its partition, verifying every opening natively
// (post.NewPartition): a bad one names its sector and challenge.
func (*PoStScheme) DecodePoSt(raw []byte, id job.Ref) (*PoStJob, error) {
	in, err := DecodePoStInput(raw)
	if err != nil {
		return nil, err
	}
	if id.Proof != "" && id.Proof != in.Proof.Name {
		return nil, fmt.Errorf("PoSt input: of %s, not of the declared %s: %w", in.Proof.Name, id.Proof, ErrBadPoStInput)
	}
	if p := hex.EncodeToString(in.ProverID[:]); p != id.ProverID {
		return nil, fmt.Errorf("PoSt input: of prover %s, not of the job's prover %s: %w", p, id.ProverID, ErrBadPoStInput)
	}
	if in.FirstSector() != id.SectorID {
		return nil, fmt.Errorf("PoSt input: first sector %d, not the job's %d: %w", in.FirstSector(), id.SectorID, ErrBadPoStInput)
	}
	return NewPoStJob(in)
}

// Admit implements scheme.Admitter for a PoSt request as Curio's
// WindowPoStCuzk and WinningPoStCuzk send it (curio lib/ffi/cuzk_funcs.go):
// registered_proof by go-state-types' number (a window proof for a window
// request, a winning proof for a winning one), sector_size where given
// the proof's, one vanilla proof a sector (GenerateSingleVanillaProof's
// bincode) sorted by sector number, the 32-byte randomness (masked here as
// Curio masks it), the miner and, for a window partition, its index. The
// vanilla proofs are bounded and counted before they are decoded, and
// verified natively: a bad one fails the request, naming its sector and
// challenge. The input stored is the canonical PoStInput.
func (s *PoStScheme) Admit(ctx context.Context, r scheme.Request) (job.Ref, []byte, error) {
	if r.RegisteredProof > math.MaxInt64 {
		return job.Ref{}, nil, fmt.Errorf("registered_proof %d: %w", r.RegisteredProof, proofs.ErrUnknownPoSt)
	}
	info, err := proofs.LookupPoSt(proofs.RegisteredPoStProof(r.RegisteredProof))
	if err != nil {
		return job.Ref{}, nil, fmt.Errorf("registered_proof: %w", err)
	}
	want := proofs.PoStWindow
	if r.Kind == scheme.KindWinningPoSt {
		want = proofs.PoStWinning
	}
	if info.Type != want {
		return job.Ref{}, nil, fmt.Errorf("registered_proof %d is %s (%s), not a %s proof", r.RegisteredProof, info.ChainName, info.Type, want)
	}
	if r.SectorSize != 0 && r.SectorSize != info.SectorSize {
		return job.Ref{}, nil, fmt.Errorf("sector_size %d, but registered_proof %d (%s) has %d-byte sectors", r.SectorSize, r.RegisteredProof, info.ChainName, info.SectorSize)
	}
	if len(r.Randomness) != 32 {
		return job.Ref{}, nil, fmt.Errorf("randomness: %d bytes, a PoSt's is 32", len(r.Randomness))
	}
	if len(r.Envelope) != 0 {
		return job.Ref{}, nil, errors.New("vanilla_proof is set: a PoSt request carries its sectors' vanilla proofs in vanilla_proofs, one a sector")
	}
	in := &PoStInput{Proof: info, ProverID: proofs.ProverID(r.MinerID), Randomness: post.MaskRandomness([32]byte(r.Randomness)), Partition: int(r.PartitionIndex)}
	if err := checkPartitionIndex(info, in.Partition); err != nil {
		return job.Ref{}, nil, err
	}
	if in.Vanilla, err = decodeVanillas(info, r.Vanilla, "vanilla_proofs"); err != nil {
		return job.Ref{}, nil, err
	}
	return s.bind(ctx, in)
}

// PoStJob is a decoded PoSt input, one job: a partition of up to
// SectorCount sectors (2349 for a 32GiB window), laid out as its circuit
// takes it, or a partition's public data alone (PoStPublic). Its job is
// named after its first sector (job.Ref).
type PoStJob struct {
	in   *PoStInput
	part *post.Partition
	// verified is set once the vanilla proofs have verified natively
	// (NewPoStJob lays them out and verifies them in one pass).
	verified bool
}

var _ scheme.Sector = (*PoStJob)(nil)

// NewPoStJob lays out in's partition and verifies every vanilla proof
// natively (post.NewPartition): an error names the sector and challenge
// and wraps ErrBadPoStInput.
func NewPoStJob(in *PoStInput) (*PoStJob, error) {
	p, err := post.NewPartition(in.Proof, in.Randomness, in.Partition, in.Vanilla)
	if err != nil {
		return nil, fmt.Errorf("%s partition %d of prover %x: %w: %w", in.Proof.Name, in.Partition, in.ProverID[:8], err, ErrBadPoStInput)
	}
	return &PoStJob{in: in, part: p, verified: true}, nil
}

// PoStPublic is a partition's public data alone, without vanilla proofs:
// what verifying its proof needs (verify_window_post's chunk k of the
// replicas, verify_winning_post's one sector). Its Verify is an error.
func PoStPublic(info proofs.PoStProofInfo, proverID, randomness [32]byte, k int, replicas []post.PublicSector) (*PoStJob, error) {
	if err := checkPartitionIndex(info, k); err != nil {
		return nil, err
	}
	for i := 1; i < len(replicas); i++ {
		if replicas[i].ID <= replicas[i-1].ID {
			return nil, fmt.Errorf("%s: replica %d (sector %d) after sector %d: replicas are sorted by sector number, each once", info.Name, i, replicas[i].ID, replicas[i-1].ID)
		}
	}
	p, err := post.NewPublicPartition(info, randomness, k, slices.Clone(replicas))
	if err != nil {
		return nil, err
	}
	return &PoStJob{in: &PoStInput{Proof: info, ProverID: proverID, Randomness: randomness, Partition: k}, part: p}, nil
}

// Input is the sector's decoded input (no vanilla proofs for PoStPublic's).
func (s *PoStJob) Input() *PoStInput { return s.in }

// String names the job in errors.
func (s *PoStJob) String() string {
	if s.in.Proof.Type == proofs.PoStWinning {
		return fmt.Sprintf("%s of prover %x", s.in.Proof.Name, s.in.ProverID[:8])
	}
	return fmt.Sprintf("%s partition %d of prover %x", s.in.Proof.Name, s.in.Partition, s.in.ProverID[:8])
}

func (s *PoStJob) partitionID(int) string {
	return prover.PartitionID(hex.EncodeToString(s.in.ProverID[:]), s.in.FirstSector(), s.in.Partition)
}

// Proof implements scheme.Sector: the registered PoSt proof's name.
func (s *PoStJob) Proof() string { return s.in.Proof.Name }

// Partitions implements scheme.Sector: a job is one partition.
func (s *PoStJob) Partitions() int { return 1 }

// C2Bytes implements scheme.Sector: one 192-byte proof.
func (s *PoStJob) C2Bytes() int64 { return groth.ProofSize }

// Verify implements scheme.Sector: the vanilla proofs verified natively
// when the sector was laid out (NewPoStJob); a public-only sector has
// none to verify.
func (s *PoStJob) Verify(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if !s.verified {
		return fmt.Errorf("%s: public data only, no vanilla proofs: %w", s, ErrBadPoStInput)
	}
	return nil
}

// PublicInputs are the partition's public inputs, from its public data
// (post.Partition.PublicInputs); k is the pipeline's one partition, 0.
func (s *PoStJob) PublicInputs(k int) ([]fr.Element, error) {
	if k != 0 {
		return nil, fmt.Errorf("%s: partition %d of a one-partition job", s, k)
	}
	return s.part.PublicInputs()
}

// circuitSpec is the PoSt circuit of the job's proof.
func (s *PoStJob) circuitSpec() (*spec, error) { return postSpec(s.in.Proof) }

// builder is the partition's witness from its verified vanilla proofs
// (post.Partition.Witness) through the PoSt circuit.
func (s *PoStJob) builder(int) (func(*r1cs.Witness) error, error) {
	if !s.verified {
		return nil, fmt.Errorf("public data only, no vanilla proofs: %w", ErrBadPoStInput)
	}
	return func(wit *r1cs.Witness) error {
		w, err := s.part.Witness()
		if err != nil {
			return err
		}
		return circuit.SynthesizePoSt(wit, s.part.Shape(), w)
	}, nil
}
