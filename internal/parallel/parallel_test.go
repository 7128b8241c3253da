package parallel

import (
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"
)

// The lowest failing index is the one returned, whether the later failure
// (in flight beside it) comes first or last; every index below it ran.
func TestFirstError(t *testing.T) {
	for run := range 100 {
		// Both sleep, so that each is in flight while the other fails:
		// 20 fails last in even runs, 21 in odd ones.
		sleep := map[int]time.Duration{20: 3 * time.Millisecond, 21: time.Millisecond}
		if run%2 == 1 {
			sleep[20], sleep[21] = sleep[21], sleep[20]
		}
		var ran [100]atomic.Bool
		err := FirstError(8, 100, func(i int) error {
			ran[i].Store(true)
			time.Sleep(sleep[i])
			if i == 20 || i == 21 || i == 90 { // 90: a failure past the first
				return fmt.Errorf("index %d", i)
			}
			return nil
		})
		if err == nil || err.Error() != "index 20" {
			t.Fatalf("got %v, want index 20", err)
		}
		for i := range 20 {
			if !ran[i].Load() {
				t.Fatalf("index %d below the failure was not checked", i)
			}
		}
	}
	if err := FirstError(4, 10, func(int) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if err := FirstError(4, 0, func(int) error { return errors.New("called") }); err != nil {
		t.Fatal(err)
	}
	if err := FirstError(0, 3, func(i int) error { return fmt.Errorf("index %d", i) }); err == nil || err.Error() != "index 0" {
		t.Fatalf("no workers asked: %v", err)
	}
}

// Every index is covered exactly once, whatever n and the chunk.
func TestRangesCoverOnce(t *testing.T) {
	for _, n := range []int{0, 1, 5, 4095, 4096, 8192, 100_003} {
		seen := make([]atomic.Int32, n)
		Ranges(n, 4096, func(lo, hi int) {
			for i := lo; i < hi; i++ {
				seen[i].Add(1)
			}
		})
		for i := range seen {
			if c := seen[i].Load(); c != 1 {
				t.Fatalf("n=%d: index %d covered %d times", n, i, c)
			}
		}
	}
}
