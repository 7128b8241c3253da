package lab

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/c2flow/c2flow/filecoin/c1"
	"github.com/c2flow/c2flow/filecoin/c2"
	"github.com/c2flow/c2flow/filecoin/proofs"
	"github.com/c2flow/c2flow/intake"
	"github.com/c2flow/c2flow/scheme"
)

// filecoinProveFlags are c2flow prove's flags for Filecoin C1 files.
type filecoinProveFlags struct {
	proverID, sectorID string
	vk, pkParams       string
	shapeCache         string
}

func (f *filecoinProveFlags) add(fs *flag.FlagSet) {
	fs.StringVar(&f.proverID, "prover-id", "", "Filecoin C1: the prover id (32 bytes hex) the replica id is checked against, with the sector id (--sector-id, else the Commit2In SectorNum, else the N of a file named N.c1.json); default: a sectors.json beside the file, else the file's own public data")
	fs.StringVar(&f.sectorID, "sector-id", "", "Filecoin C1: the sector id (with --prover-id)")
	fs.StringVar(&f.vk, "vk", "", "Filecoin C1: the seal proof's verifying key (.vk); with --pk-params, instead of a search of --params")
	fs.StringVar(&f.pkParams, "pk-params", "", "Filecoin C1: the seal proof's parameters (.params); with --vk, instead of a search of --params")
	fs.StringVar(&f.shapeCache, "shape-cache", "", "Filecoin C1: directory caching the recorded circuit shapes (default: <c2flow parameter cache>/filecoin-shapes)")
}

// filecoinParamsDir is the default Filecoin parameter directory
// (c2.DefaultDir).
func filecoinParamsDir() string { return c2.DefaultDir() }

// looksFilecoin reports whether a C1 file is a Filecoin C1: Filecoin's
// scheme recognizes its head (intake.LooksFilecoin).
func looksFilecoin(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	b := make([]byte, scheme.HeadBytes)
	n, _ := io.ReadFull(f, b)
	return intake.LooksFilecoin(b[:n])
}

// proveFilecoin proves a Filecoin C1 file: native check of the vanilla
// proofs against the sector's public data first, then one Groth16 proof
// per partition under the proof's parameters, every proof verified with
// the .vk before the concatenated 192-byte proofs are written to out.
func proveFilecoin(ctx context.Context, in, out, paramsDir string, f *filecoinProveFlags, pf *proverFlags, stdout, logw io.Writer) error {
	t0 := time.Now()
	a, err := c1.DecodeFile(in)
	if err != nil {
		return fmt.Errorf("prove: %w", err)
	}
	c := a.C1
	info, err := proofs.Lookup(c.RegisteredProof)
	if err != nil {
		return fmt.Errorf("prove %s: %w", in, err)
	}
	if f.proverID == "" && f.sectorID != "" {
		return fmt.Errorf("prove: --sector-id needs --prover-id")
	}
	pub, source, err := intake.PublicFor(in, a, intake.Public{ProverID: f.proverID, SectorID: f.sectorID})
	if err != nil {
		return fmt.Errorf("prove %s: public data (%s): %w", in, source, err)
	}
	sec, err := c2.NewSector(c, pub)
	if err != nil {
		return fmt.Errorf("prove %s: %w", in, err)
	}
	if err := sec.Verify(ctx); err != nil {
		return fmt.Errorf("prove %s: C1 does not verify (public data: %s); not proved: %w", in, source, err)
	}
	fmt.Fprintf(logw, "%s: %s C1 verified natively in %v (public data: %s)\n", in, info.Name, time.Since(t0).Round(time.Millisecond), source)

	p := c2.Params{Dir: paramsDir, ShapeDir: f.shapeCache}
	switch {
	case f.vk != "" && f.pkParams != "":
		p.Pair = &c2.Files{Params: f.pkParams, VK: f.vk}
	case f.vk != "" || f.pkParams != "":
		return fmt.Errorf("prove: --vk and --pk-params go together")
	}
	log, err := pf.Logger()
	if err != nil {
		return err
	}
	t1 := time.Now()
	circ, err := c2.New(p, log).Load(ctx, info.Name)
	if errors.Is(err, scheme.ErrNoKeys) && p.Pair == nil {
		err = fmt.Errorf("%w (or give --vk and --pk-params)", err)
	}
	if err != nil {
		return fmt.Errorf("prove: %w", err)
	}
	n := circ.Counts()
	dev := ""
	if circ.Dev() {
		dev = " [DEVELOPMENT SETUP: proofs worthless on chain]"
	}
	fmt.Fprintf(logw, "keys: %s (%d constraints, %d inputs, %d aux; shape %s), loaded in %v%s\n",
		filepath.Base(circ.Files().Params), n.Constraints, n.Inputs, n.Aux, circ.Digests().Circuit[:16], time.Since(t1).Round(time.Millisecond), dev)

	slots, err := pf.Slots()
	if err != nil {
		return err
	}
	circ.Prover().EarlyG2 = pf.EarlyG2

	parts := sec.Partitions()
	tProve := time.Now()
	b, _, err := scheme.ProveDirect(ctx, circ, sec, slots, func(t scheme.PartitionTimes) {
		fmt.Fprintf(logw, "partition %s: synth %v, device %v (NTT %v, MSM %v), finalize %v%s\n", t.Partition,
			t.Synth.Round(time.Millisecond), t.Device.Round(time.Millisecond), t.NTT.Round(time.Millisecond),
			t.MSM.Round(time.Millisecond), t.Finalize.Round(time.Millisecond), dev)
	})
	if err != nil {
		return fmt.Errorf("prove %s: nothing written: %w", in, err)
	}
	tv := time.Now()
	if err := circ.VerifyC2(sec, b); err != nil {
		return fmt.Errorf("prove %s: the proofs do not verify; nothing written: %w", in, err)
	}
	tVerify := time.Since(tv)
	if out == "" {
		out = trimSuffix(trimSuffix(in, ".json"), ".c1") + ".proof"
	}
	if err := writeAtomicFile(out, b); err != nil {
		return fmt.Errorf("prove: %w", err)
	}
	el := time.Since(tProve)
	fmt.Fprintf(stdout, "%s: %s, %d partitions proved in %v (%.2f s/partition), verified with %s in %v -> %s (%d bytes)%s\n",
		in, info.Name, parts, el.Round(time.Millisecond), el.Seconds()/float64(parts), filepath.Base(circ.Files().VK),
		tVerify.Round(time.Millisecond), out, len(b), dev)
	return nil
}

// writeAtomicFile writes b to path through a temporary file renamed into
// place: a proof file is complete or absent.
func writeAtomicFile(path string, b []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return os.Rename(tmp.Name(), path)
}
