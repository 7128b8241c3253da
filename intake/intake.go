// Package intake turns C1 bytes into a sector's identity before anything
// is proved: it decodes them, binds them to their prover and sector, runs
// the native check and uploads them content-addressed. `c2flow submit`
// (files and their hints) and the cuzk gateway (Curio's requests) take C1s
// in through it, so both refuse the same inputs with the same errors.
package intake

import (
	"context"
	"fmt"

	"github.com/c2flow/c2flow/batch"
	"github.com/c2flow/c2flow/filecoin/c2"
	"github.com/c2flow/c2flow/job"
	"github.com/c2flow/c2flow/scheme"
	"github.com/c2flow/c2flow/scheme/testscheme"
	"github.com/c2flow/c2flow/storage"
)

// Schemes are the schemes a C1 file may be of, for decoding and
// identification only: no parameters are read.
func Schemes() scheme.Set {
	return append(scheme.Set{testscheme.New(nil)}, c2.Schemes(c2.Params{}, nil)...)
}

// Identify is `c2flow submit`'s batch.Identify: the scheme whose format
// the file is (Set.Recognize) gives its identity, bound to its prover and
// sector and checked natively (Scheme.Identify).
func Identify(set scheme.Set, hints scheme.Hints) batch.Identify {
	return func(ctx context.Context, path string, raw []byte) (job.SectorRef, error) {
		_, ref, err := set.Identify(ctx, path, raw, hints)
		return ref, err
	}
}

// Upload stores a C1 that Identify or Curio accepted under its sector's
// content-addressed key (conditionally: an object there has these bytes).
func Upload(ctx context.Context, store *storage.Store, ref job.SectorRef, raw []byte) error {
	if err := store.PutC1(ctx, ref.Identity(), raw); err != nil {
		return fmt.Errorf("upload the C1 of %s: %w", ref, err)
	}
	return nil
}
