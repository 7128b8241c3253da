// Package scheme is the seam between c2flow's pipeline and a proof scheme:
// c2flow's own test scheme (package porep, Poseidon2 binary trees) and
// Filecoin's StackedDrg PoRep (packages under filecoin/). The pipeline
// carries a sector's proof name from submission to storage and asks the
// Set for the scheme that owns it; nothing in the workers or workflows
// knows which scheme it is running.
//
// A scheme decodes and checks a C1 (Decode, Sector.Verify) and gives the
// circuit of a proof (Circuit): its split Groth16 prover, the synthesis of
// one partition into a prover.Solution, the partition proof's verification
// and the C2 format (the bytes a user hands on: c2flow's own C2 file, or
// Filecoin's concatenated 192-byte proofs).
package scheme

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	groth16bls "github.com/consensys/gnark/backend/groth16/bls12-381"

	"github.com/c2flow/c2flow/job"
	"github.com/c2flow/c2flow/prover"
)

// ErrNoKeys is wrapped by Circuit when the proof's parameters are not
// where the scheme looks for them (not made, not published, not
// downloaded): an operator's fix, not the sector's fault.
var ErrNoKeys = errors.New("no proving keys")

// Hints are what a user says of a C1 file that the file itself may not:
// whose sector it is (a prover id in hex, a sector number in decimal).
type Hints struct {
	ProverID, SectorID string
}

// Given reports whether any hint is set.
func (h Hints) Given() bool { return h.ProverID != "" || h.SectorID != "" }

// Scheme is one family of proofs as the pipeline runs them: inputs
// decoded bound to their sector, circuits with their keys, verifiers.
// What only a command needs of a scheme (files to submit, circuit info,
// key set-up, test sectors) are the optional interfaces below, found by
// the commands that need them.
type Scheme interface {
	// Name names the scheme in messages ("c2flow", "filecoin").
	Name() string
	// Proofs names every proof or profile the scheme owns, for messages.
	Proofs() []string
	// Owns reports whether proof (a registered proof or profile name) is
	// one of this scheme's.
	Owns(proof string) bool
	// MaxC1Bytes bounds the size of an input of proof, checked before it
	// is read, so a foreign object cannot exhaust a worker's memory.
	MaxC1Bytes(proof string) (int64, error)
	// Decode decodes raw strictly and checks that it is id's sector. Every
	// error is the input's fault: the pipeline fails the sector, not
	// retries.
	Decode(raw []byte, id job.Ref) (Sector, error)
	// PartitionBytes is the most one partition's synthesis of proof
	// holds while it runs, known without loading its keys: what a host's
	// budget reserves for it (the witness it leaves holds its packed
	// Solution.Bytes, at most this).
	PartitionBytes(ctx context.Context, proof string) (int64, error)
	// Circuit returns proof's circuit with its keys, loaded on first use
	// and kept. A missing key wraps ErrNoKeys.
	Circuit(ctx context.Context, proof string) (Circuit, error)
	// Verifier returns what checks and stores proof's C2s: the circuit
	// itself where this process has it loaded, else a verifier over the
	// verifying key alone (a host that only stores and looks up C2s must
	// not load a 32GiB circuit's proving key for it). A missing key wraps
	// ErrNoKeys.
	Verifier(ctx context.Context, proof string) (Verifier, error)
}

// Identifier is a scheme whose input files a user submits (c2flow
// submit, prove, verify).
type Identifier interface {
	Scheme
	// Recognize reports whether a file whose head (ReadHead of its first
	// HeadBytes) is h is in this scheme's format: Set.Recognize routes a
	// file by it.
	Recognize(h Head) bool
	// Identify gives the identity of the file name whose bytes are raw (a
	// file this scheme Recognizes): its prover, sector and proof, bound
	// and checked natively, and the input's canonical bytes, what is
	// stored under the identity. The canonical bytes are a deterministic
	// encoding of the decoded content, and the identity's digest is
	// theirs: the same content in other bytes (whitespace, key order, a
	// wrapper) is the same sector identity, and Decode reads them. Hints
	// say what the file may not (whose sector it is); a scheme whose files
	// name their sector refuses them rather than ignore them. Every error
	// is the file's or the hints' fault.
	Identify(ctx context.Context, name string, raw []byte, h Hints) (job.Ref, []byte, error)
	// C2Ext is the file name extension of this scheme's C2 files (".c2",
	// ".proof").
	C2Ext() string
}

// InfoWriter is a scheme that describes its circuits (c2flow circuit
// info).
type InfoWriter interface {
	// WriteInfo writes the sizes of one partition of proof's circuit for a
	// person: constraints, variables, synthesis memory; no keys are
	// needed.
	WriteInfo(w io.Writer, proof string) error
}

// KeyMaker is a scheme whose keys a submitter or a development stack sets
// up (c2flow submit, dev, demo).
type KeyMaker interface {
	// EnsureKeys makes sure the hosts find proof's keys where the scheme
	// keeps them: keys only this machine has are published; with dev, a
	// proof with none gets a single-party development setup here (never
	// for real sectors); without, a missing key is an error naming the
	// operator's fix, wrapping ErrNoKeys. notes is told what a user waits
	// for.
	EnsureKeys(ctx context.Context, proof string, dev bool, notes io.Writer) error
}

// Synthesis is what synthesizing a proof's partitions needs of its
// circuit; a Circuit is one.
type Synthesis interface {
	// PartitionBytes is the most one partition's synthesis holds.
	PartitionBytes() int64
	// Synthesize solves partition k of s into its packed assignment.
	Synthesize(ctx context.Context, s Sector, k int) (*prover.Solution, error)
}

// Synthesizer is a scheme whose partitions synthesize without the
// proof's proving key: a synthesis-only host (worker --roles synth) then
// never reads one (a 32GiB seal proof's .params is about 47 GiB; the
// synthesis needs the circuit's counts and the sector alone).
type Synthesizer interface {
	Synthesis(ctx context.Context, proof string) (Synthesis, error)
}

// TestSealer is a scheme that makes test sectors (c2flow seal, demo).
type TestSealer interface {
	// SealTest seals the test sectors r asks for and returns the input
	// files it wrote, in sector order.
	SealTest(ctx context.Context, r SealRequest) ([]string, error)
}

// As returns sc as the optional interface T, or an error naming what the
// scheme lacks.
func As[T any](sc Scheme, what string) (T, error) {
	t, ok := sc.(T)
	if !ok {
		return t, fmt.Errorf("the %s scheme has no %s", sc.Name(), what)
	}
	return t, nil
}

// Verifier assembles and verifies a proof's C2s.
type Verifier interface {
	// Assemble joins the partitions' encoded proofs, in order, into the
	// sector's C2 bytes; an error names the partition at fault.
	Assemble(s Sector, parts [][]byte) ([]byte, error)
	// VerifyC2 checks a sector's C2 bytes: every partition proof against
	// s's public inputs.
	VerifyC2(s Sector, c2 []byte) error
	// Digests identify the keys (manifests pin them); a verifier over the
	// verifying key alone leaves PK (and the circuit's, if it has not
	// recorded it) empty.
	Digests() Digests
}

// Sector is a decoded C1 of one sector.
type Sector interface {
	// Proof is the sector's proof name (its scheme owns it).
	Proof() string
	// Partitions is the number of partition proofs of the sector's C2.
	Partitions() int
	// C2Bytes is the size of the sector's C2: a longer file is not its
	// C2, refused before it is read.
	C2Bytes() int64
	// Verify checks every vanilla proof natively; an error names the first
	// failure (partition, challenge, node) and is the C1's fault.
	Verify(ctx context.Context) error
	// String names the job in messages ("sector 7"): a command prints it.
	String() string
}

// Circuit is one proof's circuit and keys.
type Circuit interface {
	// Prover is the split Groth16 prover over the circuit's keys.
	Prover() *prover.Prover
	// PartitionBytes is the most one partition's synthesis holds while
	// it runs: what a host's budget reserves for it.
	PartitionBytes() int64
	// Synthesize solves partition k of s (checked by Verify) into its
	// packed assignment (a, b and c are evaluated at the device from the
	// prover's Keys.System).
	Synthesize(ctx context.Context, s Sector, k int) (*prover.Solution, error)
	// VerifyPartition checks partition k's proof against s's public inputs.
	VerifyPartition(s Sector, k int, proof *groth16bls.Proof) error
	// EncodePartition is a partition proof as it crosses Temporal and as
	// Assemble takes it.
	EncodePartition(proof *groth16bls.Proof) ([]byte, error)
	// Verifier: Assemble, VerifyC2, Digests.
	Verifier
}

// Digests identify a circuit's keys: the hex SHA-256 of the verifying and
// proving key files and the circuit's digest.
type Digests struct {
	VK, PK, Circuit string
}

// Set is the schemes a worker runs; the first that owns a proof serves it.
type Set []Scheme

// For returns the scheme that owns proof; two schemes owning it is an
// error, never the first one's silently (Check finds it at start).
func (s Set) For(proof string) (Scheme, error) {
	var owner Scheme
	for _, sc := range s {
		if !sc.Owns(proof) {
			continue
		}
		if owner != nil {
			return nil, fmt.Errorf("proof %q: owned by two schemes, %s and %s", proof, owner.Name(), sc.Name())
		}
		owner = sc
	}
	if owner != nil {
		return owner, nil
	}
	var known []string
	for _, sc := range s {
		known = append(known, sc.Name()+": "+strings.Join(sc.Proofs(), ", "))
	}
	return nil, fmt.Errorf("proof %q: not a proof of any scheme this worker runs (%s)", proof, strings.Join(known, "; "))
}

// Check checks that every proof a scheme lists is its own and no other
// scheme's, and that every request kind has one Admitter, which declares
// a sound Policy for it and files each of its proofs under one of its
// kinds (KindOf): a set where two schemes claim one name would
// serve it by whichever came first.
func (s Set) Check() error {
	var errs []error
	for i, sc := range s {
		if len(sc.Proofs()) == 0 {
			errs = append(errs, fmt.Errorf("scheme %s lists no proof", sc.Name()))
		}
		for _, p := range sc.Proofs() {
			if !sc.Owns(p) {
				errs = append(errs, fmt.Errorf("scheme %s lists proof %q but does not own it", sc.Name(), p))
			}
			for j, other := range s {
				if j != i && other.Owns(p) {
					errs = append(errs, fmt.Errorf("proof %q: scheme %s lists it and scheme %s owns it too", p, sc.Name(), other.Name()))
				}
			}
		}
	}
	kinds := map[string]string{}
	for _, sc := range s {
		if a, ok := sc.(Admitter); ok {
			for _, k := range a.Kinds() {
				if prev, dup := kinds[k]; dup {
					errs = append(errs, fmt.Errorf("request kind %q: admitted by schemes %s and %s", k, prev, sc.Name()))
				}
				kinds[k] = sc.Name()
				if err := a.Policy(k).Check(); err != nil {
					errs = append(errs, fmt.Errorf("scheme %s, request kind %q: %w", sc.Name(), k, err))
				}
			}
			for _, p := range sc.Proofs() {
				if k := a.KindOf(p); !slices.Contains(a.Kinds(), k) {
					errs = append(errs, fmt.Errorf("scheme %s: proof %q is of request kind %q, not one it admits (%s)", sc.Name(), p, k, strings.Join(a.Kinds(), ", ")))
				}
			}
		}
	}
	return errors.Join(errs...)
}

// EnsureKeys is Scheme.EnsureKeys of each proof, once each, by the scheme
// that owns it.
func (s Set) EnsureKeys(ctx context.Context, proofs []string, dev bool, notes io.Writer) error {
	seen := map[string]bool{}
	for _, p := range proofs {
		if seen[p] {
			continue
		}
		seen[p] = true
		sc, err := s.For(p)
		if err != nil {
			return err
		}
		km, err := As[KeyMaker](sc, "keys to set up")
		if err != nil {
			return err
		}
		if err := km.EnsureKeys(ctx, p, dev, notes); err != nil {
			return err
		}
	}
	return nil
}

// names lists the set's schemes for messages.
func (s Set) names() string {
	names := make([]string, len(s))
	for i, sc := range s {
		names[i] = sc.Name()
	}
	return strings.Join(names, ", ")
}
