// Package testdirs names the directories tests share across packages.
package testdirs

import (
	"os"
	"path/filepath"
)

// Params is the test parameter cache: $C2FLOW_PARAMS (the Makefile points
// every package there), else a per-machine temporary directory.
func Params() string {
	if d := os.Getenv("C2FLOW_PARAMS"); d != "" {
		return d
	}
	return filepath.Join(os.TempDir(), "c2flow-test-params")
}
