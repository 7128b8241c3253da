package procflags

import (
	"log/slog"
	"os"
	"runtime/debug"
)

// MemoryHeadroom is what a worker process holds beyond its memory budget:
// its Temporal and S3 clients, the decoded inputs it caches, goroutines.
const MemoryHeadroom = 1 << 30

// SoftMemoryLimit makes a worker's memory budget (plus MemoryHeadroom) the
// Go runtime's soft memory limit, unless $GOMEMLIMIT sets one: without
// it the heap may grow to twice what is live before a collection, and a
// 32GiB device host's few GB of circuit and device lane would double in
// RSS with garbage (the recording of a 32GiB circuit's system: 5.9 GB live,
// 12.3 GB peak RSS). budget 0 (a partition budget) sets nothing.
func SoftMemoryLimit(budget int64, log *slog.Logger) {
	if budget <= 0 || os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	limit := budget + MemoryHeadroom
	debug.SetMemoryLimit(limit)
	log.Info("soft memory limit from --memory-budget", "bytes", limit)
}
