package pipeline

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/c2flow/c2flow/job"
)

// The progress bar counts sectors until every sector's partition total is
// known, then partitions: it never shows 0/0 nor goes backwards.
func TestProgressBarNeverGoesBackwards(t *testing.T) {
	f, err := os.CreateTemp(t.TempDir(), "bar")
	if err != nil {
		t.Fatal(err)
	}
	b := &progressBar{w: f}
	sec := func(id uint64, st string, parts, done int) job.Progress {
		return job.Progress{Ref: job.Ref{ProverID: "aa", SectorID: id}, Status: st, Partitions: parts, PartitionsDone: done}
	}
	steps := []job.BatchProgress{
		{Total: 2, Sectors: []job.Progress{sec(1, job.StatusPending, 0, 0), sec(2, job.StatusPending, 0, 0)}},
		{Total: 2, Sectors: []job.Progress{sec(1, job.StatusRunning, 4, 3), sec(2, job.StatusRunning, 0, 0)}},
		{Total: 2, Sectors: []job.Progress{sec(1, job.StatusProved, 4, 4), sec(2, job.StatusRunning, 4, 0)}},
		{Total: 2, Sectors: []job.Progress{sec(1, job.StatusProved, 4, 4), sec(2, job.StatusProved, 4, 4)}},
	}
	last := -1.0
	for _, p := range steps {
		b.update(p)
		var num, den int
		var unit string
		if _, err := fmt.Sscanf(strings.SplitN(b.last, "] ", 2)[1], "%d/%d %s", &num, &den, &unit); err != nil {
			t.Fatalf("%q: %v", b.last, err)
		}
		if den == 0 {
			t.Fatalf("%q: a zero total", b.last)
		}
		frac := float64(num) / float64(den)
		if frac < last {
			t.Fatalf("%q: went backwards from %.2f", b.last, last)
		}
		last = frac
	}
	if !strings.Contains(b.last, "8/8 partitions") {
		t.Fatalf("final line %q", b.last)
	}
}
