package lab

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"time"

	"github.com/c2flow/c2flow/cmd/c2flow/internal/cli"
	"github.com/c2flow/c2flow/filecoin/c1"
	"github.com/c2flow/c2flow/registry"
	"github.com/c2flow/c2flow/scheme"
)

func RunC1(ctx context.Context, args []string) error {
	if len(args) == 0 || args[0] != "check" {
		fmt.Fprintln(os.Stderr, "usage: c2flow c1 check [--prover-id HEX [--sector-id N]] FILE...")
		if len(args) == 0 {
			return flag.ErrHelp
		}
		return fmt.Errorf("c1: unknown subcommand %q", args[0])
	}
	return c1Check(ctx, args[1:], os.Stdout, os.Stderr)
}

// c1CheckFlags are the public data given on the command line.
type c1CheckFlags struct {
	c1.Given
	timing  bool
	workers int
}

// c1Check checks each C1 file natively and prints one line per file to
// out: "FILE: ok (public data: SOURCE)" or "FILE: bad: FAILURE (public
// data: SOURCE)". The public data come from the flags, else from a
// sectors.json beside the file that lists it, else from the file itself.
// It returns an error when any file is bad.
func c1Check(ctx context.Context, args []string, out, logw io.Writer) error {
	fs := cli.NewFlags("c1 check")
	var f c1CheckFlags
	fs.StringVar(&f.ProverID, "prover-id", "", "prover id (32 bytes hex): check the replica id it derives with the sector id (--sector-id, else the Commit2In SectorNum, else the N of a file named N.c1.json)")
	fs.StringVar(&f.SectorID, "sector-id", "", "sector id (with --prover-id; one file only)")
	fs.StringVar(&f.Ticket, "ticket", "", "with --prover-id: the sector's ticket (hex); default: the file's")
	fs.StringVar(&f.Seed, "seed", "", "with --prover-id: the sector's seed (hex); default: the file's")
	fs.StringVar(&f.CommD, "comm-d", "", "with --prover-id: the sector's comm_d (hex); default: the file's")
	fs.StringVar(&f.CommR, "comm-r", "", "with --prover-id: the sector's comm_r (hex); default: the file's")
	fs.StringVar(&f.Proof, "proof", "", "with --prover-id: the sector's registered seal proof; default: the file's")
	fs.BoolVar(&f.timing, "timing", false, "print each file's decode and verification time and the heap in use to stderr")
	fs.IntVar(&f.workers, "workers", 0, "goroutines verifying challenges (0: GOMAXPROCS)")
	files, err := cli.ParseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(files) == 0 {
		return fmt.Errorf("c1 check: no files")
	}
	if f.ProverID == "" && f.Any() {
		return fmt.Errorf("c1 check: --sector-id, --ticket, --seed, --comm-d, --comm-r and --proof need --prover-id")
	}
	if f.SectorID != "" && len(files) != 1 {
		return fmt.Errorf("c1 check: --sector-id with %d files (one file only)", len(files))
	}
	chk, err := c1Checker()
	if err != nil {
		return fmt.Errorf("c1 check: %w", err)
	}
	bad := 0
	for _, name := range files {
		source, err := checkC1File(ctx, chk, name, &f, logw)
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			return err
		}
		if err != nil {
			bad++
			fmt.Fprintf(out, "%s: bad: %v (public data: %s)\n", name, err, source)
			continue
		}
		fmt.Fprintf(out, "%s: ok (public data: %s)\n", name, source)
	}
	if bad > 0 {
		return fmt.Errorf("c1 check: %d of %d C1 files bad", bad, len(files))
	}
	return nil
}

// checkC1File decodes and verifies one file, returning where its public
// data came from.
func checkC1File(ctx context.Context, chk checker, name string, f *c1CheckFlags, logw io.Writer) (string, error) {
	var ms0 runtime.MemStats
	if f.timing {
		runtime.GC()
		runtime.ReadMemStats(&ms0)
	}
	t0 := time.Now()
	a, err := c1.DecodeFile(name)
	if err != nil {
		return "none (not decoded)", err
	}
	tDecode := time.Since(t0)
	t1 := time.Now()
	source, err := chk.CheckC1(ctx, name, a, f.Given, f.workers)
	if err != nil {
		return source, err
	}
	if f.timing {
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		fmt.Fprintf(logw, "%s: %s, decode %v, verify %v, heap in use %.1f MiB (%.1f MiB before), total allocated %.1f MiB\n",
			name, a.C1.RegisteredProof, tDecode.Round(time.Microsecond), time.Since(t1).Round(time.Microsecond),
			float64(ms.HeapInuse)/(1<<20), float64(ms0.HeapInuse)/(1<<20), float64(ms.TotalAlloc-ms0.TotalAlloc)/(1<<20))
	}
	return source, nil
}

// checker is what c1 check asks of the scheme that owns Filecoin's seal
// proofs: a decoded C1 checked against its public data, with so many
// goroutines; it says where the public data came from.
type checker interface {
	CheckC1(ctx context.Context, name string, a *c1.Artifact, given c1.Given, workers int) (string, error)
}

// c1Checker is the scheme admitting PoRep requests, as c1 check uses it.
func c1Checker() (checker, error) {
	a, err := registry.Schemes(registry.Options{}).Admitter(scheme.KindPoRep)
	if err != nil {
		return nil, err
	}
	return scheme.As[checker](a, "C1 check")
}
