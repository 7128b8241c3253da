package r1cs

import (
	"os"
	"path/filepath"
)

// SetupCache is where DEVELOPMENT Groth16 setups (single-party, whose toxic
// waste the machine that made them knew) of recorded shapes are kept, by
// shape digest: Dir/<digest>/ (filecoin/groth DevSetup writes dev.params
// and dev.vk there). Processes share it under a file lock per digest
// (Dir/.lock-<digest prefix>, internal/flock), so one setup serves every process
// that needs it.
type SetupCache struct {
	Dir string
}

// DefaultSetupCache is the machine-wide cache of development setups:
// $C2FLOW_SETUP_CACHE, else <user cache dir>/c2flow/setups. It is keyed by
// shape digest, not kept under a checkout's parameter cache (C2FLOW_PARAMS),
// so a fresh clone's tests and demos reuse a setup this machine already
// made.
func DefaultSetupCache() SetupCache {
	if d := os.Getenv("C2FLOW_SETUP_CACHE"); d != "" {
		return SetupCache{Dir: d}
	}
	if d, err := os.UserCacheDir(); err == nil {
		return SetupCache{Dir: filepath.Join(d, "c2flow", "setups")}
	}
	return SetupCache{Dir: filepath.Join(os.TempDir(), "c2flow-setups")}
}
