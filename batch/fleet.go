package batch

import (
	"context"
	"fmt"
	"sort"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/c2flow/c2flow/job"
)

// Poller is a worker seen polling one of the fleet's shared queues.
type Poller struct {
	Queue    string    `json:"queue"`
	Kind     string    `json:"kind"`     // workflow or activity
	Identity string    `json:"identity"` // id host=.. roles=.. devices=.. budget=..
	LastSeen time.Time `json:"last_seen"`
}

// Fleet lists the workers polling the shared queues, as Temporal sees
// them: workflows (c2flow), synthesis (c2flow-synth) and spilled device
// phases (c2flow-device).
func Fleet(ctx context.Context, c client.Client) ([]Poller, error) {
	var out []Poller
	for _, q := range []struct {
		name string
		kind enumspb.TaskQueueType
	}{
		{job.QueueWorkflow, enumspb.TASK_QUEUE_TYPE_WORKFLOW},
		{job.QueueSynth, enumspb.TASK_QUEUE_TYPE_ACTIVITY},
		{job.QueueDevice, enumspb.TASK_QUEUE_TYPE_ACTIVITY},
	} {
		resp, err := c.DescribeTaskQueue(ctx, q.name, q.kind)
		if err != nil {
			return nil, fmt.Errorf("describe %s: %w", q.name, err)
		}
		kind := "activity"
		if q.kind == enumspb.TASK_QUEUE_TYPE_WORKFLOW {
			kind = "workflow"
		}
		for _, p := range resp.GetPollers() {
			out = append(out, Poller{Queue: q.name, Kind: kind, Identity: p.GetIdentity(), LastSeen: p.GetLastAccessTime().AsTime()})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Queue != out[j].Queue {
			return out[i].Queue < out[j].Queue
		}
		return out[i].Identity < out[j].Identity
	})
	return out, nil
}
