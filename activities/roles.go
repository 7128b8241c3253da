package activities

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	sdkworker "go.temporal.io/sdk/worker"

	"github.com/c2flow/c2flow/job"
	"github.com/c2flow/c2flow/workflows"
)

// register builds the Temporal workers of the configured roles over the
// host's activities: each queue's concurrency is where the host's
// backpressure lives (the synthesis queue's slots are the budget).
func (w *Worker) register(c client.Client) error {
	cfg, h := &w.cfg, w.host
	// Priority 1's syntheses have their own reserve: their witnesses wait
	// for devices and finalize beside the budget's.
	budgetN := h.Budget.Stats().Max
	if h.Urgent != nil {
		budgetN += h.Urgent.Stats().Max
	}
	// The identity is what Temporal shows for every poller and attempt of
	// this worker (c2flow fleet, the UI, activity history).
	hn, _ := os.Hostname()
	identity := fmt.Sprintf("%s host=%s roles=%s devices=%s budget=%d", cfg.ID, hn, strings.Join(cfg.Roles, ","), strings.Join(w.deviceNames(), ","), budgetN)
	// Long activities heartbeat through the client, not the SDK
	// (Host.heartbeat): the SDK gives a heartbeat RPC no longer than its
	// throttle interval before it cancels the activity, so a host stalled
	// for seconds would cancel its own work. The SDK heartbeats only to
	// learn of a cancel, with the throttle at 5 s (a shorter one turned a
	// CPU-starved frontend into spurious cancels: at 2 s, every 2KiB
	// Filecoin device phase on a loaded 2-core host).
	base := sdkworker.Options{Identity: identity, MaxHeartbeatThrottleInterval: 5 * time.Second, WorkerStopTimeout: 30 * time.Second}
	queue := func(name string, concurrency int) sdkworker.Worker {
		o := base
		o.DisableWorkflowWorker, o.MaxConcurrentActivityExecutionSize = true, concurrency
		wk := sdkworker.New(c, name, o)
		w.workers = append(w.workers, wk)
		return wk
	}
	reg := func(wk sdkworker.Worker, name string, f any) {
		wk.RegisterActivityWithOptions(f, activity.RegisterOptions{Name: name})
	}
	if cfg.has(RoleWorkflow) {
		wk := sdkworker.New(c, job.QueueWorkflow, base)
		workflows.Register(wk)
		reg(wk, job.ActValidateC1, h.ValidateC1)
		reg(wk, job.ActStoreC2, h.StoreC2)
		reg(wk, job.ActLookupC2, h.LookupC2)
		reg(wk, job.ActDropInput, h.DropInput)
		w.workers = append(w.workers, wk)
	}
	prove, synthOnly, device := cfg.has(RoleProve), cfg.has(RoleSynth), cfg.has(RoleDevice)
	if prove || synthOnly || device {
		// Host queues first: a synthesized witness must find its host's
		// queues polled.
		reg(queue(job.ControlQueue(cfg.ID), 16), job.ActRelease, h.Release)
	}
	if prove {
		// Every witness in memory may wait here for a device (the budget),
		// beside those on a device past the point where they left the
		// budget (two per slot: its ordinary and urgent lanes): the slots,
		// not Temporal's queue, decide which runs next (most urgent, then
		// oldest sector first).
		reg(queue(job.DeviceQueue(cfg.ID), budgetN+2*w.slots.Len()), job.ActDevicePhase, h.DevicePhase)
	}
	if device {
		// Spilled witnesses are loaded when their device phase starts:
		// one on each device and one loaded, waiting, per device, and one
		// in each device's urgent lane.
		reg(queue(job.QueueDevice, 3*w.slots.Len()), job.ActDevicePhase, h.DevicePhase)
	}
	if prove || device {
		// Every witness may wait for its finalize inside the activity
		// (heartbeating) for one of the CPU slots: the host's queue is
		// always drained, so a finalize left in it means the host is gone.
		reg(queue(job.FinalizeQueue(cfg.ID), budgetN+3*w.slots.Len()), job.ActFinalize, h.Finalize)
	}
	if prove || synthOnly {
		// Every synthesis host polls the urgent queue too, within its
		// reserve (or its budget, without one): a priority-1 synthesis
		// never waits for a PoRep's to end.
		for _, q := range []struct {
			name   string
			budget *Budget
			f      func(context.Context, job.SynthInput) (job.SynthOutput, error)
		}{{job.QueueSynth, h.Budget, h.Synthesize}, {job.QueueSynthUrgent, h.urgentBudget(), h.SynthesizeUrgent}} {
			fixed := func(n int) sdkworker.SlotSupplier {
				s, _ := sdkworker.NewFixedSizeSlotSupplier(n)
				return s
			}
			tuner, err := sdkworker.NewCompositeTuner(sdkworker.CompositeTunerOptions{
				WorkflowSlotSupplier: fixed(1), ActivitySlotSupplier: q.budget,
				LocalActivitySlotSupplier: fixed(1), NexusSlotSupplier: fixed(1), SessionActivitySlotSupplier: fixed(1)})
			if err != nil {
				return fmt.Errorf("synthesis queue %s tuner: %w", q.name, err)
			}
			o := base
			o.Tuner, o.DisableWorkflowWorker = tuner, true
			synth := sdkworker.New(c, q.name, o)
			reg(synth, job.ActSynthesize, q.f)
			w.workers = append(w.workers, synth)
			w.synth = append(w.synth, synth)
		}
	}
	return nil
}
