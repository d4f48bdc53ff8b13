package pool

import (
	"sync/atomic"
	"testing"
	"time"
)

// Results come back in index order whatever the number of workers, and no
// more than ahead items are dispatched and not yet emitted (beyond jobs).
func TestInOrder(t *testing.T) {
	for _, jobs := range []int{1, 2, 7} {
		var inFlight, most atomic.Int64
		var got []int
		InOrder(50, jobs, 2*jobs, nil, 0, func(i int) int {
			n := inFlight.Add(1)
			for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
			}
			time.Sleep(time.Duration(50-i) * 10 * time.Microsecond) // later items finish first
			return i * i
		}, func(i, v int) {
			inFlight.Add(-1)
			if v != i*i {
				t.Errorf("jobs %d: result %d for index %d", jobs, v, i)
			}
			got = append(got, i)
		})
		for i, v := range got {
			if v != i {
				t.Fatalf("jobs %d: emitted %v, not in index order", jobs, got)
			}
		}
		if len(got) != 50 {
			t.Errorf("jobs %d: %d results, want 50", jobs, len(got))
		}
		if m := most.Load(); m > int64(2*jobs) {
			t.Errorf("jobs %d: %d items in flight, more than ahead %d", jobs, m, 2*jobs)
		}
	}
	InOrder(0, 3, 6, nil, 0, func(int) int { t.Fatal("work for n = 0"); return 0 }, func(int, int) {})
}
