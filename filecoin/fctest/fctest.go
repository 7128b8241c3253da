// Package fctest gives the Filecoin tests their shared development setups.
package fctest

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/c2flow/c2flow/filecoin/groth"
	"github.com/c2flow/c2flow/filecoin/r1cs"
	"github.com/c2flow/c2flow/internal/testdirs"
	"github.com/c2flow/c2flow/prover"
)

// Setups is the cache of development setups of Filecoin circuits the tests
// share: the machine-wide r1cs.DefaultSetupCache, not under the test
// parameter cache, because the 2KiB setup takes over a minute to make and
// a fresh clone's tests should find the one this machine already made.
func Setups() r1cs.SetupCache {
	return r1cs.DefaultSetupCache()
}

// DevParams is the test directory of development setups in Filecoin's
// format (filecoin/snark DevSetup writes them there from Setups).
func DevParams() string { return filepath.Join(testdirs.Params(), "filecoin", "dev-params") }

// DevKeys is a development setup of the circuit synth records (the fast
// setup path, cached by the circuit's digest in Setups), as the split
// prover and Filecoin's verifier take it; what names it in the log.
func DevKeys(tb testing.TB, what string, nbPublic int, synth func(*r1cs.Shape) error) (*prover.Prover, *groth.PreparedVerifyingKey) {
	tb.Helper()
	shape := r1cs.NewShape()
	if err := synth(shape); err != nil {
		tb.Fatal(err)
	}
	shape.AppendInputConstraints()
	if err := shape.Err(); err != nil {
		tb.Fatal(err)
	}
	digest, err := shape.Digest()
	if err != nil {
		tb.Fatal(err)
	}
	t0 := time.Now()
	files, made, err := groth.DevSetup(context.Background(), Setups(), shape, digest, nil)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Logf("development setup of %s (%d constraints): %v (made %v)", what, shape.NumConstraints(), time.Since(t0).Round(time.Millisecond), made)
	p, err := groth.ReadParamsFile(files.Params, groth.ReadOptions{})
	if err != nil {
		tb.Fatal(err)
	}
	fvk, err := groth.ReadVerifyingKeyFile(files.VK) // ToGnark takes p's points, the VK's too
	if err != nil {
		tb.Fatal(err)
	}
	d, err := groth.DensityOf(shape)
	if err != nil {
		tb.Fatal(err)
	}
	pk, vk, err := p.ToGnark(d)
	if err != nil {
		tb.Fatal(err)
	}
	sys, err := shape.System()
	if err != nil {
		tb.Fatal(err)
	}
	pr, err := prover.New(&prover.Keys{Digest: digest[:16], NbPublic: nbPublic, PK: pk, VK: vk, System: sys}, nil)
	if err != nil {
		tb.Fatal(err)
	}
	return pr, fvk.Prepare()
}
