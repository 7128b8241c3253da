package testscheme

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/c2flow/c2flow/scheme"
	"github.com/c2flow/c2flow/scheme/testscheme/params"
	"github.com/c2flow/c2flow/scheme/testscheme/porep"
)

// EnsureKeys implements scheme.Scheme: hosts read a profile's keys from
// the scheme's store, so a set found only in the local cache is
// published (vk last: its presence says the set is complete). A profile
// without keys for its current circuit gets, with dev, a development
// setup here (one process makes it; hosts only ever load keys, never race
// two setups), and notes says it waits for it; without dev it is an
// error naming the operator's fix (wrapping scheme.ErrNoKeys).
func (sc *Scheme) EnsureKeys(ctx context.Context, proof string, dev bool, notes io.Writer) error {
	p, err := porep.LookupProfile(proof)
	if err != nil {
		return err
	}
	missing, err := Missing(ctx, sc.keys, p)
	if err != nil {
		return err
	}
	if missing && !dev {
		return fmt.Errorf("%w: no proving keys for profile %s in storage or the local cache: run `c2flow circuit setup --profile %s` with the same --s3-* flags first, or pass --dev-setup to make development keys here", scheme.ErrNoKeys, p.Name, p.Name)
	}
	t := time.Now()
	if missing {
		fmt.Fprintf(notes, "   no keys for the %s circuit yet: making development keys once (single-party setup, never for real sectors) ...", p.Name)
	}
	k, err := params.Load(ctx, sc.keys, p, sc.log) // read, or set up once here
	if missing {
		if err != nil {
			fmt.Fprintln(notes)
		} else {
			fmt.Fprintf(notes, " done in %v\n", time.Since(t).Round(time.Millisecond))
		}
	}
	if err != nil {
		return err
	}
	if c, ok := sc.keys.(params.Cache); ok && c.Remote != nil {
		if err := c.Publish(ctx, k.Prefix(), "r1cs", "pk", params.DigestsFile, "vk"); err != nil {
			return fmt.Errorf("publish the %s keys: %w", p.Name, err)
		}
	}
	return nil
}

// Missing reports whether store lacks p's keys for its current circuit
// (a complete set has its vk: it is written last); keys of an older
// circuit of the profile do not count.
func Missing(ctx context.Context, store params.Store, p porep.Profile) (bool, error) {
	_, digest, err := params.Compile(p)
	if err != nil {
		return false, err
	}
	rc, err := store.Open(ctx, params.Prefix(p.Name, digest)+"vk")
	switch {
	case errors.Is(err, params.ErrNotFound):
		return true, nil
	case err != nil:
		return false, fmt.Errorf("look for the %s keys: %w", p.Name, err)
	}
	rc.Close()
	return false, nil
}
