package scheme

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/c2flow/c2flow/job"
)

// A policy's deadline, timeouts and urgency follow what it declares, and
// Check refuses one the gateway could not apply soundly.
func TestPolicy(t *testing.T) {
	porep := Policy{Priorities: Priorities{High: 3, Normal: 3, Low: 4}}
	winning := Policy{Priorities: Priorities{High: 1, Normal: 1, Low: 1}, Due: 30 * time.Minute, Forwardable: true}
	ctx, cancel := context.WithDeadline(context.Background(), time.Now().Add(time.Hour))
	defer cancel()
	if d := porep.Deadline(ctx, true); !d.IsZero() {
		t.Errorf("a kind with no due time has deadline %v", d)
	}
	if d, _ := ctx.Deadline(); !winning.Deadline(ctx, true).Equal(d) {
		t.Error("a waiting caller's deadline is not the proof's")
	}
	if d := winning.Deadline(ctx, false); d.After(time.Now().Add(31*time.Minute)) || d.Before(time.Now().Add(29*time.Minute)) {
		t.Errorf("a submitted chain-bound proof is due %v, want in 30 minutes", d)
	}
	if porep.Urgent() || !winning.Urgent() || winning.Timeouts() != job.UrgentTimeouts() || porep.Timeouts() != (job.Timeouts{}) {
		t.Error("urgency or timeouts do not follow the priorities")
	}
	for _, p := range []Policy{porep, winning} {
		if err := p.Check(); err != nil {
			t.Errorf("Check(%+v): %v", p, err)
		}
	}
	for want, p := range map[string]Policy{
		"outside":       {},
		"out of order":  {Priorities: Priorities{High: 4, Normal: 3, Low: 3}},
		"some priorit":  {Priorities: Priorities{High: 1, Normal: 2, Low: 2}},
		"negative":      {Priorities: Priorities{High: 2, Normal: 2, Low: 2}, Due: -time.Second},
		"outside 1 to ": {Priorities: Priorities{High: 3, Normal: 3, Low: 6}},
	} {
		if err := p.Check(); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Check(%+v) = %v, want an error naming %q", p, err, want)
		}
	}
}
