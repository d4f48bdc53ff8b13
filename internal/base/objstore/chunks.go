package objstore

import (
	"context"
	"io"
)

// A big object is read as chunkSize ranges, chunksAhead of them in flight
// and handed to the reader in order: one GET stream tops out at tens of
// MB/s on S3, parallel ranges go as fast as the store serves them (what the
// SDKs' transfer managers do). Memory is chunksAhead chunks per open
// object, whatever its size. Each range is pinned to the ETag of the first
// (If-Match): a changed object fails instead of mixing two versions.
const (
	chunkSize   = 8 << 20
	chunksAhead = 4
	chunkMin    = 2 * chunkSize // smaller objects are one stream
)

type chunk struct {
	data []byte
	err  error
}

type chunked struct {
	ctx    context.Context
	cancel context.CancelFunc
	first  *reader // the first chunk's stream, read as it comes
	proto  reader  // what each further range is asked with
	next   int64   // the next range to ask for
	end    int64
	queue  []chan chunk
	cur    []byte
	err    error
}

// newChunked reads first (a range up to chunkSize, already open) and then
// the rest of the object up to end in parallel ranges.
func newChunked(ctx context.Context, first *reader, end int64) *chunked {
	ctx, cancel := context.WithCancel(ctx)
	c := &chunked{ctx: ctx, cancel: cancel, first: first, next: first.end, end: end}
	c.proto = reader{c: first.c, bucket: first.bucket, key: first.key, etag: first.etag}
	for range chunksAhead {
		c.schedule()
	}
	return c
}

func (c *chunked) schedule() {
	if c.next >= c.end {
		return
	}
	off, end := c.next, min(c.next+chunkSize, c.end)
	c.next = end
	ch := make(chan chunk, 1)
	c.queue = append(c.queue, ch)
	go func() {
		r := c.proto
		r.ctx, r.off, r.end = c.ctx, off, end
		if err := r.open(); err != nil {
			ch <- chunk{err: err}
			return
		}
		defer r.Close()
		// A short chunk is an object that ended before the planned size:
		// the read ends there, as a single stream's would.
		data, err := io.ReadAll(&r)
		ch <- chunk{data, err}
	}()
}

func (c *chunked) Read(p []byte) (int, error) {
	if c.first != nil {
		n, err := c.first.Read(p)
		if err == io.EOF {
			c.first.Close()
			c.first, err = nil, nil
		}
		if n > 0 || err != nil {
			return n, err
		}
	}
	for len(c.cur) == 0 {
		if c.err != nil {
			return 0, c.err
		}
		if len(c.queue) == 0 {
			return 0, io.EOF
		}
		got := <-c.queue[0]
		c.queue = c.queue[1:]
		if got.err != nil {
			c.err = got.err
			return 0, got.err
		}
		c.cur = got.data
		c.schedule()
	}
	n := copy(p, c.cur)
	c.cur = c.cur[n:]
	return n, nil
}

func (c *chunked) Close() error {
	c.cancel()
	if c.first != nil {
		c.first.Close()
	}
	return nil
}
