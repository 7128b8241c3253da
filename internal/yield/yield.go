// Package yield lets urgent work have a host's CPU to itself: while urgent
// work holds a host's Gate, lower-priority work on that host waits at its
// checkpoints (between chunks, stages and device operations) and resumes
// where it stopped once the gate opens. Nothing is lost or redone, and
// each piece of lower-priority work yields for a bounded time in all, so
// a stream of urgent work slows it but cannot starve it.
//
// A host's urgent work needs the CPU for more than its own computation:
// between its activities, Temporal's workflow and activity tasks, and in a
// one-process stack (c2flow dev) the server and the gateway, run on the
// same cores. The gate therefore stays closed for a short linger after
// the last urgent holder lets go, so the next step of the same urgent job
// finds the host quiet.
package yield

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// Gate is a host's urgency gate: urgent work Holds it; work marked with
// Yielding waits at its checkpoints (Point) while it is held.
type Gate struct {
	linger   time.Duration
	maxYield time.Duration

	mu     sync.Mutex
	held   int
	until  time.Time     // the linger after the last release ends
	open   chan struct{} // closed while the gate is open
	timer  *time.Timer
	closed time.Time // when the gate last closed (for Stats)

	yields  atomic.Int64
	yielded atomic.Int64 // nanoseconds waited at checkpoints
	heldNs  atomic.Int64 // nanoseconds closed, linger included
}

// Stats is what a gate did: how many checkpoints waited and for how long
// in all, and how long the gate was closed.
type Stats struct {
	Yields    int64 `json:"yields"`
	YieldedMS int64 `json:"yielded_ms"`
	ClosedMS  int64 `json:"closed_ms"`
	Closed    bool  `json:"closed"`
}

// DefaultLinger covers the workflow round trip between two activities of
// one urgent job (a completion, a workflow task, the next activity's
// dispatch): a few hundred milliseconds on a loaded 2-core box.
const DefaultLinger = 1500 * time.Millisecond

// DefaultMaxYield is the most one piece of lower-priority work (a
// synthesis, a device phase, a finalize) yields in all: the urgent
// kind's per-client limits bound how often the gate closes, this how
// much each closing can cost the work it pauses.
const DefaultMaxYield = 30 * time.Second

// New returns an open gate that stays closed linger after its last
// holder lets go and makes each piece of work yield at most maxYield in
// all (0: the defaults).
func New(linger, maxYield time.Duration) *Gate {
	if linger <= 0 {
		linger = DefaultLinger
	}
	if maxYield <= 0 {
		maxYield = DefaultMaxYield
	}
	g := &Gate{linger: linger, maxYield: maxYield, open: make(chan struct{})}
	close(g.open)
	return g
}

// Hold closes the gate for urgent work until the returned release is
// called (more than once is harmless); holds nest.
func (g *Gate) Hold() (release func()) {
	g.mu.Lock()
	if g.held == 0 && g.isOpenLocked() {
		g.open = make(chan struct{})
		g.closed = time.Now()
	}
	g.held++
	g.mu.Unlock()
	var once sync.Once
	return func() { once.Do(g.release) }
}

func (g *Gate) release() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.held--
	if g.held > 0 {
		return
	}
	g.until = time.Now().Add(g.linger)
	if g.timer == nil {
		g.timer = time.AfterFunc(g.linger, g.expire)
	} else {
		g.timer.Reset(g.linger)
	}
}

// expire opens the gate once the linger has passed with no holder.
func (g *Gate) expire() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.held > 0 || g.isOpenLocked() {
		return
	}
	if wait := time.Until(g.until); wait > 0 {
		g.timer.Reset(wait)
		return
	}
	g.heldNs.Add(int64(time.Since(g.closed)))
	close(g.open)
}

func (g *Gate) isOpenLocked() bool {
	select {
	case <-g.open:
		return true
	default:
		return false
	}
}

// Stats reports what the gate did so far.
func (g *Gate) Stats() Stats {
	g.mu.Lock()
	closed := !g.isOpenLocked()
	held := time.Duration(g.heldNs.Load())
	if closed {
		held += time.Since(g.closed)
	}
	g.mu.Unlock()
	return Stats{Yields: g.yields.Load(), YieldedMS: time.Duration(g.yielded.Load()).Milliseconds(), ClosedMS: held.Milliseconds(), Closed: closed}
}

// work is one piece of lower-priority work's share of yielding.
type work struct {
	g      *Gate
	left   atomic.Int64 // nanoseconds it may still yield
	waited atomic.Int64 // nanoseconds it waited
}

type workKey struct{}

// Yielding marks ctx as lower-priority work that yields to g's holders at
// its checkpoints, at most g's maxYield in all. A nil g leaves ctx as it is.
func Yielding(ctx context.Context, g *Gate) context.Context {
	if g == nil {
		return ctx
	}
	w := &work{g: g}
	w.left.Store(int64(g.maxYield))
	return context.WithValue(ctx, workKey{}, w)
}

// Point is a checkpoint: where ctx is lower-priority work (Yielding) and
// its gate is held, it waits until the gate opens, its yield allowance is
// spent or ctx ends (then it returns ctx's error). Elsewhere it returns
// nil at once, whatever ctx's state: a checkpoint changes nothing for work
// that does not wait at it. Call it between pieces of work, never holding
// what urgent work needs.
func Point(ctx context.Context) error {
	w, _ := ctx.Value(workKey{}).(*work)
	if w == nil {
		return nil
	}
	w.g.mu.Lock()
	open := w.g.open
	w.g.mu.Unlock()
	select {
	case <-open:
		return nil
	default:
	}
	left := time.Duration(w.left.Load())
	if left <= 0 {
		return nil
	}
	t0 := time.Now()
	timer := time.NewTimer(left)
	defer timer.Stop()
	select {
	case <-open:
	case <-timer.C:
	case <-ctx.Done():
	}
	d := time.Since(t0)
	w.left.Add(-int64(d))
	w.waited.Add(int64(d))
	w.g.yields.Add(1)
	w.g.yielded.Add(int64(d))
	return ctx.Err()
}

// Yields says whether ctx is lower-priority work that yields at
// checkpoints: where it is, a long computation that cannot stop midway (a
// CPU MSM) is worth splitting into pieces with checkpoints between.
func Yields(ctx context.Context) bool {
	_, ok := ctx.Value(workKey{}).(*work)
	return ok
}

// Waited is how long ctx's work has waited at checkpoints so far (0 for
// work that does not yield): a phase's busy time leaves it out.
func Waited(ctx context.Context) time.Duration {
	if w, ok := ctx.Value(workKey{}).(*work); ok {
		return time.Duration(w.waited.Load())
	}
	return 0
}
