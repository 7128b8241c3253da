package pipeline

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/c2flow/c2flow/batch"
	"github.com/c2flow/c2flow/job"
	"github.com/c2flow/c2flow/registry"
	"github.com/c2flow/c2flow/scheme"
	"github.com/c2flow/c2flow/storage"
)

// C1Flags say whose sectors Filecoin C1 files are: a Filecoin C1
// does not name its prover, and only a Commit2In wrapper names its sector.
type C1Flags struct {
	ProverID, SectorID string
}

func (f *C1Flags) Add(fs *flag.FlagSet) {
	fs.StringVar(&f.ProverID, "prover-id", "", "Filecoin C1s: the prover id (32 bytes hex, the miner's actor id as filecoin-ffi encodes it); default: a sectors.json beside each file (c2flow seal writes one)")
	fs.StringVar(&f.SectorID, "sector-id", "", "Filecoin C1: the sector id (one file; default: the Commit2In SectorNum, else the N of a file named N.c1.json)")
}

// IdentifyC1 is c2flow submit's batch.Identify: the scheme whose format
// a file is (scheme.Set.Recognize) gives its identity, bound to its prover
// and sector and checked natively, and its canonical bytes
// (Identifier.Identify); no key is read.
func IdentifyC1(f *C1Flags) batch.Identify {
	set, hints := registry.Schemes(registry.Options{}), scheme.Hints{ProverID: f.ProverID, SectorID: f.SectorID}
	return func(ctx context.Context, path string, raw []byte) (job.Ref, []byte, error) {
		_, ref, canon, err := set.Identify(ctx, path, raw, hints)
		return ref, canon, err
	}
}

// Proofs returns the proofs the sectors declare, each once, in order.
func Proofs(refs []job.Ref) []string {
	seen := map[string]bool{}
	var out []string
	for _, r := range refs {
		if !seen[r.Proof] {
			seen[r.Proof] = true
			out = append(out, r.Proof)
		}
	}
	return out
}

// KeySchemes are the schemes over the keys a submitter or a stack
// ensures for its sectors: the test scheme's under paramsDir, Filecoin's
// development setups under FilecoinDevParamsDir(paramsDir), both
// published to store where the hosts find them (Scheme.EnsureKeys).
func KeySchemes(paramsDir string, store *storage.Store, log *slog.Logger) scheme.Set {
	o := registry.Options{ParamsDir: paramsDir, FilecoinParams: FilecoinDevParamsDir(paramsDir), Log: log}
	if store != nil { // a nil *Store is no Remote
		o.Remote = store
	}
	return registry.Schemes(o)
}

// FilecoinDevParamsDir is where a submitter's development setups in
// Filecoin's format are written before they are published.
func FilecoinDevParamsDir(paramsDir string) string {
	return filepath.Join(paramsDir, "filecoin-dev-params")
}

// readBounded reads file, at most max bytes (the bound of what, named
// when it is exceeded): a larger file, or a stream such as /dev/zero, is
// refused after max+1 bytes, never read whole.
func readBounded(flagName, file string, max int64, what string) ([]byte, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", flagName, err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", flagName, file, err)
	}
	if int64(len(b)) > max {
		return nil, fmt.Errorf("%s %s: over %d bytes, the bound of %s: not read further", flagName, file, max, what)
	}
	return b, nil
}

// maxInputBytes is the largest input file --c1 takes: the largest bound
// of any proof's input over every scheme (scheme.Scheme.MaxC1Bytes).
func maxInputBytes() int64 {
	var m int64
	for _, sc := range registry.Schemes(registry.Options{}) {
		for _, p := range sc.Proofs() {
			if n, err := sc.MaxC1Bytes(p); err == nil {
				m = max(m, n)
			}
		}
	}
	return m
}
