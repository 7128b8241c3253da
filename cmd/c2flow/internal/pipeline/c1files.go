package pipeline

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/c2flow/c2flow/batch"
	"github.com/c2flow/c2flow/filecoin/c2"
	"github.com/c2flow/c2flow/filecoin/proofs"
	"github.com/c2flow/c2flow/intake"
	"github.com/c2flow/c2flow/job"
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

// identify is c2flow submit's batch.Identify (intake.Identify).
func IdentifyC1(f *C1Flags) batch.Identify {
	return intake.Identify(intake.Schemes(), scheme.Hints{ProverID: f.ProverID, SectorID: f.SectorID})
}

// filecoinProofs returns the Filecoin proofs the sectors declare.
func filecoinProofs(refs []job.SectorRef) []string {
	seen := map[string]bool{}
	var out []string
	for _, r := range refs {
		if _, err := proofs.ByName(r.Profile); err == nil && !seen[r.Profile] {
			seen[r.Profile] = true
			out = append(out, r.Profile)
		}
	}
	return out
}

// PublishFilecoinDevSetup makes a DEVELOPMENT setup of each proof in
// Filecoin's format (from the machine's setup cache when it has one) in
// dir and publishes it to storage under c2.RemotePrefix, where workers
// without the files find it. notes is told what the user waits for.
func PublishFilecoinDevSetup(ctx context.Context, store *storage.Store, dir string, names []string, notes io.Writer, log *slog.Logger) error {
	for _, name := range names {
		cache := c2.DefaultSetupCache()
		what := "(made once, about a minute for 2KiB on 2 cores, then cached in " + cache.Dir + ")"
		fmt.Fprintf(notes, "   %s: making Filecoin-format DEVELOPMENT parameters (single-party setup, never for real sectors) %s ...", name, what)
		t := time.Now()
		files, err := c2.DevSetup(ctx, name, dir, cache, log)
		if err != nil {
			fmt.Fprintln(notes)
			return err
		}
		fmt.Fprintf(notes, " done in %v\n", time.Since(t).Round(time.Millisecond))
		// parameters.json lists every pair of dir: uploaded each time so
		// that it lists this one too.
		for _, path := range []string{files.Params, files.VK, filepath.Join(dir, c2.DevMarker), filepath.Join(dir, c2.ParametersJSON)} {
			key := c2.RemotePrefix + filepath.Base(path)
			if _, err := store.Head(ctx, key); err == nil && filepath.Base(path) != c2.ParametersJSON {
				continue
			} else if err != nil && !errors.Is(err, storage.ErrNotFound) {
				return fmt.Errorf("publish %s: %w", key, err)
			}
			if err := store.UploadFile(ctx, key, path); err != nil {
				return fmt.Errorf("publish %s: %w", key, err)
			}
		}
	}
	return nil
}

// FilecoinDevParamsDir is where a submitter's development setups in
// Filecoin's format are written before they are published.
func FilecoinDevParamsDir(paramsDir string) string {
	return filepath.Join(paramsDir, "filecoin-dev-params")
}
