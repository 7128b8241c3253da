package pipeline

import (
	"context"
	"fmt"

	"github.com/c2flow/c2flow/batch"
	"github.com/c2flow/c2flow/cmd/c2flow/internal/cli"
	"github.com/c2flow/c2flow/cmd/internal/cliflags"
	"github.com/c2flow/c2flow/cmd/internal/procflags"
)

// RunCancel asks a batch to cancel: sectors not started are not started,
// sectors in flight are canceled; a sector already storing its C2 finishes
// and is reported proved, so the result says exactly what was stored.
func RunCancel(ctx context.Context, args []string) error {
	fs := cli.NewFlags("cancel")
	var tf cliflags.Temporal
	var lf procflags.Log
	tf.Add(fs)
	lf.Add(fs, "warn")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return fmt.Errorf("usage: c2flow cancel [flags] BATCH-ID")
	}
	log, err := lf.Logger()
	if err != nil {
		return err
	}
	c, err := tf.Dial(ctx, log)
	if err != nil {
		return err
	}
	defer c.Close()
	if err := batch.Cancel(ctx, c, fs.Arg(0)); err != nil {
		return fmt.Errorf("cancel batch %s: %w", fs.Arg(0), err)
	}
	fmt.Printf("batch %s: cancel requested; `c2flow status %s` shows what was stored\n", fs.Arg(0), fs.Arg(0))
	return nil
}
