// Package pool is the one worker pool of every command: work runs on a
// bounded number of goroutines and its results come back in input order.
// It is plumbing with no stage (internal/base): any stage may use it, and it
// imports nothing of the module.
package pool

import (
	"math"
	"sync"
)

// InOrder runs work(i) for i in 0..n-1 on a pool of jobs workers and hands
// each result to emit, on the calling goroutine, in index order: result i as
// soon as results 0..i-1 have been emitted, so what is printed does not
// depend on jobs. Workers run ahead of emit by at most ahead items, and
// beyond jobs items only while the results waiting weigh less than
// maxWeight (weight nil: no limit by weight): memory follows the largest
// items in flight, not the run.
func InOrder[T any](n, jobs, ahead int, weight func(T) int, maxWeight int, work func(int) T, emit func(int, T)) {
	if n == 0 {
		return
	}
	if weight == nil {
		weight, maxWeight = func(T) int { return 0 }, math.MaxInt
	}
	if jobs <= 1 {
		// One worker: the calling goroutine does the work. Handing each
		// item to a worker and its result back cost two wake-ups per file,
		// a tenth of verifying a tree of small files.
		for i := range n {
			emit(i, work(i))
		}
		return
	}
	type done struct {
		i   int
		out T
	}
	var (
		mu       sync.Mutex
		moved    = sync.NewCond(&mu)
		inFlight int // dispatched, not yet emitted
		waiting  int // weight of the results not yet emitted
		taken    int // the next index to work on
	)
	results := make(chan done, jobs)
	// take hands a worker the next index, once the results waiting allow
	// it (false: none is left).
	take := func() (int, bool) {
		mu.Lock()
		defer mu.Unlock()
		for taken < n && inFlight >= jobs && (inFlight >= ahead || waiting >= maxWeight) {
			moved.Wait()
		}
		if taken == n {
			return 0, false
		}
		inFlight++
		taken++
		return taken - 1, true
	}
	var wg sync.WaitGroup
	for range min(jobs, n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i, ok := take(); ok; i, ok = take() {
				results <- done{i, work(i)}
			}
		}()
	}
	go func() {
		wg.Wait()
		close(results)
	}()
	pending := map[int]T{}
	want := 0
	for d := range results {
		mu.Lock()
		waiting += weight(d.out)
		mu.Unlock()
		pending[d.i] = d.out
		for {
			out, ok := pending[want]
			if !ok {
				break
			}
			delete(pending, want)
			emit(want, out)
			want++
			mu.Lock()
			inFlight--
			waiting -= weight(out)
			moved.Broadcast()
			mu.Unlock()
		}
	}
}
