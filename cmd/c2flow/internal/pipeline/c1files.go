package pipeline

import (
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/c2flow/c2flow/batch"
	"github.com/c2flow/c2flow/filecoin/c2"
	"github.com/c2flow/c2flow/filecoin/proofs"
	"github.com/c2flow/c2flow/intake"
	"github.com/c2flow/c2flow/job"
	"github.com/c2flow/c2flow/params"
	"github.com/c2flow/c2flow/porep"
	"github.com/c2flow/c2flow/scheme"
	"github.com/c2flow/c2flow/scheme/testscheme"
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

// identify is c2flow submit's batch.Identify (intake.Identify).
func IdentifyC1(f *C1Flags) batch.Identify {
	return intake.Identify(intake.Schemes(), scheme.Hints{ProverID: f.ProverID, SectorID: f.SectorID})
}

// Proofs returns the proofs the sectors declare, each once, in order.
func Proofs(refs []job.SectorRef) []string {
	seen := map[string]bool{}
	var out []string
	for _, r := range refs {
		if !seen[r.Profile] {
			seen[r.Profile] = true
			out = append(out, r.Profile)
		}
	}
	return out
}

// KeySchemes are the schemes over the keys a submitter or a stack
// ensures for its sectors: the test scheme's under paramsDir, Filecoin's
// development setups under FilecoinDevParamsDir(paramsDir), both
// published to store where the hosts find them (Scheme.EnsureKeys).
func KeySchemes(paramsDir string, store *storage.Store, log *slog.Logger) scheme.Set {
	return append(scheme.Set{
		testscheme.New(params.Cache{Local: params.DirStore{Root: paramsDir}, Remote: store}, testscheme.WithLogger(log)),
	}, c2.Schemes(c2.Params{Dir: FilecoinDevParamsDir(paramsDir), Remote: store}, log)...)
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
// of any proof's input (Filecoin's C1s and update inputs, the test
// scheme's C1s).
func maxInputBytes() int64 {
	m := porep.MaxC1Bytes()
	seal, upd := &c2.Scheme{}, &c2.UpdateScheme{}
	for _, p := range proofs.Names() {
		if n, err := seal.MaxC1Bytes(p); err == nil {
			m = max(m, n)
		}
		if n, err := upd.MaxC1Bytes("Update" + p); err == nil {
			m = max(m, n)
		}
	}
	return m
}
