// Package parallel runs independent checks on several goroutines and
// answers as a sequential loop would: with the first failure in index
// order, whatever the scheduling.
package parallel

import (
	"sync"
	"sync/atomic"
)

// FirstError calls f(i) for i in [0, n) from at most workers goroutines
// and returns the error of the lowest i that failed, nil if none did.
// Indices are handed out in order, and none is started once a lower one
// has failed, so a bad input costs little more than its first failure;
// every index below the one returned was checked and passed.
func FirstError(workers, n int, f func(i int) error) error {
	if n <= 0 {
		return nil
	}
	errs := make([]error, n)
	var next, failed atomic.Int64
	failed.Store(int64(n))
	var wg sync.WaitGroup
	for range max(1, min(workers, n)) {
		wg.Go(func() {
			for {
				i := next.Add(1) - 1
				if i >= int64(n) || i > failed.Load() {
					return
				}
				if errs[i] = f(int(i)); errs[i] != nil {
					// Keep the lowest failing index.
					for low := failed.Load(); i < low && !failed.CompareAndSwap(low, i); low = failed.Load() {
					}
				}
			}
		})
	}
	wg.Wait()
	if i := failed.Load(); i < int64(n) {
		return errs[i]
	}
	return nil
}
