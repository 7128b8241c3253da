package worker

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
	ref     job.SectorRef
	k       int
	solved  Solved  // until the device phase
	proving Proving // after the device phase, until finalize
	bytes   int64   // budget bytes held until the device phase frees them
	spill   string  // key of the spilled copy (synthesis-only host)
	loaded  bool    // loaded from a spill: not in this host's budget
	created time.Time
	busy    bool // an activity is using it
	release bool // drop when the activity using it gives it back
	once    sync.Once
}

// witnesses holds the host's witnesses by handle.
type witnesses struct {
	mu     sync.Mutex
	m      map[string]*witness
	budget *Budget
	spill  Spill
	log    *slog.Logger
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
	ws.mu.Unlock()
	return h
}

// take marks the witness busy and returns it; nil if unknown or busy.
func (ws *witnesses) take(h string) *witness {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	w := ws.m[h]
	if w == nil || w.busy {
		return nil
	}
	w.busy = true
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
// back.
func (ws *witnesses) dropWhenIdle(h string) {
	ws.mu.Lock()
	w := ws.m[h]
	if w != nil && w.busy {
		w.release = true
		ws.mu.Unlock()
		return
	}
	ws.mu.Unlock()
	ws.drop(h)
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

// releaseABC frees the budget permit of a witness exactly once: when the
// device phase has freed a, b, c, or when the witness is dropped.
func (ws *witnesses) releaseABC(w *witness) {
	if w.loaded {
		return
	}
	w.once.Do(func() { ws.budget.Free(w.bytes) })
}

// forget releases everything a dropped witness holds: its budget permit
// and its spilled copy.
func (ws *witnesses) forget(w *witness) {
	ws.releaseABC(w)
	if w.spill != "" && ws.spill != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := ws.spill.Delete(ctx, w.spill); err != nil {
			ws.log.Warn("spilled witness not deleted", "spill", w.spill, "error", err)
		}
	}
}

// expire drops idle witnesses older than ttl: a workflow that gave up on a
// partition must not hold this host's budget forever.
func (ws *witnesses) expire(ttl time.Duration) int {
	ws.mu.Lock()
	var old []string
	for h, w := range ws.m {
		if !w.busy && time.Since(w.created) > ttl {
			old = append(old, h)
		}
	}
	ws.mu.Unlock()
	for _, h := range old {
		ws.drop(h)
	}
	return len(old)
}

func (ws *witnesses) len() int {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	return len(ws.m)
}
