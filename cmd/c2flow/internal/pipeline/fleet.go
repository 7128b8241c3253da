package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/c2flow/c2flow/activities"
	"github.com/c2flow/c2flow/batch"
	"github.com/c2flow/c2flow/cmd/c2flow/internal/cli"
	"github.com/c2flow/c2flow/cmd/internal/cliflags"
	"github.com/c2flow/c2flow/cmd/internal/procflags"
	"github.com/c2flow/c2flow/internal/units"
	"github.com/c2flow/c2flow/storage"
)

// RunFleet is `c2flow fleet`: who polls which queue (Temporal's view), and
// what each host holds, as it publishes it to the artifact store every
// activities.PublishEvery: its witnesses (packed), the expansion its
// device lanes may hold, its circuits' keys and systems.
func RunFleet(ctx context.Context, args []string) error {
	fs := cli.NewFlags("fleet")
	var tf cliflags.Temporal
	var sf cliflags.S3
	var lf procflags.Log
	tf.Add(fs)
	sf.Add(fs)
	lf.Add(fs, "warn")
	asJSON := fs.Bool("json", false, "print JSON")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		return fmt.Errorf("usage: c2flow fleet [flags]")
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
	ps, err := batch.Fleet(ctx, c)
	if err != nil {
		return err
	}
	hosts, herr := hostReports(ctx, &sf)
	if *asJSON {
		printJSON(struct {
			Pollers []batch.Poller     `json:"pollers"`
			Hosts   []activities.Stats `json:"hosts"`
		}{ps, hosts})
		return herr
	}
	for _, p := range ps {
		fmt.Printf("%-14s %-8s last seen %-8s %s\n", p.Queue, p.Kind, time.Since(p.LastSeen).Round(time.Second), p.Identity)
	}
	if herr != nil {
		fmt.Printf("\nhosts' reports not read: %v\n", herr)
		return nil
	}
	if len(hosts) > 0 {
		fmt.Println()
	}
	for _, h := range hosts {
		b := h.Budget
		age := time.Since(h.At).Round(time.Second)
		stale := ""
		if age > 4*activities.PublishEvery {
			stale = " (stale: stopped or cut off?)"
		}
		fmt.Printf("%s roles=%s devices=%s, %v ago%s\n  witnesses: %d held, %s packed; %d synthesizing; budget %s\n  device lanes: %d, expansion %s; circuits mapped (one copy a box, in the page cache): keys %s, systems %s\n",
			h.ID, strings.Join(h.Roles, ","), strings.Join(h.Devices, ","), age, stale,
			b.Held, units.Bytes(uint64(b.HeldBytes)), b.Running, budgetLimit(b),
			b.Lanes, units.Bytes(uint64(b.ExpansionBytes)), units.Bytes(uint64(b.KeyBytes)), units.Bytes(uint64(b.SystemBytes)))
		for _, name := range slices.Sorted(maps.Keys(h.DeviceMemory)) {
			m := h.DeviceMemory[name]
			fmt.Printf("  device %s: limit %s; resident bases %s (%d sets), quotient vectors %s, NTT twiddles %s\n", name,
				units.Bytes(uint64(m.Limit)), units.Bytes(uint64(m.Resident)), m.ResidentSets, units.Bytes(uint64(m.Working)), units.Bytes(uint64(m.Twiddles)))
		}
	}
	return nil
}

func budgetLimit(b activities.BudgetStats) string {
	if b.MaxBytes > 0 {
		return units.Bytes(uint64(b.MaxBytes))
	}
	return fmt.Sprintf("%d partitions", b.Max)
}

// hostReports reads the stats every worker publishes
// (activities.HostReportKey).
func hostReports(ctx context.Context, sf *cliflags.S3) ([]activities.Stats, error) {
	st, err := sf.Open(ctx)
	if err != nil {
		return nil, err
	}
	keys, err := st.List(ctx, "fleet/")
	if err != nil {
		return nil, err
	}
	var out []activities.Stats
	for _, k := range keys {
		b, err := st.Get(ctx, k)
		if err != nil {
			if errors.Is(err, storage.ErrNotFound) { // stopped meanwhile
				continue
			}
			return nil, err
		}
		var s activities.Stats
		if err := json.Unmarshal(b, &s); err != nil {
			return nil, fmt.Errorf("host report %s: %w", k, err)
		}
		out = append(out, s)
	}
	return out, nil
}
