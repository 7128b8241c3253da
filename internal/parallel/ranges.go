package parallel

import (
	"runtime"
	"sync"
)

// Ranges splits [0, n) into one contiguous range per core, each of at
// least minChunk (fewer ranges when n is small), and calls f on each from
// its own goroutine; it returns when all have returned. Work in a loop
// over independent elements (rows, vector entries) that costs about the
// same per element.
func Ranges(n, minChunk int, f func(lo, hi int)) {
	workers := runtime.GOMAXPROCS(0)
	minChunk = max(minChunk, 1)
	if workers <= 1 || n < 2*minChunk {
		if n > 0 {
			f(0, n)
		}
		return
	}
	chunk := max((n+workers-1)/workers, minChunk)
	var wg sync.WaitGroup
	for lo := 0; lo < n; lo += chunk {
		wg.Go(func() { f(lo, min(lo+chunk, n)) })
	}
	wg.Wait()
}
