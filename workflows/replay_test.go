package workflows_test

import (
	"path/filepath"
	"testing"

	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/c2flow/c2flow/job"
	"github.com/c2flow/c2flow/workflows"
)

// Histories recorded on a real Temporal server from the workflows as they
// were (integration's TestRecordHistories: a batch of a proved 32KiB
// sector and one with a corrupt C1) replay on the workflows as they are:
// batches in flight across an upgrade carry on. A change that issues other
// commands fails here, and must then go behind workflow.GetVersion.
func TestReplayRecordedHistories(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "history-*.json"))
	if err != nil || len(files) != 3 {
		t.Fatalf("recorded histories: %v %v", files, err)
	}
	r := worker.NewWorkflowReplayer()
	r.RegisterWorkflowWithOptions(workflows.BatchWorkflow, workflow.RegisterOptions{Name: job.BatchWorkflowName})
	r.RegisterWorkflowWithOptions(workflows.SectorWorkflow, workflow.RegisterOptions{Name: job.SectorWorkflowName})
	for _, f := range files {
		if err := r.ReplayWorkflowHistoryFromJSONFile(nil, f); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
}
