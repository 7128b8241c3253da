//go:build record

package integration

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/temporalproto"

	"github.com/c2flow/c2flow/activities"
	"github.com/c2flow/c2flow/batch"
	"github.com/c2flow/c2flow/job"
	"github.com/c2flow/c2flow/scheme/testscheme/porep/poreptest"
)

// recordEnv names the directory TestRecordHistories writes to
// (workflows/testdata): the histories workflows' replay test replays, so
// that a change of the workflows' shape that breaks batches in flight
// fails a test. Record them again only where the workflows change on
// purpose under a new version.
const recordEnv = "C2FLOW_RECORD_HISTORIES"

// TestRecordHistories (built with -tags record:
// C2FLOW_RECORD_HISTORIES=$PWD/workflows/testdata go test -tags record -run
// TestRecordHistories ./integration/) runs a batch of a good and a corrupt 32KiB sector
// on a real Temporal server and writes the batch's and each sector's
// history as JSON.
func TestRecordHistories(t *testing.T) {
	dir := os.Getenv(recordEnv)
	if dir == "" {
		t.Fatalf("set %s=DIR (workflows/testdata) to record workflow histories for the replay test", recordEnv)
	}
	s := newStack(t, "32KiB")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	s.startWorker("w1", activities.Config{PartitionWorkers: 2})
	good := poreptest.Sector(t, "32KiB", 201).C1()
	bad := poreptest.Sector(t, "32KiB", 202).C1()
	bad.Partitions[1].Challenges[0].ColumnPath[2].SetUint64(9)
	refs := []job.Ref{s.putC1(good), s.putC1(bad)}
	res := s.run(ctx, batch.Options{BatchID: "replay"}, refs)
	if len(res.Sectors) != 2 {
		t.Fatalf("%d sectors", len(res.Sectors))
	}
	save := func(name, wid string) {
		events, err := workflowHistory(ctx, s.client, wid)
		if err != nil {
			t.Fatal(err)
		}
		h := historypb.History{Events: events}
		b, err := temporalproto.CustomJSONMarshalOptions{Indent: " "}.Marshal(&h)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %d events", name, len(h.Events))
	}
	save("history-batch.json", job.BatchWorkflowID("replay"))
	save("history-sector-proved.json", job.SectorWorkflowID(refs[0]))
	save("history-sector-badc1.json", job.SectorWorkflowID(refs[1]))
}
