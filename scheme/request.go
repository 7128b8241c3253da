package scheme

import (
	"context"
	"errors"
	"fmt"

	"github.com/c2flow/c2flow/job"
)

// Request kinds: the kinds of proving request a network client sends
// (cuzk's ProofKind), each served by the scheme that admits it.
const (
	KindPoRep       = "porep"
	KindSnap        = "snap"
	KindWindowPoSt  = "window-post"
	KindWinningPoSt = "winning-post"
)

// Request is one proving request as a network client sends it (cuzk's
// SubmitProofRequest, read field by field by the gateway), in the client's
// own terms: registered proofs by the client's numbers, commitments as
// given. The scheme admitting its kind reads what concerns it.
type Request struct {
	Kind            string
	RegisteredProof uint64
	MinerID         uint64
	// ProverID, where set, is the prover's 32-byte id as given (c2flow
	// submit --prover-id); unset, a kind with a prover derives it from
	// MinerID as Filecoin does.
	ProverID     *[32]byte
	SectorNumber uint64
	SectorSize   uint64 // 0: not given
	// Envelope is the request's one blob (cuzk's vanilla_proof), Vanilla
	// its list (vanilla_proofs).
	Envelope []byte
	Vanilla  [][]byte
	// Randomness, PartitionIndex and the commitments, where the kind has
	// them.
	Randomness                   []byte
	PartitionIndex               uint32
	CommROld, CommRNew, CommDNew []byte
}

// ErrBadRequest is wrapped by every Admit error that is the request's
// fault (as opposed to a canceled context).
var ErrBadRequest = errors.New("bad request")

// Admitter is a scheme that takes requests from network clients (the
// cuzk gateway). Admit checks a request as Identify checks a file (decoded
// strictly, bound to its prover and sector, verified natively) and
// returns the job's identity with the canonical input to store under it:
// the same content sent in other bytes is the same job.
type Admitter interface {
	Scheme
	Kinds() []string
	Admit(ctx context.Context, r Request) (job.Ref, []byte, error)
	// Policy is how requests of kind (one of Kinds) are served: the
	// scheme declares it, the gateway applies it.
	Policy(kind string) Policy
	// KindOf is the request kind (one of Kinds) that a job of proof, one
	// of the scheme's, is: what status reports count running jobs by.
	KindOf(proof string) string
}

// Admitter returns the scheme admitting requests of kind.
func (s Set) Admitter(kind string) (Admitter, error) {
	for _, sc := range s {
		if a, ok := sc.(Admitter); ok {
			for _, k := range a.Kinds() {
				if k == kind {
					return a, nil
				}
			}
		}
	}
	return nil, fmt.Errorf("no scheme of this host proves %s requests", kind)
}

// Bound is the most a request of one kind and registered proof can carry:
// what the gateway checks on the message's bytes before protobuf decodes
// them, so a request's cost is bounded by its proof, not by the transport's
// limit. Zero entries or envelope bytes: the kind sends none.
type Bound struct {
	// Entries bounds the list (vanilla_proofs) and EntryBytes each entry.
	Entries    int
	EntryBytes int64
	// EnvelopeBytes bounds the blob (vanilla_proof); TotalBytes the list
	// and the blob together.
	EnvelopeBytes, TotalBytes int64
}

// Bounder is an Admitter that bounds its requests before they are decoded.
type Bounder interface {
	// RequestBound is Bound of a request of kind for registeredProof (the
	// client's number); an error names a proof the kind does not have.
	RequestBound(kind string, registeredProof uint64) (Bound, error)
}

// RequestBound is the Bound of a request of kind through the scheme that
// admits it; ok is false where that scheme sets none (or none admits the
// kind).
func (s Set) RequestBound(kind string, registeredProof uint64) (b Bound, ok bool, err error) {
	a, err := s.Admitter(kind)
	if err != nil {
		return Bound{}, false, nil
	}
	bd, ok := a.(Bounder)
	if !ok {
		return Bound{}, false, nil
	}
	b, err = bd.RequestBound(kind, registeredProof)
	if err != nil {
		return Bound{}, false, fmt.Errorf("%w: %w", ErrBadRequest, err)
	}
	return b, true, nil
}
