package workflows

import (
	"errors"
	"strings"

	"go.temporal.io/sdk/temporal"

	"github.com/c2flow/c2flow/job"
)

// brief is err as one line for people: what c2flow's own wrapping says
// (sector, partition) and, for an activity, its phase and the activity's
// own message, without what Temporal adds around them (event and run
// ids, identities, "retryable: true/false", the same cause repeated by
// every layer). The whole chain goes to the log.
func brief(err error) string {
	return strings.ReplaceAll(briefOf(err), "\n", "; ")
}

func briefOf(err error) string {
	if err == nil {
		return ""
	}
	switch e := err.(type) {
	case *temporal.ActivityError:
		return phaseOf(e.ActivityType().GetName()) + ": " + briefOf(e.Unwrap())
	case *temporal.ChildWorkflowExecutionError:
		return briefOf(e.Unwrap())
	case *temporal.ApplicationError:
		msg := e.Message()
		if c := e.Unwrap(); c != nil {
			if cb := briefOf(c); !strings.Contains(msg, cb) {
				msg += ": " + cb
			}
		}
		// c2flow's error types say whose fault it is (BadC1: the input's),
		// once.
		if t := e.Type(); ownTypes[t] && !strings.Contains(msg, t) {
			msg += " (" + t + ")"
		}
		return msg
	case *temporal.TimeoutError:
		msg := "timed out (" + strings.ToLower(strings.TrimPrefix(e.TimeoutType().String(), "TIMEOUT_TYPE_")) + ")"
		if c := e.Unwrap(); c != nil {
			msg += ": " + briefOf(c)
		}
		return msg
	case *temporal.CanceledError:
		return "canceled"
	}
	// c2flow's own fmt.Errorf("...: %w") wrapping: keep its words, brief
	// what it wraps.
	if u := errors.Unwrap(err); u != nil {
		if prefix, ok := strings.CutSuffix(err.Error(), u.Error()); ok {
			return prefix + briefOf(u)
		}
	}
	return err.Error()
}

// ownTypes are c2flow's application error types (job.Err*).
var ownTypes = map[string]bool{job.ErrBadC1: true, job.ErrWitnessLost: true, job.ErrInvalidProof: true,
	job.ErrNoKeys: true, job.ErrHostLost: true, job.ErrDeadlinePassed: true, job.ErrBadPriority: true}

// phaseOf names an activity by the step it runs.
func phaseOf(activity string) string {
	switch activity {
	case "ValidateC1":
		return "validate"
	case "Synthesize":
		return "synthesize"
	case "DevicePhase":
		return "device"
	case "Finalize":
		return "finalize"
	case "StoreC2":
		return "store"
	case "LookupC2":
		return "lookup"
	}
	return activity
}
