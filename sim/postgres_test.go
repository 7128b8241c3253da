package sim

import (
	"testing"

	"github.com/c2flow/c2flow/devstack/pgtest"
)

// The simulation on Temporal persisted to PostgreSQL with four history
// shards: every sector completes within the budgets.
func TestRunPostgres(t *testing.T) {
	runSmallFleet(t, Config{Postgres: pgtest.URL(t, pgtest.Base(t)), HistoryShards: 4})
}
