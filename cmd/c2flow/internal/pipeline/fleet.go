package pipeline

import (
	"context"
	"fmt"
	"time"

	"github.com/c2flow/c2flow/batch"
)

func RunFleet(ctx context.Context, args []string) error {
	c, _, asJSON, err := queryCmd(ctx, "fleet", args, 0, "")
	if err != nil {
		return err
	}
	defer c.Close()
	ps, err := batch.Fleet(ctx, c)
	if err != nil {
		return err
	}
	if asJSON {
		printJSON(ps)
		return nil
	}
	for _, p := range ps {
		fmt.Printf("%-14s %-8s last seen %-8s %s\n", p.Queue, p.Kind, time.Since(p.LastSeen).Round(time.Second), p.Identity)
	}
	return nil
}
