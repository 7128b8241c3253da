package snark

import "context"

// wiring is one Filecoin kind's path from a proof name to its circuit and
// verifier over the shared keyring: its spec of the name (with what else
// its types need of the name, M), and its circuit and verifier types over
// keys. Seal, update and PoSt differ only here; loading a circuit, its
// keyless synthesis and its verifier are the same three steps for all.
type wiring[M, C, V any] struct {
	spec     func(proof string) (M, *spec, error)
	circuit  func(M, *keys) C
	verifier func(M, *keys) V
}

// load is proof's circuit with its keys, loaded on first use and kept
// (keyring.circuit).
func (w wiring[M, C, V]) load(ctx context.Context, r *keyring, proof string) (C, error) {
	var zero C
	m, sp, err := w.spec(proof)
	if err != nil {
		return zero, err
	}
	k, err := r.circuit(ctx, sp)
	if err != nil {
		return zero, err
	}
	return w.circuit(m, k), nil
}

// synthesis is proof's circuit without its keys, by its known counts
// (synthesisKeys), so that a synthesis-only host loads no proving key; a
// proof without known counts loads its circuit.
func (w wiring[M, C, V]) synthesis(ctx context.Context, r *keyring, proof string) (C, error) {
	var zero C
	m, sp, err := w.spec(proof)
	if err != nil {
		return zero, err
	}
	if k, ok := synthesisKeys(sp); ok {
		return w.circuit(m, k), nil
	}
	return w.load(ctx, r, proof)
}

// verify is proof's verifier: over the loaded circuit's keys where this
// process has loaded them, else the verifying key alone (keyring.verifier).
func (w wiring[M, C, V]) verify(ctx context.Context, r *keyring, proof string) (V, error) {
	var zero V
	m, sp, err := w.spec(proof)
	if err != nil {
		return zero, err
	}
	k, err := r.verifier(ctx, sp)
	if err != nil {
		return zero, err
	}
	return w.verifier(m, k), nil
}
