package scheme

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/c2flow/c2flow/job"
)

// Policy is how the requests of one kind are served, declared as data by
// the scheme that admits them (as curio's tasks declare their cost): the
// gateway applies it and decides none of it.
type Policy struct {
	// Priorities is the kind's class of c2flow priorities
	// (job.PriorityUrgent, the most urgent, to 5): what a client's high,
	// normal and low request get. A client orders its work within the
	// class, never outside it.
	Priorities Priorities
	// Due, where nonzero, says the chain bounds the proof: a caller that
	// waits for it lends it its own deadline, and otherwise it is due Due
	// after the request. Zero: no deadline (hours of work, none the chain
	// sets at this scale).
	Due time.Duration
	// Forwardable says an operator may send the kind to another prover
	// instead of proving it here (the gateway's --forward).
	Forwardable bool
}

// Priorities are a kind's high, normal and low priorities.
type Priorities struct{ High, Normal, Low int }

// Urgent says the kind's proofs are urgent (job.PriorityUrgent): small and
// worthless late, so their jobs run on job.UrgentTimeouts, on the urgent
// lanes.
func (p Policy) Urgent() bool { return p.Priorities.Normal == job.PriorityUrgent }

// Timeouts are the timeouts of the kind's jobs: job.UrgentTimeouts for an
// urgent kind (a stalled host is given up in seconds and the proof made
// again elsewhere), else the zero value (the defaults).
func (p Policy) Timeouts() job.Timeouts {
	if p.Urgent() {
		return job.UrgentTimeouts()
	}
	return job.Timeouts{}
}

// Deadline is a request's deadline under the policy: none without Due;
// with waiting (the caller waits for the proof) the caller's deadline
// where ctx has one; else Due from now.
func (p Policy) Deadline(ctx context.Context, waiting bool) time.Time {
	if p.Due <= 0 {
		return time.Time{}
	}
	if d, ok := ctx.Deadline(); ok && waiting {
		return d
	}
	return time.Now().Add(p.Due)
}

// Check says what is wrong with a declared policy: priorities outside 1
// to 5 or out of order, or urgency in part of a class only (an urgent
// kind is urgent at every priority, and only it).
func (p Policy) Check() error {
	pr := p.Priorities
	for _, v := range []int{pr.High, pr.Normal, pr.Low} {
		if v < job.PriorityUrgent || v > 5 {
			return fmt.Errorf("policy priorities %+v: %d is outside %d to 5", pr, v, job.PriorityUrgent)
		}
	}
	if pr.High > pr.Normal || pr.Normal > pr.Low {
		return fmt.Errorf("policy priorities %+v: high, normal and low out of order", pr)
	}
	if (pr.High == job.PriorityUrgent) != (pr.Low == job.PriorityUrgent) {
		return fmt.Errorf("policy priorities %+v: urgent at some priorities only", pr)
	}
	if p.Due < 0 {
		return fmt.Errorf("policy due %v: negative", p.Due)
	}
	return nil
}

// Admission is an admitted request: the job's identity, the canonical
// input stored under it, and how its kind is served.
type Admission struct {
	Ref    job.Ref
	Input  []byte
	Policy Policy
}

// Policy is the policy of requests of kind, declared by the scheme that
// admits them; ok is false where no scheme of the set admits the kind.
func (s Set) Policy(kind string) (Policy, bool) {
	a, err := s.Admitter(kind)
	if err != nil {
		return Policy{}, false
	}
	return a.Policy(kind), true
}

// KindOf is the request kind of a job of proof, by the Admitter that owns
// proof; ok is false where none does (a proof only files submit).
func (s Set) KindOf(proof string) (string, bool) {
	for _, sc := range s {
		if a, is := sc.(Admitter); is && sc.Owns(proof) {
			k := a.KindOf(proof)
			return k, k != ""
		}
	}
	return "", false
}

// Admit admits r through the scheme of its kind and returns the admission
// with the kind's policy; every error that is the request's fault wraps
// ErrBadRequest.
func (s Set) Admit(ctx context.Context, r Request) (Admission, error) {
	a, err := s.Admitter(r.Kind)
	if err != nil {
		return Admission{}, err
	}
	ref, raw, err := a.Admit(ctx, r)
	if err != nil {
		if ctx.Err() == nil && !errors.Is(err, ErrBadRequest) {
			err = fmt.Errorf("%w: %w", ErrBadRequest, err)
		}
		return Admission{}, err
	}
	return Admission{Ref: ref, Input: raw, Policy: a.Policy(r.Kind)}, nil
}
