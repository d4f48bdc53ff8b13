package objstore

import (
	"context"
	"io"
	"sync"
)

// Read-ahead: a run over many small objects would wait for each GET's
// latency (milliseconds on loopback, tens of them in a cloud) one file at
// a time per worker. ReadAhead fetches the next small objects while the
// workers replay the ones before, at most depth at a time and depth ahead
// of what Open took: memory stays under depth times aheadMax.

// aheadMax is the largest object read ahead: a larger one's transfer, not
// its latency, is what its read waits for. aheadDepth is how many are in
// flight: enough to hide a cloud store's tens of milliseconds behind the
// replay of the files before.
const (
	aheadMax   = 1 << 20
	aheadDepth = 32
)

type fetched struct {
	done    chan struct{}
	data    []byte
	err     error
	release func()
}

var ahead = struct {
	sync.Mutex
	running int
	items   map[string]*fetched
	taken   map[string]bool // opened before the read-ahead came to them
}{items: map[string]*fetched{}, taken: map[string]bool{}}

// ReadAhead starts fetching, in order, the pinned objects among paths (a
// run's inputs, files too) of at most aheadMax bytes; Open takes what it
// fetched. stop ends it and drops what no Open took. One runs at a time.
func ReadAhead(ctx context.Context, paths []string) (stop func()) {
	return readAhead(ctx, paths, aheadDepth)
}

func readAhead(ctx context.Context, uris []string, depth int) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	slots := make(chan struct{}, max(1, depth))
	ahead.Lock()
	ahead.running++
	ahead.Unlock()
	var wg sync.WaitGroup
	wg.Go(func() {
		for _, u := range uris {
			if o, ok := Pinned(u); !ok || o.Size > aheadMax || !IsURI(u) {
				continue
			}
			select {
			case slots <- struct{}{}:
			case <-ctx.Done():
				return
			}
			f := &fetched{done: make(chan struct{}), release: sync.OnceFunc(func() { <-slots })}
			ahead.Lock()
			if ahead.taken[u] {
				ahead.Unlock()
				f.release()
				continue
			}
			ahead.items[u] = f
			ahead.Unlock()
			wg.Go(func() {
				defer close(f.done)
				r, err := get(ctx, u, 0, -1)
				if err != nil {
					f.err = err
					return
				}
				defer r.Close()
				f.data, f.err = io.ReadAll(r)
			})
		}
	})
	return func() {
		cancel()
		wg.Wait()
		ahead.Lock()
		defer ahead.Unlock()
		ahead.running--
		clear(ahead.items)
		clear(ahead.taken)
	}
}

// take returns what the read-ahead fetched of uri, nil when it has nothing
// (then the caller reads it directly, and the read-ahead skips it).
func take(uri string) *fetched {
	ahead.Lock()
	if ahead.running == 0 {
		ahead.Unlock()
		return nil
	}
	f := ahead.items[uri]
	delete(ahead.items, uri)
	ahead.taken[uri] = true
	ahead.Unlock()
	if f == nil {
		return nil
	}
	<-f.done
	f.release()
	if f.err != nil {
		return nil // the direct read says why, with its own retries
	}
	return f
}
