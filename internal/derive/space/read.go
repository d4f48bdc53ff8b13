package space

import (
	"context"
	"errors"
	"io"
	"runtime/debug"
	"time"

	"github.com/rollout-dev/rollout/internal/base/objstore"
	"github.com/rollout-dev/rollout/reconstruct"
	"github.com/rollout-dev/rollout/rollout"
)

// ReadOptions say how ReadFile accounts one rollout.
type ReadOptions struct {
	MinRepeat int           // smallest string tracked for repetition
	Top       int           // rows kept per table
	KeepTurns int           // the N of the before-turn estimate
	ColdAfter time.Duration // a file idle this long (mtime) is cold
	Now       time.Time     // what ColdAfter is judged at
	// MaxLineBytes bounds the lines read (0: rollout's default); Force
	// reads a file whose first line is not a JSON object.
	MaxLineBytes int64
	Force        bool
	OnRead       func(int) // bytes read, for progress
}

// ReadFile reads one rollout (path, or stdin for rollout.StdinPath) into
// its account and its full path-class list: one pass of the replay loop,
// with the account as its record observer, and for a cold plain file a
// zstd estimate of the compress policy in the same pass.
func ReadFile(path string, stdin io.Reader, o ReadOptions) (*File, []Bucket, error) {
	f, err := rollout.OpenWith(path, stdin, rollout.OpenOptions{Force: o.Force, OnRead: o.OnRead})
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	var disk int64
	var idle time.Duration
	cold := false
	if path != rollout.StdinPath {
		if fi, err := objstore.StatAny(context.Background(), path); err == nil {
			disk, idle = fi.Size, max(0, o.Now.Sub(fi.Modified))
			cold = idle >= o.ColdAfter
		}
	}
	compressed := rollout.IsCompressed(path)
	var r io.Reader = f
	var cc *CompressCounter
	if cold && !compressed && path != rollout.StdinPath {
		cc = newCompressCounter()
		r = io.TeeReader(f, cc)
	}
	acct := New(Options{MinRepeat: o.MinRepeat, Top: o.Top, Plan: true})
	ro := reconstruct.ReplayOptions{MaxLineBytes: o.MaxLineBytes, OnRecord: acct.Feed}
	ro.Path = path
	st, err := reconstruct.Replay(r, ro)
	if err != nil {
		return nil, nil, err
	}
	file, classes := acct.Finish()
	file.EstimateBeforeTurn(o.KeepTurns, st.UserTurnStarts())
	file.Cuts, file.Bulk, file.Checkpoints = nil, nil, nil // planned for the estimates only
	file.Path, file.Compressed, file.Cold, file.Idle = path, compressed, cold, idle
	file.DiskBytes = disk
	if path == rollout.StdinPath {
		file.DiskBytes = file.Bytes
	}
	if cc != nil {
		file.CompressedBytes = cc.Size()
	}
	return file, classes, nil
}

// Feed reads the rollout src (the content of path) and feeds every record
// to acct, in the order and with the errors of reconstruct.Replay,
// without the replay: for a plan that needs nothing of resume's state (the
// policies but before-turn), the engine is most of the cost of reading a
// file.
func Feed(src io.Reader, path string, maxLineBytes int64, acct *Account) (err error) {
	rd := rollout.NewReader(src, maxLineBytes)
	defer rd.Release()
	line := 0
	defer func() {
		if v := recover(); v != nil {
			err = &reconstruct.InternalError{Path: path, Line: line, Value: v, Stack: debug.Stack()}
		}
	}()
	for {
		line = rd.Line() + 1
		rec, rerr := rd.Next()
		if errors.Is(rerr, io.EOF) {
			return nil
		}
		if rerr != nil {
			return &reconstruct.ReadError{Path: path, Line: rd.Line() + 1, Err: rerr}
		}
		line = rec.Line
		acct.Feed(rec)
	}
}
