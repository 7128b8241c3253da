package pipeline

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/c2flow/c2flow/batch"
	"github.com/c2flow/c2flow/cmd/c2flow/internal/cli"
	"github.com/c2flow/c2flow/cmd/internal/cliflags"
	"github.com/c2flow/c2flow/cmd/internal/procflags"
	"github.com/c2flow/c2flow/filecoin/seal"
	"github.com/c2flow/c2flow/job"
	"github.com/c2flow/c2flow/registry"
	"github.com/c2flow/c2flow/scheme"
	"github.com/c2flow/c2flow/scheme/testscheme/params"
	"github.com/c2flow/c2flow/storage"
)

// C1Files expands --c1 arguments: files, or directories of *.c1.json (C1s)
// and *.update.json (SnapDeals update inputs, as c2flow update writes them).
func C1Files(args []string) ([]string, error) {
	var out []string
	for _, a := range args {
		st, err := os.Stat(a)
		if err != nil {
			return nil, err
		}
		if !st.IsDir() {
			out = append(out, a)
			continue
		}
		var m []string
		for _, pat := range []string{"*.c1.json", "*.update.json"} {
			g, err := filepath.Glob(filepath.Join(a, pat))
			if err != nil {
				return nil, err
			}
			m = append(m, g...)
		}
		sort.Strings(m)
		out = append(out, m...)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no C1 files in %v", args)
	}
	return out, nil
}

func RunSubmit(ctx context.Context, args []string) error {
	fs := cli.NewFlags("submit")
	var tf cliflags.Temporal
	var sf cliflags.S3
	var lf procflags.Log
	tf.Add(fs)
	sf.Add(fs)
	lf.Add(fs, "warn")
	c1 := fs.String("c1", "", "C1 files or directories, comma-separated (SnapDeals update inputs, <id>.update.json, too)")
	snap := fs.String("snap-vproof", "", "a SnapDeals update's vanilla proofs as Curio stores them (snap-vproof.json), with --update-proof, the three commitments, --prover-id and --sector-id")
	var uf cli.UpdateFlags
	uf.Add(fs)
	id := fs.String("batch-id", "", "batch id (default: derived from the sectors' identities (prover, sector, C1 digest), so a resubmission of the same C1s is the same batch, and reruns it: each stored C2 is checked, what is missing or bad is proved)")
	wait := fs.Bool("wait", false, "wait for the batch and print its result")
	out := fs.String("out", "", "with --wait: write each proved sector's C2 proof into this directory as <prover>-<sector>.proof (checked against its manifest)")
	inFlight := fs.Int("max-in-flight", 8, "sectors proved at once")
	prio := fs.Int("priority", 0, "2 (most urgent: sectors near their deadline) to 5; default 3 (1 is WinningPoSt's alone)")
	paramsDir := fs.String("params", params.DefaultDir(), "local parameter cache (keys found only here are published to storage)")
	devSetup := fs.Bool("dev-setup", false, "if storage has no keys for a profile, make them here with a single-party DEVELOPMENT setup (default: refuse and name `c2flow circuit setup`); for Filecoin 2KiB/8MiB proofs, publish DEVELOPMENT parameters in Filecoin's format")
	var cf C1Flags
	cf.Add(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *c1 == "" && *snap == "" {
		return fmt.Errorf("submit: --c1 or --snap-vproof is required")
	}
	// The workflow would replace these silently (priority 3, 8 in flight):
	// a typo would run under settings nobody asked for.
	if *prio < 0 || *prio > 5 {
		return fmt.Errorf("submit: --priority %d: 2 (most urgent) to 5, or 0 for the default 3", *prio)
	}
	// Priority 1 takes the urgent lanes (the urgent synthesis reserve, a
	// device's second holder), which are WinningPoSt's: a PoRep there
	// delays a block.
	if *prio == job.PriorityUrgent {
		return fmt.Errorf("submit: --priority 1 is WinningPoSt's urgent lane; a PoRep or SnapDeals batch takes 2 (most urgent) to 5")
	}
	if *inFlight < 1 {
		return fmt.Errorf("submit: --max-in-flight %d: at least 1 sector at once", *inFlight)
	}
	if cf.SectorID != "" && cf.ProverID == "" {
		return fmt.Errorf("submit: --sector-id needs --prover-id (a sector number names a sector only with its prover)")
	}
	log, err := lf.Logger()
	if err != nil {
		return err
	}
	var ins []batch.Input
	if *c1 != "" {
		files, err := C1Files(strings.Split(*c1, ","))
		if err != nil {
			return err
		}
		limit := maxInputBytes()
		for _, f := range files {
			raw, err := readBounded("--c1", f, limit, "the largest input of any proof (a 64GiB sector's C1)")
			if err != nil {
				return fmt.Errorf("submit: %w", err)
			}
			ins = append(ins, batch.Input{Name: f, Raw: raw})
		}
	}
	if *snap != "" {
		in, err := SnapInput(ctx, registry.Schemes(registry.Options{Log: log}), *snap, &uf, &cf)
		if err != nil {
			return fmt.Errorf("submit: %w", err)
		}
		ins = append(ins, in)
	}
	store, err := sf.Open(ctx)
	if err != nil {
		return err
	}
	if *out != "" && !*wait {
		return fmt.Errorf("submit: --out needs --wait")
	}
	if cf.SectorID != "" && len(ins) > 1 {
		return fmt.Errorf("submit: --sector-id names one file's sector, %d files given", len(ins))
	}
	refs, err := batch.UploadInputs(ctx, store, ins, IdentifyC1(&cf))
	if err != nil {
		return err
	}
	if err := KeySchemes(*paramsDir, store, log).EnsureKeys(ctx, Proofs(refs), *devSetup, os.Stderr); err != nil {
		return fmt.Errorf("submit: %w", err)
	}
	c, err := tf.Dial(ctx, log)
	if err != nil {
		return err
	}
	defer c.Close()
	res, err := SubmitAndWait(ctx, c, refs, batch.Options{BatchID: *id, MaxInFlight: *inFlight, Priority: *prio}, *wait)
	if err != nil || !*wait {
		return err
	}
	if *out != "" {
		if err := writeProofs(ctx, store, res, *out); err != nil {
			return err
		}
	}
	return printResult(res)
}

// SubmitAndWait submits uploaded sectors, whose keys the caller ensured
// (Scheme.EnsureKeys), and, with wait, follows the batch to its result.
func SubmitAndWait(ctx context.Context, c client.Client, refs []job.Ref, o batch.Options, wait bool) (job.BatchResult, error) {
	return submitAndWait(ctx, c, refs, o, wait, newProgressBar(os.Stderr))
}

// SubmitAndWaitSteps is SubmitAndWait, waiting, with its progress line
// among steps (the demo's): a warning logged while the batch runs is
// written above the line, not into it.
func SubmitAndWaitSteps(ctx context.Context, c client.Client, refs []job.Ref, o batch.Options, steps *cli.StepWriter) (job.BatchResult, error) {
	return submitAndWait(ctx, c, refs, o, true, &progressBar{w: steps, steps: steps})
}

func submitAndWait(ctx context.Context, c client.Client, refs []job.Ref, o batch.Options, wait bool, bar *progressBar) (job.BatchResult, error) {
	if o.BatchID == "" {
		o.BatchID = batch.ID(refs)
	}
	if _, err := batch.Submit(ctx, c, refs, o); err != nil {
		return job.BatchResult{}, err
	}
	fmt.Fprintf(os.Stderr, "submitted batch %s: %d sectors (workflow %s)\n", o.BatchID, len(refs), job.BatchWorkflowID(o.BatchID))
	if !wait {
		return job.BatchResult{}, nil
	}
	res, err := batch.Wait(ctx, c, o.BatchID, 500*time.Millisecond, bar.update)
	bar.done()
	return res, err
}

// writeProofs writes the C2 of every proved sector into dir, named by
// prover and sector; each is read back through its manifest (identity and
// digest checked) first.
func writeProofs(ctx context.Context, store *storage.Store, res job.BatchResult, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("--out: %w", err)
	}
	for _, s := range res.Sectors {
		if s.C2Key == "" || s.Error != "" {
			continue
		}
		_, proof, err := store.GetC2(ctx, s.Ref)
		if err != nil {
			return fmt.Errorf("%s: read its C2: %w", s.Ref, err)
		}
		path := filepath.Join(dir, fmt.Sprintf("%s-%d.proof", s.ProverID, s.SectorID))
		if err := os.WriteFile(path, proof, 0o644); err != nil {
			return fmt.Errorf("%s: %w", s.Ref, err)
		}
		fmt.Fprintf(os.Stderr, "%s: %d bytes -> %s\n", s.Ref, len(proof), path)
	}
	return nil
}

func printResult(res job.BatchResult) error {
	failed := 0
	for _, s := range res.Sectors {
		line := fmt.Sprintf("%s: %s", s.Ref, s.Status)
		if s.C2Key != "" {
			line += " -> " + s.C2Key
		}
		if s.Error != "" {
			line += ": " + s.Error
			failed++
		}
		fmt.Println(line)
	}
	if failed > 0 {
		return fmt.Errorf("%d of %d sectors did not prove", failed, len(res.Sectors))
	}
	return nil
}

// progressBar redraws one line on a terminal and prints plain lines when
// the progress changes otherwise.
type progressBar struct {
	w     io.Writer
	tty   bool
	steps *cli.StepWriter // if set, w: the line is redrawn through it
	last  string
}

func newProgressBar(f *os.File) *progressBar {
	st, err := f.Stat()
	return &progressBar{w: f, tty: err == nil && st.Mode()&os.ModeCharDevice != 0}
}

func (b *progressBar) terminal() bool { return b.tty || b.steps != nil && b.steps.Terminal() }

// update draws the batch's progress. Partition totals are known per
// sector only once it is validated, so until every sector's total is known
// the bar counts sectors, and never goes backwards.
func (b *progressBar) update(p job.BatchProgress) {
	var parts, done, proved, failed, running int
	known := len(p.Sectors) == p.Total
	for _, s := range p.Sectors {
		parts += s.Partitions
		done += s.PartitionsDone
		switch s.Status {
		case job.StatusProved, job.StatusDuplicate:
			proved++
		case job.StatusFailed, job.StatusCanceled:
			failed++
		case job.StatusRunning:
			running++
			known = known && s.Partitions > 0
		default:
			known = false
		}
	}
	unit, num, den := "sectors", proved+failed, p.Total
	if known && parts > 0 {
		unit, num, den = "partitions", done, parts
	}
	frac := 0.0
	if den > 0 {
		frac = float64(num) / float64(den)
	}
	const width = 30
	n := int(frac * width)
	line := fmt.Sprintf("[%s%s] %d/%d %s | sectors: %d done, %d running, %d failed, of %d",
		strings.Repeat("#", n), strings.Repeat(".", width-n), num, den, unit, proved, running, failed, p.Total)
	if line == b.last {
		return
	}
	b.last = line
	switch {
	case b.steps != nil && b.steps.Terminal():
		b.steps.Redraw(line)
	case b.tty:
		fmt.Fprintf(b.w, "\r%s", line)
	default:
		fmt.Fprintln(b.w, line)
	}
}

func (b *progressBar) done() {
	if b.terminal() && b.last != "" {
		fmt.Fprintln(b.w)
	}
}

// SnapInput is the update input of Curio's snap vanilla proofs in file (a
// JSON array of base64 bincode PartitionProofs), the update proof and
// commitments uf names and the sector cf names: the request the scheme
// admitting SnapDeals builds it from, as the gateway's, bounded by that
// scheme before the file is read.
func SnapInput(ctx context.Context, schemes scheme.Set, file string, uf *cli.UpdateFlags, cf *C1Flags) (batch.Input, error) {
	info, err := uf.Info()
	if err != nil {
		return batch.Input{}, err
	}
	c, err := uf.Commitments()
	if err != nil {
		return batch.Input{}, err
	}
	if cf.ProverID == "" || cf.SectorID == "" {
		return batch.Input{}, fmt.Errorf("--snap-vproof %s: give the sector's --prover-id and --sector-id", file)
	}
	prover, err := seal.ParseHex32(cf.ProverID)
	if err != nil {
		return batch.Input{}, fmt.Errorf("--prover-id: %w", err)
	}
	sector, err := strconv.ParseUint(cf.SectorID, 10, 64)
	if err != nil {
		return batch.Input{}, fmt.Errorf("--sector-id: %w", err)
	}
	bound, ok, err := schemes.RequestBound(scheme.KindSnap, uint64(info.Proof))
	switch {
	case err != nil:
		return batch.Input{}, fmt.Errorf("--update-proof %s: %w", info.Name, err)
	case !ok:
		return batch.Input{}, fmt.Errorf("--snap-vproof: no scheme here bounds %s requests", scheme.KindSnap)
	}
	b, err := readBounded("--snap-vproof", file, bound.EnvelopeBytes, "a "+info.Name+" update")
	if err != nil {
		return batch.Input{}, err
	}
	a, err := schemes.Admit(ctx, scheme.Request{Kind: scheme.KindSnap, RegisteredProof: uint64(info.Proof), ProverID: &prover, SectorNumber: sector,
		SectorSize: info.SectorSize, Envelope: b, CommROld: c[0][:], CommRNew: c[1][:], CommDNew: c[2][:]})
	if err != nil {
		return batch.Input{}, fmt.Errorf("--snap-vproof %s: %w", file, err)
	}
	// Admitted: identified and verified natively once, here.
	return batch.Input{Name: file, Raw: a.Input, Ref: &a.Ref}, nil
}
