package gateway

import (
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/c2flow/c2flow/batch"
	"github.com/c2flow/c2flow/internal/clip"
	"github.com/c2flow/c2flow/job"
	"github.com/c2flow/c2flow/scheme"
)

// proofJob is a job of a kind c2flow proves: one sector identity and its
// proof. Its id names both, so that any gateway can await or cancel it
// with nothing but Temporal and S3:
// <kind>/<proof>/<prover hex>/<sector>/<input digest hex>, kind a
// scheme's request kind ("porep", "snap").
type proofJob struct {
	kind     string
	ref      job.Ref // Profile is the proof
	priority int     // c2flow's 1 (most urgent) to 5; 0: 3
	// deadline, for a PoSt, is when its proof is no longer of use: past it
	// the job fails, named, instead of being proved late.
	deadline time.Time
	// timeouts are its kind's (scheme.Policy.Timeouts): a WinningPoSt's
	// urgent ones, else the defaults.
	timeouts job.Timeouts
}

// id encodes the job's id; parseJobID reads it back.
func (j proofJob) id() string { return j.kind + "/" + j.ref.Proof + "/" + j.ref.Identity() }

// batchID is the job's batch: derived from the sector's identity, so every
// request for it, from any gateway (or `c2flow submit` of the same input),
// names the same batch workflow.
func (j proofJob) batchID() string { return batch.ID([]job.Ref{j.ref}) }

// parseJobID reads a job id (proofJob.id), strictly: a kind some scheme
// of set admits, a proof that scheme owns, a 32-byte prover id and
// digest, a sector number. An id over MaxJobIDBytes is refused unread, and an
// error quotes at most the head of what it was given.
func parseJobID(id string, set scheme.Set) (proofJob, error) {
	if len(id) > MaxJobIDBytes {
		return proofJob{}, fmt.Errorf("job id of %d bytes (%s): a c2flow job id has at most %d", len(id), quoteHead(id), MaxJobIDBytes)
	}
	parts := strings.Split(id, "/")
	if len(parts) != 5 {
		return proofJob{}, fmt.Errorf("job id %s: not a c2flow job id (<kind>/<proof>/<prover>/<sector>/<input digest>, or fwd:<id> for a forwarded job)", quoteHead(id))
	}
	a, err := set.Admitter(parts[0])
	if err != nil {
		return proofJob{}, fmt.Errorf("job id %s: kind %s: %w", quoteHead(id), quoteHead(parts[0]), err)
	}
	if !a.Owns(parts[1]) {
		return proofJob{}, fmt.Errorf("job id %s: %s is not a proof of %s jobs", quoteHead(id), quoteHead(parts[1]), parts[0])
	}
	sector, err := strconv.ParseUint(parts[3], 10, 64)
	if err != nil {
		return proofJob{}, fmt.Errorf("job id %s: sector number: %w", quoteHead(id), err)
	}
	for _, h := range []struct{ what, s string }{{"prover id", parts[2]}, {"input digest", parts[4]}} {
		if b, err := hex.DecodeString(h.s); err != nil || len(b) != 32 || h.s != strings.ToLower(h.s) {
			return proofJob{}, fmt.Errorf("job id %s: %s is not 32 bytes of lower-case hex", quoteHead(id), h.what)
		}
	}
	return proofJob{kind: parts[0], ref: job.Ref{ProverID: parts[2], SectorID: sector, InputDigest: parts[4], Proof: parts[1]}}, nil
}

// quoteHead quotes s, or its first 64 bytes when longer: a client's
// string is never echoed whole into a log or an error.
func quoteHead(s string) string {
	const head = 64
	if len(s) <= head {
		return strconv.Quote(s)
	}
	return strconv.Quote(clip.Head(s, head)) + fmt.Sprintf(" (%d bytes)", len(s))
}

// badRequest marks an error that is the request's fault: a FAILED result
// (Prove) or InvalidArgument (SubmitProof), never retried by the fleet.
type badRequest struct{ err error }

func (e *badRequest) Error() string { return e.err.Error() }

func (e *badRequest) Unwrap() error { return e.err }
