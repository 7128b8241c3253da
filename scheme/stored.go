package scheme

import (
	"context"
	"errors"
	"fmt"

	"github.com/c2flow/c2flow/job"
	"github.com/c2flow/c2flow/storage"
)

// ErrBadInput is wrapped by LoadSector's errors that are the stored
// input's fault (a proof no scheme owns, an object over its proof's bound
// or not the bytes its identity pins, bytes that do not decode as the
// sector's): reading it again cannot succeed.
var ErrBadInput = errors.New("bad input")

// ErrBadStored is wrapped by StoredC2's error when the stored proof is
// there but is not to be trusted: corrupt, or it does not verify.
var ErrBadStored = errors.New("stored proof not trusted")

// LoadSector is the one load path of a sector's input, for the worker and
// the gateway alike: the scheme owning ref's declared proof bounds the
// object's size before a byte is read, its bytes must be the ones ref's
// digest pins (an object replaced after submission is never proved), and
// it is decoded bound to ref's prover and sector. It returns the input's
// size too. A missing object or an unreachable store is a plain storage
// error naming the key: a wrong configuration, not bad input.
func (s Set) LoadSector(ctx context.Context, store *storage.Store, ref job.Ref) (Sector, int64, error) {
	sc, err := s.For(ref.Proof)
	if err != nil {
		return nil, 0, fmt.Errorf("declared proof: %w: %w", ErrBadInput, err)
	}
	limit, err := sc.MaxC1Bytes(ref.Proof)
	if err != nil {
		return nil, 0, fmt.Errorf("declared proof: %w: %w", ErrBadInput, err)
	}
	size, err := store.Size(ctx, storage.C1Key(ref))
	if err != nil {
		return nil, 0, fmt.Errorf("read the input of %s: %w", ref, err)
	}
	if size > limit {
		proof := ref.Proof
		if proof == "" {
			proof = sc.Name()
		}
		return nil, 0, fmt.Errorf("(file): the object has %d bytes, a %s input at most %d: %w", size, proof, limit, ErrBadInput)
	}
	raw, err := store.GetC1(ctx, ref)
	switch {
	case errors.Is(err, storage.ErrDigest), errors.Is(err, storage.ErrChecksum):
		return nil, 0, fmt.Errorf("%w: %w", ErrBadInput, err)
	case err != nil:
		return nil, 0, fmt.Errorf("read the input of %s: %w", ref, err)
	}
	sec, err := sc.Decode(raw, ref)
	if err != nil {
		return nil, 0, fmt.Errorf("%w: %w", ErrBadInput, err)
	}
	return sec, int64(len(raw)), nil
}

// VerifierOf returns what verifies sec's proofs: its scheme's verifier
// (the verifying key alone where the proving key is not loaded). Missing
// keys wrap ErrNoKeys.
func (s Set) VerifierOf(ctx context.Context, sec Sector) (Verifier, error) {
	sc, err := s.For(sec.Proof())
	if err != nil {
		return nil, err
	}
	v, err := sc.Verifier(ctx, sec.Proof())
	if err != nil {
		return nil, fmt.Errorf("verifying key of %s: %w", sec.Proof(), err)
	}
	return v, nil
}

// StoredC2 is the one check of a stored proof, for the worker's lookup and
// the gateway alike: the manifest must name ref and the proof's digest
// (storage.Store.GetC2), and the proof must verify against sec, ref's
// decoded input, under its proof's verifying key. A proof that is there
// but fails either wraps ErrBadStored; none stored wraps
// storage.ErrNotFound.
func (s Set) StoredC2(ctx context.Context, store *storage.Store, ref job.Ref, sec Sector) (storage.Manifest, []byte, error) {
	m, proof, err := store.GetC2(ctx, ref)
	switch {
	case errors.Is(err, storage.ErrDigest), errors.Is(err, storage.ErrChecksum):
		return m, nil, fmt.Errorf("%w: %w", ErrBadStored, err)
	case err != nil:
		return m, nil, err
	}
	v, err := s.VerifierOf(ctx, sec)
	if err != nil {
		return m, nil, err
	}
	if err := v.VerifyC2(sec, proof); err != nil {
		return m, nil, fmt.Errorf("%w: the stored proof does not verify: %w", ErrBadStored, err)
	}
	return m, proof, nil
}
