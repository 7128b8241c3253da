package snark

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/c2flow/c2flow/scheme"
)

// kindSpec is one Filecoin proof kind (seal, update, PoSt) as data: its
// names, how its proof names parse (info: I), its circuit (spec), its
// input bound, and its circuit and verifier types over the keyring's keys
// (C, V). The kinds differ only here and in decoding their inputs; kind
// does the rest alike for all.
type kindSpec[I any, C scheme.Circuit, V scheme.Verifier] struct {
	name string // the scheme's name
	// what names the kind's circuits in errors ("filecoin update").
	what     string
	requests []request // the request kinds it admits (scheme.Admitter)
	// kindOf is the request kind of a job of a proof (nil: the first
	// request's, where the kind admits one).
	kindOf    func(I) string
	proofs    func() []string
	recognize func(scheme.Head) bool
	info      func(proof string) (I, error)
	spec      func(I) (*spec, error)
	maxInput  func(I) (int64, error)
	circuit   func(I, *keys) C
	verifier  func(I, *keys) V
}

// request is a request kind a Filecoin kind admits and how the kind
// serves it.
type request struct {
	kind   string
	policy scheme.Policy
}

// porepClass is the priorities of hours of work that no chain deadline
// bounds at this scale (PoRep, SnapDeals): below the PoSt kinds, which
// the chain bounds.
var porepClass = scheme.Priorities{High: 3, Normal: 3, Low: 4}

// postDue is a PoSt's deadline where its caller gives none: Curio's
// default ProveTimeout (lib/cuzk/client.go proveTimeout, [Cuzk]
// ProveTimeout).
const postDue = 30 * time.Minute

// specOf is proof's info and circuit.
func (d *kindSpec[I, C, V]) specOf(proof string) (I, *spec, error) {
	info, err := d.info(proof)
	if err != nil {
		return info, nil, fmt.Errorf("%s circuit: %w", d.what, err)
	}
	sp, err := d.spec(info)
	if err != nil {
		return info, nil, fmt.Errorf("%s circuit %s: %w", d.what, proof, err)
	}
	return info, sp, nil
}

// circuitOf is the circuit of proof where it is one of the kind's
// names (ok).
func (d *kindSpec[I, C, V]) circuitOf(proof string) (*spec, bool, error) {
	if _, err := d.info(proof); err != nil {
		return nil, false, nil
	}
	_, sp, err := d.specOf(proof)
	return sp, true, err
}

// specTable is every kind's circuits, by proof name: what the parameter
// machinery (the development setup) takes a proof name of any kind by.
var specTable = []interface {
	circuitOf(proof string) (*spec, bool, error)
}{sealKind, updateKind, postKind}

// specOf is the circuit of a seal proof's, an update profile's or a PoSt
// proof's name.
func specOf(proof string) (*spec, error) {
	for _, k := range specTable {
		if sp, ok, err := k.circuitOf(proof); ok {
			return sp, err
		}
	}
	// None owns it: the seal proofs' error names the supported ones.
	_, _, err := sealKind.specOf(proof)
	return nil, err
}

// kind is a Filecoin kind's scheme over the keyring that the kinds of a
// process share (Scheme, UpdateScheme and PoStScheme embed one): what
// every kind does the same way with its kindSpec.
type kind[I any, C scheme.Circuit, V scheme.Verifier] struct {
	*keyring
	spec *kindSpec[I, C, V]
}

// Name implements scheme.Scheme.
func (k kind[I, C, V]) Name() string { return k.spec.name }

// Proofs implements scheme.Scheme: the kind's registered proof names.
func (k kind[I, C, V]) Proofs() []string { return k.spec.proofs() }

// Owns implements scheme.Scheme.
func (k kind[I, C, V]) Owns(proof string) bool {
	_, err := k.spec.info(proof)
	return err == nil
}

// Recognize implements scheme.Identifier: a file of the kind's input.
func (k kind[I, C, V]) Recognize(h scheme.Head) bool { return k.spec.recognize(h) }

// C2Ext implements scheme.Identifier: Filecoin's proof bytes, the
// partitions' 192-byte proofs concatenated.
func (kind[I, C, V]) C2Ext() string { return ".proof" }

// Kinds implements scheme.Admitter: the request kinds of the kind.
func (k kind[I, C, V]) Kinds() []string {
	out := make([]string, len(k.spec.requests))
	for i, r := range k.spec.requests {
		out[i] = r.kind
	}
	return out
}

// Policy implements scheme.Admitter: the declared policy of request kind
// (the zero policy, which scheme.Policy.Check refuses, for a kind it does
// not admit).
func (k kind[I, C, V]) Policy(kind string) scheme.Policy {
	for _, r := range k.spec.requests {
		if r.kind == kind {
			return r.policy
		}
	}
	return scheme.Policy{}
}

// KindOf implements scheme.Admitter: the request kind of a job of proof
// ("" for a proof not the kind's).
func (k kind[I, C, V]) KindOf(proof string) string {
	info, err := k.spec.info(proof)
	switch {
	case err != nil || len(k.spec.requests) == 0:
		return ""
	case k.spec.kindOf != nil:
		return k.spec.kindOf(info)
	}
	return k.spec.requests[0].kind
}

// MaxC1Bytes implements scheme.Scheme: the bound of an input of proof
// (c1.MaxInputSize, MaxUpdateInputBytes, MaxPoStInputBytes).
func (k kind[I, C, V]) MaxC1Bytes(proof string) (int64, error) {
	info, err := k.spec.info(proof)
	if err != nil {
		return 0, err
	}
	return k.spec.maxInput(info)
}

// EnsureKeys implements scheme.KeyMaker. Filecoin's real parameters are
// the operator's (Filecoin's published files, installed on the hosts or
// in their storage): without dev there is nothing to make, and a host
// that lacks them says so (scheme.ErrNoKeys) when it loads the circuit.
// With dev, a DEVELOPMENT setup of proof (2KiB and 8MiB; from the
// machine's setup cache when it has one) is written in Filecoin's format
// to the parameter directory and published to the Remote under
// RemotePrefix, where hosts without the files find them
// (paramfiles.Store.PublishDev). notes is told what a user waits for.
func (k kind[I, C, V]) EnsureKeys(ctx context.Context, proof string, dev bool, notes io.Writer) error {
	if _, err := k.spec.info(proof); err != nil {
		return err
	}
	return k.ensureKeys(ctx, proof, dev, notes)
}

// PartitionBytes implements scheme.Scheme: Counts.Bytes of the circuit's
// known counts, else of the loaded circuit's.
func (k kind[I, C, V]) PartitionBytes(ctx context.Context, proof string) (int64, error) {
	_, sp, err := k.spec.specOf(proof)
	if err != nil {
		return 0, err
	}
	return k.partitionBytes(ctx, sp)
}

// Circuit implements scheme.Scheme: proof's circuit with its keys (its
// .params/.vk located and checked: paramfiles.Store.Locate), loaded on
// first use and kept (keyring.circuit): proofs of one circuit share one
// load. Missing parameters wrap scheme.ErrNoKeys.
func (k kind[I, C, V]) Circuit(ctx context.Context, proof string) (scheme.Circuit, error) {
	return asInterface[scheme.Circuit](k.load(ctx, proof))
}

// Synthesis implements scheme.Synthesizer: proof's circuit without its
// keys, by its known counts (synthesisKeys), so that a synthesis-only
// host loads no proving key; a proof without known counts loads its
// circuit.
func (k kind[I, C, V]) Synthesis(ctx context.Context, proof string) (scheme.Synthesis, error) {
	info, sp, err := k.spec.specOf(proof)
	if err != nil {
		return nil, err
	}
	if ks, ok := synthesisKeys(sp); ok {
		return k.spec.circuit(info, ks), nil
	}
	return k.Circuit(ctx, proof)
}

// Verifier implements scheme.Scheme: over the loaded circuit's keys where
// this process has loaded them, else the proof's verifying key alone
// (keyring.verifier).
func (k kind[I, C, V]) Verifier(ctx context.Context, proof string) (scheme.Verifier, error) {
	return asInterface[scheme.Verifier](k.verify(ctx, proof))
}

// VerifierWithKey is proof's verifier under the verifying key file at
// path, one the operator names (verify-post --vk) instead of one the
// parameter store locates: its IC count checked against the circuit's
// inputs before its points are read, then the kind's own verifier, so a
// named key is used exactly as a located one.
func (k kind[I, C, V]) VerifierWithKey(ctx context.Context, proof, path string) (scheme.Verifier, error) {
	info, sp, err := k.spec.specOf(proof)
	if err != nil {
		return nil, err
	}
	sums, err := k.store.Check(ctx, path, "")
	if err != nil {
		return nil, fmt.Errorf("%s verifying key: %w", proof, err)
	}
	vk, err := readVK(path, sp.numInputs)
	if err != nil {
		return nil, fmt.Errorf("%s verifying key: %w", proof, err)
	}
	ks := &keys{key: sp.key, files: Files{VK: path}, vk: vk, pvk: vk.Prepare(), digests: scheme.Digests{VK: sums.SHA256}}
	return k.spec.verifier(info, ks), nil
}

// asInterface is v as the interface R, and a nil R where err is set: a
// nil pointer in a non-nil interface is never returned.
func asInterface[R, T any](v T, err error) (R, error) {
	var r R
	if err != nil {
		return r, err
	}
	return any(v).(R), nil
}

// load is proof's circuit with its keys (Circuit).
func (k kind[I, C, V]) load(ctx context.Context, proof string) (C, error) {
	return withKeys(ctx, k, proof, k.circuit, k.spec.circuit)
}

// verify is proof's verifier (Verifier).
func (k kind[I, C, V]) verify(ctx context.Context, proof string) (V, error) {
	return withKeys(ctx, k, proof, k.verifier, k.spec.verifier)
}

// withKeys is build of proof's info and the keys get has of its circuit
// (keyring.circuit or keyring.verifier).
func withKeys[R, I any, C scheme.Circuit, V scheme.Verifier](ctx context.Context, k kind[I, C, V], proof string,
	get func(context.Context, *spec) (*keys, error), build func(I, *keys) R) (R, error) {
	var zero R
	info, sp, err := k.spec.specOf(proof)
	if err != nil {
		return zero, err
	}
	ks, err := get(ctx, sp)
	if err != nil {
		return zero, err
	}
	return build(info, ks), nil
}
