// Package fctest gives the Filecoin tests their shared development setups.
package fctest

import (
	"path/filepath"

	"github.com/c2flow/c2flow/filecoin/r1cs"
	"github.com/c2flow/c2flow/internal/testdirs"
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
