package gateway

import (
	"github.com/c2flow/c2flow/gateway/cuzkpb"
	"github.com/c2flow/c2flow/scheme"
)

// cuzkKind is one of cuzk's proof kinds in c2flow's terms. What a kind's
// requests are due, their priorities and whether --forward may take them
// is its scheme's declared policy (scheme.Policy), not the gateway's.
type cuzkKind struct {
	kind string // the scheme request kind that admits it (scheme.Set.Admit)
	name string // cuzk's name for it in GetStatus and metrics (cuzk-core types.rs Display)
	// circuit is the prefix of its circuit ids in PreloadSRS and EvictSRS
	// ("porep-32g").
	circuit string
}

// cuzkKinds is the one table of cuzk's proof kinds; nothing else in the
// gateway names one.
var cuzkKinds = map[cuzkpb.ProofKind]cuzkKind{
	cuzkpb.ProofKind_POREP_SEAL_COMMIT:     {kind: scheme.KindPoRep, name: "porep-c2", circuit: "porep-"},
	cuzkpb.ProofKind_SNAP_DEALS_UPDATE:     {kind: scheme.KindSnap, name: "snap-update", circuit: "snap-"},
	cuzkpb.ProofKind_WINDOW_POST_PARTITION: {kind: scheme.KindWindowPoSt, name: "window-post", circuit: "wpost-"},
	cuzkpb.ProofKind_WINNING_POST:          {kind: scheme.KindWinningPoSt, name: "winning-post", circuit: "winning-"},
}

// kindName is a proof kind as cuzk names it.
func kindName(k cuzkpb.ProofKind) string {
	if c, ok := cuzkKinds[k]; ok {
		return c.name
	}
	return k.String()
}

// cuzkName is cuzk's name of the cuzk kind that scheme request kind kind
// serves; ok is false where none does.
func cuzkName(kind string) (string, bool) {
	for _, c := range cuzkKinds {
		if c.kind == kind {
			return c.name, true
		}
	}
	return "", false
}

// policy is the declared policy of a cuzk proof kind's scheme; ok is
// false for a kind no scheme of this gateway admits (or cuzk's table
// lacks).
func (s *Server) policy(k cuzkpb.ProofKind) (scheme.Policy, bool) {
	c, ok := cuzkKinds[k]
	if !ok {
		return scheme.Policy{}, false
	}
	return s.cfg.Schemes.Policy(c.kind)
}

// classOf is a proof kind's request-memory class (budget.go) by its
// policy: an urgent kind's, a chain-bound kind's, and the general class
// for the rest (and a kind no scheme admits).
func (s *Server) classOf(k cuzkpb.ProofKind) class {
	p, ok := s.policy(k)
	switch {
	case !ok:
		return classGeneral
	case p.Urgent():
		return classUrgent
	case p.Due > 0:
		return classDue
	}
	return classGeneral
}

// proves says whether a scheme of this gateway admits requests of kind k
// and the operator did not send them elsewhere: with --forward, the kinds
// whose policy lets them be forwarded go to the cuzk daemon named.
func (s *Server) proves(k cuzkpb.ProofKind) bool {
	p, ok := s.policy(k)
	return ok && !(s.cfg.Forward != nil && p.Forwardable)
}

// priority maps cuzk's priority onto the priorities of the kind's policy:
// CRITICAL and HIGH its highest, NORMAL, UNSPECIFIED (cuzk's default for
// the kind) and an unknown value its normal, LOW its lowest. asked is the
// priority the client asked for where the class overrode it (0 where
// not): the log says so. Curio's CRITICAL on a PoRep (a careless config,
// or a client buying priority) is served as a PoRep's highest.
func priority(p cuzkpb.Priority, c scheme.Priorities) (prio, asked int) {
	switch p {
	case cuzkpb.Priority_CRITICAL:
		prio, asked = c.High, 1
	case cuzkpb.Priority_HIGH:
		prio, asked = c.High, 2
	case cuzkpb.Priority_LOW:
		prio, asked = c.Low, 4
	default:
		return c.Normal, 0
	}
	if asked < prio {
		return prio, asked
	}
	return prio, 0
}
