package activities

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"sync"
	"time"

	"github.com/c2flow/c2flow/job"
)

// witness is a partition's in-memory state between activities on one host.
type witness struct {
	ref     job.Ref
	k       int
	solved  Solution // until the device phase
	proving Partial  // after the device phase, until finalize
	bytes   int64    // budget bytes held until the device phase frees them
	budget  *Budget  // the budget holding them (nil: the host's)
	// priority is the device phase's (job.TaskPriority): its finalize
	// goes by it.
	priority int
	spill    string // key of the spilled copy (synthesis-only host)
	// made names the synthesis activity that made it (synthesisOf): a
	// retried attempt's witness beside an earlier attempt's is counted.
	made    string
	loaded  bool // loaded from a spill: not in this host's budget
	created time.Time
	// dropAt, if set, drops the idle witness before the TTL: an own-queue
	// witness no device phase has claimed (see job.SynthInput.ClaimWithin),
	// or a finalized partition's proof kept for a retried finalize.
	dropAt time.Time
	// proof is the finalized, verified partition proof: a finalize whose
	// completion was lost is retried and answered with it.
	proof   []byte
	finMS   int64
	busy    bool // an activity is using it
	release bool // drop when the activity using it gives it back
	once    sync.Once
	// deadline is its job's (zero: none): lapse drops it then, from timer,
	// whether or not its workflow is still there to release it.
	deadline time.Time
	timer    *time.Timer
}

// witnesses holds the host's witnesses by handle.
type witnesses struct {
	mu sync.Mutex
	m  map[string]*witness
	// unclaimed remembers when each witness dropped unclaimed was dropped:
	// a device phase that comes for one after all was late, not failed.
	unclaimed map[string]time.Time
	budget    *Budget
	spill     Spill
	log       *slog.Logger
	// onLapse, if set, is told of each unfinished witness dropped at its
	// job's deadline.
	onLapse func(*witness)
}

func newHandle() string {
	var b [12]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func (ws *witnesses) put(w *witness) string {
	h := newHandle()
	w.created = time.Now()
	ws.mu.Lock()
	ws.m[h] = w
	ws.arm(h, w)
	ws.mu.Unlock()
	return h
}

// arm sets the lapse of witness w (handle h) at its deadline, if it has
// one, in place of any set before. ws.mu is held.
func (ws *witnesses) arm(h string, w *witness) {
	if w.timer != nil {
		w.timer.Stop()
		w.timer = nil
	}
	if !w.deadline.IsZero() {
		w.timer = time.AfterFunc(time.Until(w.deadline), func() { ws.lapse(h) })
	}
}

// heldFrom says whether a witness made by the synthesis activity made
// (synthesisOf; "" never matches) is held.
func (ws *witnesses) heldFrom(made string) bool {
	if made == "" {
		return false
	}
	ws.mu.Lock()
	defer ws.mu.Unlock()
	for _, w := range ws.m {
		if w.made == made {
			return true
		}
	}
	return false
}

// lapse drops the witness of handle h, its job's deadline passed: now, or
// when the activity using it (which ends at the deadline too) gives it
// back. It reports whether there was an unfinished witness to drop.
func (ws *witnesses) lapse(h string) bool {
	ws.mu.Lock()
	w := ws.m[h]
	if w == nil {
		ws.mu.Unlock()
		return false
	}
	unfinished := w.proof == nil // a kept proof goes quietly
	busy := w.busy
	if busy {
		w.release = true
	}
	ws.mu.Unlock()
	if !busy {
		ws.drop(h)
	}
	if unfinished && ws.onLapse != nil {
		ws.onLapse(w)
	}
	return unfinished
}

// take marks the witness busy and returns it; nil if unknown or busy.
// A phase that comes with a later deadline than the witness's (a caller
// joined its job with one) moves the witness's lapse with it.
func (ws *witnesses) take(h string, deadline time.Time) *witness {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	w := ws.m[h]
	if w == nil || w.busy {
		return nil
	}
	if d := job.LaterDeadline(w.deadline, deadline); !d.Equal(w.deadline) {
		w.deadline = d
		ws.arm(h, w)
	}
	w.busy = true
	if w.proof == nil {
		w.dropAt = time.Time{} // claimed: the workflow knows its handle
	}
	return w
}

func (ws *witnesses) give(w *witness) {
	ws.mu.Lock()
	w.busy = false
	drop := w.release
	ws.mu.Unlock()
	if drop {
		ws.dropWitness(w)
	}
}

// dropWhenIdle drops a witness now, or when the activity using it gives it
// back; it reports whether the host had it.
func (ws *witnesses) dropWhenIdle(h string) bool {
	ws.mu.Lock()
	w := ws.m[h]
	if w != nil && w.busy {
		w.release = true
		ws.mu.Unlock()
		return true
	}
	ws.mu.Unlock()
	ws.drop(h)
	return w != nil
}

func (ws *witnesses) dropWitness(w *witness) {
	ws.mu.Lock()
	for h, x := range ws.m {
		if x == w {
			delete(ws.m, h)
		}
	}
	ws.mu.Unlock()
	ws.forget(w)
}

// drop forgets a witness, releasing its budget permit if still held.
func (ws *witnesses) drop(h string) {
	ws.mu.Lock()
	w := ws.m[h]
	delete(ws.m, h)
	ws.mu.Unlock()
	if w != nil {
		ws.forget(w)
	}
}

// release frees the budget permit of a witness exactly once: when its
// device phase has computed its quotient (what the phase holds from then
// is its device lane's, counted apart: Budget.HoldCircuit; the packed
// assignment the partial keeps for the B-in-G2 MSM is small beside it),
// or when the witness is dropped.
func (ws *witnesses) release(w *witness) {
	if w.loaded {
		return
	}
	b := w.budget
	if b == nil {
		b = ws.budget
	}
	w.once.Do(func() { b.Free(w.bytes) })
}

// forget releases everything a dropped witness holds: its budget permit
// and its spilled copy.
func (ws *witnesses) forget(w *witness) {
	ws.mu.Lock()
	t := w.timer
	ws.mu.Unlock()
	if t != nil {
		t.Stop()
	}
	ws.release(w)
	if w.spill != "" && ws.spill != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := ws.spill.Delete(ctx, w.spill); err != nil {
			ws.log.Warn("spilled witness not deleted", "spill", w.spill, "error", err)
		}
	}
}

// finished keeps a finalized partition's proof in place of its partial
// proof until keep has passed, for a retry of the finalize whose
// completion was lost (the budget permit went with the device phase).
func (ws *witnesses) finished(w *witness, proof []byte, ms int64, keep time.Duration) {
	ws.mu.Lock()
	w.proving, w.proof, w.finMS = nil, proof, ms
	w.dropAt = time.Now().Add(keep)
	ws.mu.Unlock()
}

// expire drops idle witnesses older than ttl (a workflow that gave up on
// a partition must not hold this host's budget forever) and those past
// their dropAt. It returns how many of each it dropped.
func (ws *witnesses) expire(ttl time.Duration) (expired, early int) {
	now := time.Now()
	ws.mu.Lock()
	var old []string
	for h, w := range ws.m {
		switch {
		case w.busy:
		case w.proof != nil: // a finished partition: dropped quietly
			if now.After(w.dropAt) {
				old = append(old, h)
			}
		case now.Sub(w.created) > ttl:
			old = append(old, h)
			expired++
		case !w.dropAt.IsZero() && now.After(w.dropAt):
			old = append(old, h)
			early++
			if ws.unclaimed == nil {
				ws.unclaimed = map[string]time.Time{}
			}
			ws.unclaimed[h] = now
		}
	}
	for h, t := range ws.unclaimed {
		if now.Sub(t) > ttl {
			delete(ws.unclaimed, h)
		}
	}
	ws.mu.Unlock()
	for _, h := range old {
		ws.drop(h)
	}
	return expired, early
}

// droppedUnclaimed says whether the witness of handle h was dropped for
// want of a claim (within the last TTL).
func (ws *witnesses) droppedUnclaimed(h string) bool {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	_, ok := ws.unclaimed[h]
	return ok
}

// len counts the witnesses still to finish (kept proofs are done).
func (ws *witnesses) len() int {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	n := 0
	for _, w := range ws.m {
		if w.proof == nil {
			n++
		}
	}
	return n
}
