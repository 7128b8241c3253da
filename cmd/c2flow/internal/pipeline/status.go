package pipeline

import (
	"context"
	"encoding/json"
	"fmt"

	"go.temporal.io/sdk/client"

	"github.com/c2flow/c2flow/batch"
	"github.com/c2flow/c2flow/cmd/c2flow/internal/cli"
	"github.com/c2flow/c2flow/cmd/internal/cliflags"
	"github.com/c2flow/c2flow/cmd/internal/procflags"
	"github.com/c2flow/c2flow/job"
)

func RunStatus(ctx context.Context, args []string) error {
	c, pos, asJSON, err := queryCmd(ctx, "status", args, 1, " BATCH-ID")
	if err != nil {
		return err
	}
	defer c.Close()
	// A run closed from outside still answers the query from its history
	// ("running"): its status comes first.
	st, err := batch.State(ctx, c, pos[0])
	if err != nil {
		return err
	}
	if st.Closed() && !st.Completed() {
		why := ""
		if st.Reason != "" {
			why = ": " + st.Reason
		}
		if asJSON {
			printJSON(map[string]string{"batch_id": pos[0], "state": st.Name(), "reason": st.Reason})
		} else {
			fmt.Printf("batch %s: %s%s\n", pos[0], st.Name(), why)
		}
		return fmt.Errorf("batch %s did not complete: its workflow %s was %s%s", pos[0], job.BatchWorkflowID(pos[0]), st.Name(), why)
	}
	p, err := batch.Progress(ctx, c, pos[0])
	if err != nil {
		return fmt.Errorf("progress of batch %s: %w", pos[0], err)
	}
	if asJSON {
		printJSON(p)
		return nil
	}
	fmt.Printf("batch %s: %d sectors%s\n", p.BatchID, p.Total, map[bool]string{true: " (canceled)"}[p.Canceled])
	for _, s := range p.Sectors {
		parts := fmt.Sprintf("partitions %d/%d done, %d failed, %d re-syntheses", s.PartitionsDone, s.Partitions, s.PartitionsFailed, s.Resyntheses)
		if s.Partitions == 0 && (s.Status == job.StatusPending || s.Status == job.StatusRunning) {
			parts = "partitions not counted yet (C1 being validated)"
		}
		fmt.Printf("  %s: %-9s %s\n", s.Ref, s.Status, parts)
	}
	return nil
}

// queryCmd parses a read-only command's flags (Temporal, log, --json),
// checks its positional arguments and dials Temporal.
func queryCmd(ctx context.Context, name string, args []string, nargs int, usage string) (client.Client, []string, bool, error) {
	fs := cli.NewFlags(name)
	var tf cliflags.Temporal
	var lf procflags.Log
	tf.Add(fs)
	lf.Add(fs, "warn")
	asJSON := fs.Bool("json", false, "print JSON")
	if err := fs.Parse(args); err != nil {
		return nil, nil, false, err
	}
	if fs.NArg() != nargs {
		return nil, nil, false, fmt.Errorf("usage: c2flow %s [flags]%s", name, usage)
	}
	log, err := lf.Logger()
	if err != nil {
		return nil, nil, false, err
	}
	c, err := tf.Dial(ctx, log)
	return c, fs.Args(), *asJSON, err
}

func printJSON(v any) {
	b, _ := json.MarshalIndent(v, "", "  ")
	fmt.Println(string(b))
}
