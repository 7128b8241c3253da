package activities

import (
	"container/list"
	"context"
	"sync"
	"time"

	"github.com/c2flow/c2flow/scheme"
)

// SectorCache keeps a host's decoded sectors by identity (prover, sector
// number, C1 digest), bounded by the bytes of their C1s, so that a sector's
// phases on this host (its validation, every partition's synthesis, the
// store) read and decode its C1 once, not once each: about 13 times a
// 32GiB sector before, at 38.6 MB and 0.7 s each. Trusting an entry is
// safe: the identity pins the C1's bytes (their digest is checked as they
// are read), and a decoded sector is only read. Concurrent callers for one
// sector share one decode; failures are not kept.
type SectorCache struct {
	mu    sync.Mutex
	max   int64
	size  int64
	lru   *list.List // of *sectorEntry, most recent first
	m     map[string]*sectorEntry
	stats SectorCacheStats
}

type sectorEntry struct {
	key   string
	ready chan struct{} // closed once s or err is set
	s     scheme.Sector
	err   error
	bytes int64
	elem  *list.Element // nil until kept
}

// SectorCacheStats counts a cache's work.
type SectorCacheStats struct {
	Hits     int64 `json:"hits"`
	Decodes  int64 `json:"decodes"`
	DecodeMS int64 `json:"decode_ms"` // reading and decoding, all decodes
	Entries  int   `json:"entries"`
	Bytes    int64 `json:"bytes"`
	MaxBytes int64 `json:"max_bytes"`
}

// NewSectorCache returns a cache of at most maxBytes of C1s (0: nothing
// kept, every call decodes).
func NewSectorCache(maxBytes int64) *SectorCache {
	return &SectorCache{max: maxBytes, lru: list.New(), m: map[string]*sectorEntry{}}
}

// Get returns the sector of identity key, calling load (which returns it
// and its C1's size) only when no entry holds it or is being loaded.
func (c *SectorCache) Get(ctx context.Context, key string, load func() (scheme.Sector, int64, error)) (scheme.Sector, error) {
	c.mu.Lock()
	if e, ok := c.m[key]; ok {
		c.stats.Hits++
		if e.elem != nil {
			c.lru.MoveToFront(e.elem)
		}
		c.mu.Unlock()
		select {
		case <-e.ready:
			return e.s, e.err
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	e := &sectorEntry{key: key, ready: make(chan struct{})}
	c.m[key] = e
	c.mu.Unlock()

	t0 := time.Now()
	e.s, e.bytes, e.err = load()
	c.mu.Lock()
	c.stats.Decodes++
	c.stats.DecodeMS += time.Since(t0).Milliseconds()
	if e.err != nil || e.bytes > c.max {
		delete(c.m, key) // waiters get this result; later callers load again
	} else {
		e.elem = c.lru.PushFront(e)
		c.size += e.bytes
		for c.size > c.max {
			old := c.lru.Remove(c.lru.Back()).(*sectorEntry)
			delete(c.m, old.key)
			c.size -= old.bytes
		}
	}
	c.mu.Unlock()
	close(e.ready)
	return e.s, e.err
}

// Stats returns the cache's counters.
func (c *SectorCache) Stats() SectorCacheStats {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.stats
	s.Entries, s.Bytes, s.MaxBytes = c.lru.Len(), c.size, c.max
	return s
}
