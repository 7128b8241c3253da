package gateway

import (
	"context"
	"github.com/c2flow/c2flow/job"
	"time"

	"github.com/c2flow/c2flow/gateway/cuzkpb"
	"github.com/c2flow/c2flow/scheme"
)

// PoStDeadline is a PoSt request's deadline where its call carries none:
// Curio's default ProveTimeout (lib/cuzk/client.go proveTimeout, [Cuzk]
// ProveTimeout).
const PoStDeadline = 30 * time.Minute

// deadlineOf is a request's deadline: none for PoRep and SnapDeals (hours
// of work, no chain deadline at this scale); for a PoSt, with blocking (a
// Prove, which waits for the proof) its call's deadline (Curio's Prove sets
// its ProveTimeout on the call), else PoStDeadline from now (a SubmitProof
// call's deadline is the submission's, not the proof's).
func deadlineOf(ctx context.Context, kind string, blocking bool) time.Time {
	if kind != scheme.KindWindowPoSt && kind != scheme.KindWinningPoSt {
		return time.Time{}
	}
	if d, ok := ctx.Deadline(); ok && blocking {
		return d
	}
	return time.Now().Add(PoStDeadline)
}

// requestKinds are the request kinds of cuzk's proof kinds.
var requestKinds = map[cuzkpb.ProofKind]string{
	cuzkpb.ProofKind_POREP_SEAL_COMMIT:     scheme.KindPoRep,
	cuzkpb.ProofKind_SNAP_DEALS_UPDATE:     scheme.KindSnap,
	cuzkpb.ProofKind_WINDOW_POST_PARTITION: scheme.KindWindowPoSt,
	cuzkpb.ProofKind_WINNING_POST:          scheme.KindWinningPoSt,
}

// proves says whether a scheme of this gateway admits requests of kind k
// and the operator did not send them elsewhere: with --forward, PoSt
// kinds go to the cuzk daemon named.
func (s *Server) proves(k cuzkpb.ProofKind) bool {
	kind, ok := requestKinds[k]
	if !ok {
		return false
	}
	if s.cfg.Forward != nil && (kind == scheme.KindWindowPoSt || kind == scheme.KindWinningPoSt) {
		return false
	}
	_, err := s.cfg.Schemes.Admitter(kind)
	return err == nil
}

// priorityClasses is each kind's class of c2flow priorities (1 most urgent to 5):
// a client's priority orders its work within its kind's class and never
// outside it. 1 is the urgent lanes (the urgent synthesis reserve, a
// device's second holder, no finalize or validation slot): WinningPoSt's
// alone, whose late proof is a lost block. WindowPoSt comes next (a late
// one is a faulted partition), then PoRep and SnapDeals. Curio's CRITICAL
// on a PoRep (a careless config, or a client buying priority) is served
// as a PoRep's highest.
var priorityClasses = map[cuzkpb.ProofKind]struct{ high, normal, low int }{
	cuzkpb.ProofKind_WINNING_POST:          {job.PriorityUrgent, job.PriorityUrgent, job.PriorityUrgent},
	cuzkpb.ProofKind_WINDOW_POST_PARTITION: {2, 2, 2},
	cuzkpb.ProofKind_POREP_SEAL_COMMIT:     {3, 3, 4},
	cuzkpb.ProofKind_SNAP_DEALS_UPDATE:     {3, 3, 4},
}

// priority maps cuzk's priority onto c2flow's priority keys within the
// kind's class: CRITICAL and HIGH its highest, NORMAL, UNSPECIFIED (cuzk's
// default for the kind) and an unknown value its normal, LOW its lowest.
// asked is the priority the client asked for where the class overrode
// it (0 where not): the log says so.
func priority(p cuzkpb.Priority, k cuzkpb.ProofKind) (prio, asked int) {
	c, ok := priorityClasses[k]
	if !ok {
		c.high, c.normal, c.low = 3, 3, 4
	}
	switch p {
	case cuzkpb.Priority_CRITICAL:
		prio, asked = c.high, 1
	case cuzkpb.Priority_HIGH:
		prio, asked = c.high, 2
	case cuzkpb.Priority_LOW:
		prio, asked = c.low, 4
	default:
		return c.normal, 0
	}
	if asked < prio {
		return prio, asked
	}
	return prio, 0
}
