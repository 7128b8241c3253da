package gateway

import (
	"context"
	"time"

	"github.com/c2flow/c2flow/gateway/cuzkpb"
	"github.com/c2flow/c2flow/job"
	"github.com/c2flow/c2flow/scheme"
)

// PoStDeadline is a PoSt request's deadline where its call carries none:
// Curio's default ProveTimeout (lib/cuzk/client.go proveTimeout, [Cuzk]
// ProveTimeout).
const PoStDeadline = 30 * time.Minute

// cuzkKind is what the gateway does with one of cuzk's proof kinds.
type cuzkKind struct {
	kind string // the scheme request kind that admits it (scheme.Set.Admit)
	name string // cuzk's name for it in GetStatus and metrics (cuzk-core types.rs Display)
	// circuit is the prefix of its circuit ids in PreloadSRS and EvictSRS
	// ("porep-32g").
	circuit string
	// class is its request-memory class (budget.go).
	class class
	// prio is its class of c2flow priorities (1 most urgent to 5): a
	// client's priority orders its work within the class and never
	// outside it.
	prio struct{ high, normal, low int }
	// post: a chain deadline bounds it (deadlineOf), and --forward sends
	// it to a cuzk daemon instead.
	post bool
}

// cuzkKinds is the one table of cuzk's proof kinds; nothing else in the
// gateway names one. Priority 1 (job.PriorityUrgent: the urgent lanes, the
// urgent timeouts) is WinningPoSt's alone, whose late proof is a lost
// block. WindowPoSt comes next (a late one is a faulted partition), then
// PoRep and SnapDeals. Curio's CRITICAL on a PoRep (a careless config, or
// a client buying priority) is served as a PoRep's highest.
var cuzkKinds = map[cuzkpb.ProofKind]cuzkKind{
	cuzkpb.ProofKind_POREP_SEAL_COMMIT: {kind: scheme.KindPoRep, name: "porep-c2", circuit: "porep-", class: classGeneral,
		prio: struct{ high, normal, low int }{3, 3, 4}},
	cuzkpb.ProofKind_SNAP_DEALS_UPDATE: {kind: scheme.KindSnap, name: "snap-update", circuit: "snap-", class: classGeneral,
		prio: struct{ high, normal, low int }{3, 3, 4}},
	cuzkpb.ProofKind_WINDOW_POST_PARTITION: {kind: scheme.KindWindowPoSt, name: "window-post", circuit: "wpost-", class: classWindow,
		prio: struct{ high, normal, low int }{2, 2, 2}, post: true},
	cuzkpb.ProofKind_WINNING_POST: {kind: scheme.KindWinningPoSt, name: "winning-post", circuit: "winning-", class: classWinning,
		prio: struct{ high, normal, low int }{job.PriorityUrgent, job.PriorityUrgent, job.PriorityUrgent}, post: true},
}

// kindName is a proof kind as cuzk names it.
func kindName(k cuzkpb.ProofKind) string {
	if c, ok := cuzkKinds[k]; ok {
		return c.name
	}
	return k.String()
}

// classOf is a proof kind's request-memory class; an unknown kind's is
// the general class.
func classOf(k cuzkpb.ProofKind) class { return cuzkKinds[k].class }

// deadlineOf is a request's deadline: none for PoRep and SnapDeals (hours
// of work, no chain deadline at this scale); for a PoSt, with blocking (a
// Prove, which waits for the proof) its call's deadline (Curio's Prove sets
// its ProveTimeout on the call), else PoStDeadline from now (a SubmitProof
// call's deadline is the submission's, not the proof's).
func deadlineOf(ctx context.Context, k cuzkpb.ProofKind, blocking bool) time.Time {
	if !cuzkKinds[k].post {
		return time.Time{}
	}
	if d, ok := ctx.Deadline(); ok && blocking {
		return d
	}
	return time.Now().Add(PoStDeadline)
}

// proves says whether a scheme of this gateway admits requests of kind k
// and the operator did not send them elsewhere: with --forward, PoSt
// kinds go to the cuzk daemon named.
func (s *Server) proves(k cuzkpb.ProofKind) bool {
	c, ok := cuzkKinds[k]
	if !ok || s.cfg.Forward != nil && c.post {
		return false
	}
	_, err := s.cfg.Schemes.Admitter(c.kind)
	return err == nil
}

// priority maps cuzk's priority onto c2flow's priority keys within the
// kind's class: CRITICAL and HIGH its highest, NORMAL, UNSPECIFIED (cuzk's
// default for the kind) and an unknown value its normal, LOW its lowest.
// asked is the priority the client asked for where the class overrode
// it (0 where not): the log says so.
func priority(p cuzkpb.Priority, k cuzkpb.ProofKind) (prio, asked int) {
	kc, ok := cuzkKinds[k]
	c := kc.prio
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
