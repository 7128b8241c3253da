package sdr

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"io"
	"runtime"
	"sync"
)

// The parent cache (storage-proofs-porep stacked/vanilla/cache.rs) is, for
// every node in order, its 14 parents (6 DRG, then 8 expander) as u32
// little-endian: Nodes()*56 bytes.

// ParentCacheEntryBytes is the size of one node's parent-cache entry.
const ParentCacheEntryBytes = Degree * 4

// ParentCacheSize returns the size in bytes of the graph's parent cache.
func (g *Graph) ParentCacheSize() uint64 { return g.nodes * ParentCacheEntryBytes }

// cacheChunkNodes is the number of nodes one worker generates per chunk when
// streaming the cache (3.5 MiB of output).
const cacheChunkNodes = 1 << 16

// WriteParentCache streams the parent cache to w in node order, generating
// it on workers goroutines (<= 0 means GOMAXPROCS). Memory use is bounded by
// a few chunks per worker. It stops early with ctx's error if ctx is done,
// and returns the first write error wrapped.
func (g *Graph) WriteParentCache(ctx context.Context, w io.Writer, workers int) error {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	nChunks := (g.nodes + cacheChunkNodes - 1) / cacheChunkNodes
	if uint64(workers) > nChunks {
		workers = int(nChunks)
	}
	parent := ctx
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	// Each chunk gets its own result channel; the writer consumes them in
	// order. jobs is buffered so at most 2*workers chunks are in flight.
	type job struct {
		index uint64
		out   chan []byte
	}
	jobs := make(chan job, workers)
	pending := make(chan chan []byte, 2*workers)
	pool := sync.Pool{New: func() any { return make([]byte, cacheChunkNodes*ParentCacheEntryBytes) }}

	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				buf := pool.Get().([]byte)
				start := j.index * cacheChunkNodes
				end := min(start+cacheChunkNodes, g.nodes)
				buf = g.fillParentCache(buf[:(end-start)*ParentCacheEntryBytes], start)
				j.out <- buf
			}
		}()
	}
	go func() {
		defer close(jobs)
		defer close(pending)
		for i := range nChunks {
			out := make(chan []byte, 1)
			select {
			case pending <- out:
			case <-ctx.Done():
				return
			}
			select {
			case jobs <- job{index: i, out: out}:
			case <-ctx.Done():
				return
			}
		}
	}()

	var err error
	written := uint64(0)
	for out := range pending {
		var buf []byte
		select {
		case buf = <-out:
		case <-ctx.Done():
		}
		if buf == nil {
			break
		}
		if err == nil {
			if _, werr := w.Write(buf); werr != nil {
				err = fmt.Errorf("write sdr parent cache %s: %w", g.ParentCacheID(), werr)
				cancel()
			}
			written += uint64(len(buf))
		}
		pool.Put(buf[:cap(buf)])
	}
	cancel()
	// Drain: workers may still be sending into buffered per-chunk channels,
	// which never block, so waiting is safe.
	wg.Wait()
	if err != nil {
		return err
	}
	if written != g.ParentCacheSize() {
		if perr := parent.Err(); perr != nil {
			return fmt.Errorf("write sdr parent cache %s: %w", g.ParentCacheID(), perr)
		}
		return fmt.Errorf("write sdr parent cache %s: wrote %d of %d bytes", g.ParentCacheID(), written, g.ParentCacheSize())
	}
	return nil
}

// fillParentCache writes the entries for nodes start.. into buf (a multiple
// of ParentCacheEntryBytes) and returns it.
func (g *Graph) fillParentCache(buf []byte, start uint64) []byte {
	var p [Degree]uint32
	tab := g.feistelTab()
	for off := 0; off < len(buf); off += ParentCacheEntryBytes {
		g.parents(start+uint64(off/ParentCacheEntryBytes), &p, tab)
		e := buf[off : off+ParentCacheEntryBytes]
		for i, v := range p {
			binary.LittleEndian.PutUint32(e[4*i:], v)
		}
	}
	return buf
}

// ParentCacheDigest returns the SHA-256 of the parent cache, the value
// storage-proofs-porep/parent_cache.json records for production graphs.
func (g *Graph) ParentCacheDigest(ctx context.Context, workers int) ([32]byte, error) {
	h := sha256.New()
	var d [32]byte
	if err := g.WriteParentCache(ctx, h, workers); err != nil {
		return d, err
	}
	h.Sum(d[:0])
	return d, nil
}

// ParentCache is an in-memory parent cache: 14 parents per node.
type ParentCache struct {
	nodes   uint64
	parents []uint32
}

// BuildParentCache computes every node's 14 parents in memory (56 bytes per
// node; intended for small sectors), on workers goroutines (<= 0 means
// GOMAXPROCS).
func (g *Graph) BuildParentCache(ctx context.Context, workers int) (*ParentCache, error) {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	pc := &ParentCache{nodes: g.nodes, parents: make([]uint32, g.nodes*Degree)}
	nChunks := (g.nodes + cacheChunkNodes - 1) / cacheChunkNodes
	tab := g.feistelTab()
	next := make(chan uint64)
	var wg sync.WaitGroup
	for range min(uint64(workers), nChunks) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for c := range next {
				end := min((c+1)*cacheChunkNodes, g.nodes)
				for n := c * cacheChunkNodes; n < end; n++ {
					g.parents(n, (*[Degree]uint32)(pc.parents[n*Degree:]), tab)
				}
			}
		}()
	}
	var err error
feed:
	for c := range nChunks {
		select {
		case next <- c:
		case <-ctx.Done():
			err = fmt.Errorf("build sdr parent cache %s: %w", g.ParentCacheID(), ctx.Err())
			break feed
		}
	}
	close(next)
	wg.Wait()
	if err != nil {
		return nil, err
	}
	return pc, nil
}

// Nodes returns the number of nodes the cache covers.
func (pc *ParentCache) Nodes() uint64 { return pc.nodes }

// Parents returns node's 14 parents (a view into the cache; do not modify).
// node must be < Nodes().
func (pc *ParentCache) Parents(node uint64) []uint32 {
	return pc.parents[node*Degree : (node+1)*Degree : (node+1)*Degree]
}

// WriteTo writes the cache in the on-disk layout (u32 LE).
func (pc *ParentCache) WriteTo(w io.Writer) (int64, error) {
	buf := make([]byte, 0, cacheChunkNodes*ParentCacheEntryBytes)
	var total int64
	for i, v := range pc.parents {
		buf = binary.LittleEndian.AppendUint32(buf, v)
		if len(buf) == cap(buf) || i == len(pc.parents)-1 {
			n, err := w.Write(buf)
			total += int64(n)
			if err != nil {
				return total, fmt.Errorf("write sdr parent cache: %w", err)
			}
			buf = buf[:0]
		}
	}
	return total, nil
}
