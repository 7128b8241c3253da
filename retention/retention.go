// Package retention reclaims what jobs leave in storage once they no
// longer need it: stored inputs (C1s and the other kinds' canonical
// inputs, up to about 117 MB each) of jobs that ended without a proof,
// and witnesses spilled by a synthesis host that died before a device
// host took them. A full disk stops all proving; a deleted input a job
// still needs fails it. So an input is kept while a job of its identity
// runs, for Policy.Inputs after the last one ended, and for as long as a
// proof of its identity is stored (a stored proof is re-verified against
// it whenever it is returned).
package retention

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"

	enumspb "go.temporal.io/api/enums/v1"

	"github.com/c2flow/c2flow/job"
	"github.com/c2flow/c2flow/storage"
)

// Defaults of Policy.
const (
	// DefaultInputs keeps an unproved job's input a day after its job
	// ended: a provider who resubmits a failed batch the next morning
	// does not upload it again.
	DefaultInputs = 24 * time.Hour
	// DefaultSpills: a spilled witness is claimed within minutes (the
	// host queue's claim window, a device phase); one 6 hours old has no
	// host that will take it.
	DefaultSpills = 6 * time.Hour
	// MinSpills bounds Policy.Spills from below: a witness is dropped
	// idle after the worker's witness TTL (15 min), so nothing younger
	// than an hour can be an orphan for sure.
	MinSpills = time.Hour
	// DefaultEvery is how often a workflow-role worker sweeps.
	DefaultEvery = time.Hour
)

// Policy is how long what is left is kept.
type Policy struct {
	Inputs time.Duration // after the last job of an input's identity ended (0: DefaultInputs)
	Spills time.Duration // a spilled witness's age (0: DefaultSpills; at least MinSpills)
	// SpillDir, where set, is a --spill dir:PATH swept too (S3 spills are
	// always swept, under spill/).
	SpillDir string
}

func (p Policy) withDefaults() Policy {
	if p.Inputs <= 0 {
		p.Inputs = DefaultInputs
	}
	if p.Spills <= 0 {
		p.Spills = DefaultSpills
	}
	p.Spills = max(p.Spills, MinSpills)
	return p
}

// Jobs says whether a job of an identity runs, and when the last one
// ended: its workflow's state.
type Jobs interface {
	// Ended reports the state of the workflow id: running, or closed at
	// closed; found false if Temporal has no run of it (never started,
	// or its history was removed).
	Ended(ctx context.Context, workflowID string) (running bool, closed time.Time, found bool, err error)
}

// TemporalJobs reads jobs' states from Temporal.
type TemporalJobs struct{ Client client.Client }

// Ended implements Jobs.
func (t TemporalJobs) Ended(ctx context.Context, id string) (bool, time.Time, bool, error) {
	d, err := t.Client.DescribeWorkflowExecution(ctx, id, "")
	var nf *serviceerror.NotFound
	if errors.As(err, &nf) {
		return false, time.Time{}, false, nil
	}
	if err != nil {
		return false, time.Time{}, false, fmt.Errorf("describe workflow %s: %w", id, err)
	}
	info := d.GetWorkflowExecutionInfo()
	if info.GetStatus() == enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
		return true, time.Time{}, true, nil
	}
	return false, info.GetCloseTime().AsTime(), true, nil
}

// Report counts what a sweep deleted and kept.
type Report struct {
	Inputs      int   // inputs deleted
	InputsKept  int   // inputs kept (a job runs or ended lately, or a proof is stored)
	Spills      int   // orphaned spills deleted
	BytesFreed  int64 // their bytes
	Unreachable int   // inputs whose job state could not be read (kept)
}

// Sweep deletes, under store, the inputs no job needs any more and the
// orphaned spills, by policy p at now. An input is deleted only when no
// proof of its identity is stored, no job of its identity runs, and the
// last one ended (or, with none known, the input was written) more than
// p.Inputs ago. (A job of the identity resubmitted in the instant between
// that check and the delete fails naming its missing input; submitting
// it again uploads it again.)
//
// With no store (a host that is not an orchestrator), only p.SpillDir is
// swept.
func Sweep(ctx context.Context, store *storage.Store, jobs Jobs, p Policy, now time.Time, log *slog.Logger) (Report, error) {
	p = p.withDefaults()
	var r Report
	if store == nil {
		return sweepDirInto(r, p, now, log)
	}
	inputs, err := store.ListObjects(ctx, "c1/")
	if err != nil {
		return r, fmt.Errorf("retention: list inputs: %w", err)
	}
	for _, o := range inputs {
		identity, ok := storage.InputIdentity(o.Key)
		if !ok {
			continue // not an input this version writes: left alone
		}
		drop, err := expired(ctx, store, jobs, identity, o, p, now)
		if err != nil {
			r.Unreachable++
			log.Warn("retention: input kept, its job's state unknown", "key", o.Key, "error", err)
			continue
		}
		if !drop {
			r.InputsKept++
			continue
		}
		if err := store.Delete(ctx, o.Key); err != nil {
			return r, fmt.Errorf("retention: delete input %s: %w", o.Key, err)
		}
		r.Inputs++
		r.BytesFreed += o.Size
		log.Info("retention: input deleted", "key", o.Key, "bytes", o.Size, "written", o.Modified)
	}
	spills, err := store.ListObjects(ctx, "spill/")
	if err != nil {
		return r, fmt.Errorf("retention: list spills: %w", err)
	}
	for _, o := range spills {
		if now.Sub(o.Modified) < p.Spills {
			continue
		}
		if err := store.Delete(ctx, o.Key); err != nil {
			return r, fmt.Errorf("retention: delete orphaned spill %s: %w", o.Key, err)
		}
		r.Spills++
		r.BytesFreed += o.Size
		log.Info("retention: orphaned spill deleted", "key", o.Key, "bytes", o.Size, "written", o.Modified)
	}
	return sweepDirInto(r, p, now, log)
}

// sweepDirInto sweeps p.SpillDir, if set, adding to r.
func sweepDirInto(r Report, p Policy, now time.Time, log *slog.Logger) (Report, error) {
	if p.SpillDir == "" {
		return r, nil
	}
	n, b, err := sweepDir(p.SpillDir, now.Add(-p.Spills), log)
	r.Spills += n
	r.BytesFreed += b
	return r, err
}

// expired says whether the input o of identity may go.
func expired(ctx context.Context, store *storage.Store, jobs Jobs, identity string, o storage.Object, p Policy, now time.Time) (bool, error) {
	if now.Sub(o.Modified) < p.Inputs {
		return false, nil // written lately: its job may not have started
	}
	if _, err := store.Head(ctx, storage.C2KeyOf(identity)); err == nil {
		return false, nil // a stored proof is verified against it
	} else if !errors.Is(err, storage.ErrNotFound) {
		return false, err
	}
	running, closed, found, err := jobs.Ended(ctx, job.SectorWorkflowIDOf(identity))
	if err != nil {
		return false, err
	}
	if running || (found && now.Sub(closed) < p.Inputs) {
		return false, nil
	}
	return true, nil
}

// sweepDir deletes the files under root last written before cutoff (a
// DirSpill's witnesses and the temporary files of a write that died).
func sweepDir(root string, cutoff time.Time, log *slog.Logger) (int, int64, error) {
	n, freed := 0, int64(0)
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if d.IsDir() {
			return nil
		}
		info, err := d.Info()
		if err != nil || !info.ModTime().Before(cutoff) {
			return nil
		}
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		n++
		freed += info.Size()
		log.Info("retention: orphaned spill deleted", "file", path, "bytes", info.Size(), "written", info.ModTime())
		return nil
	})
	if err != nil {
		return n, freed, fmt.Errorf("retention: sweep spill dir %s: %w", root, err)
	}
	return n, freed, nil
}

// Every sweeps at each interval (0: DefaultEvery) until ctx ends, logging
// what each sweep freed.
func Every(ctx context.Context, every time.Duration, store *storage.Store, jobs Jobs, p Policy, log *slog.Logger) {
	if every <= 0 {
		every = DefaultEvery
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		r, err := Sweep(ctx, store, jobs, p, time.Now(), log)
		if err != nil && ctx.Err() == nil {
			log.Warn("retention sweep", "error", err)
		}
		if r.Inputs+r.Spills > 0 {
			log.Info("retention sweep", "inputs_deleted", r.Inputs, "inputs_kept", r.InputsKept, "spills_deleted", r.Spills, "bytes_freed", r.BytesFreed)
		}
	}
}
