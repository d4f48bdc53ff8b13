package reconstruct

import (
	"errors"
	"fmt"
	"io"
	"runtime/debug"

	"github.com/rollout-dev/rollout/rollout"
)

// ReplayOptions configure a replay: how the source is read and the engine.
type ReplayOptions struct {
	Options // the engine's

	// Open is how ReplayFile opens the file (content sniffing, Force).
	Open rollout.OpenOptions
	// MaxLineBytes is the longest line read and replayed; longer ones are
	// reported (lineOversized), not read (0: rollout.DefaultMaxLineBytes).
	MaxLineBytes int64
	// StopAfterLine ends the replay after this line (0: the whole file):
	// the state is then the thread as it was at that line.
	StopAfterLine int
	// OnRecord, when set, sees every record before the engine replays it
	// (rollout view builds its page from records). The record is only
	// valid during the call. It does not see the records of Ancestry.
	OnRecord func(*rollout.Record)
	// Ancestry, when set, resolves the lineage the file continues: it is
	// called once, when the file's first line is a session_meta with a
	// history_base, and the segments it returns are replayed before that
	// record (lineage.go). Without it, or when it returns nil, a file that
	// continues another rollout is judged without that prefix.
	Ancestry func() *Ancestry
}

// InternalError is a bug caught while replaying a file: it carries the
// file and line being read so the report can say where.
type InternalError struct {
	Path  string
	Line  int
	Value any
	Stack []byte
}

func (e *InternalError) Error() string {
	return fmt.Sprintf("internal error at %s:%d: %v", e.Path, e.Line, e.Value)
}

// ReadError is a failure while reading a file that opened fine (a corrupt
// zstd stream, an I/O error): the lines from Line on were not replayed.
type ReadError struct {
	Path string
	Line int
	Err  error
}

func (e *ReadError) Error() string {
	if errors.Is(e.Err, io.ErrUnexpectedEOF) {
		return fmt.Sprintf("%s: the stream ends early (truncated?) in line %d: the lines from %d on were not analysed", e.Path, e.Line, e.Line)
	}
	return fmt.Sprintf("%s: %v (the rest of the file was not analysed)", e.Path, e.Err)
}
func (e *ReadError) Unwrap() error { return e.Err }

// ReplayFile opens path ("-": stdin) with rollout.OpenWith and replays it
// (see Replay).
func ReplayFile(path string, stdin io.Reader, opts ReplayOptions, observers ...Observer) (*State, error) {
	f, err := rollout.OpenWith(path, stdin, opts.Open)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	opts.Path = path
	return Replay(f, opts, observers...)
}

// Replay is the one read-and-replay loop: it reads src record by record
// (opts.Path names it), feeds the engine and hands every observation to
// each observer in turn, in the order the engine makes them. It returns
// the final state, detached from the engine. A panic while replaying
// becomes an *InternalError naming the line. A read failure (a truncated
// or corrupt zstd stream) returns both the state of what was read, so its
// findings are not lost, and a *ReadError.
func Replay(src io.Reader, opts ReplayOptions, observers ...Observer) (st *State, err error) {
	rd := rollout.NewReader(src, opts.MaxLineBytes)
	defer rd.Release() // records are dead once the file is done
	line := 0
	var readErr *ReadError
	defer func() {
		if v := recover(); v != nil {
			st, err = nil, &InternalError{Path: opts.Path, Line: line, Value: v, Stack: debug.Stack()}
		}
	}()
	var fan Observer
	switch len(observers) {
	case 0:
	case 1:
		fan = observers[0]
	default:
		fan = func(o Observation) {
			for _, obs := range observers {
				obs(o)
			}
		}
	}
	eng := newEngine(opts.Options, fan)
	var reread io.ReaderAt
	if !opts.HashItems {
		reread = rd.Rereader()
	}
	eng.reread = reread
	lineageAsked := opts.Ancestry == nil
	for {
		line = rd.Line() + 1 // a panic while reading names the line being read
		rec, rerr := rd.Next()
		if errors.Is(rerr, io.EOF) {
			break
		}
		if rerr != nil {
			readErr = &ReadError{Path: opts.Path, Line: rd.Line() + 1, Err: rerr}
			break
		}
		line = rec.Line
		if opts.StopAfterLine > 0 && rec.Line > opts.StopAfterLine {
			break
		}
		if !lineageAsked {
			// Only a file whose first line is a session_meta that says it
			// continues another rollout pays for looking its lineage up (a
			// damaged first line: judged without the prefix).
			lineageAsked = true
			if rec.Valid() && rec.Type() == rollout.TypeSessionMeta && rec.Payload().Get("history_base").Exists() {
				if a := opts.Ancestry(); a != nil {
					open := func(p string, prefix int64) (io.ReadCloser, error) {
						return rollout.OpenWith(p, nil, rollout.OpenOptions{Prefix: prefix})
					}
					if err := replaySegments(eng, a, open, opts.MaxLineBytes); err != nil {
						return nil, fmt.Errorf("%s: %w", opts.Path, err)
					}
					eng.reread = reread
				}
			}
		}
		if opts.OnRecord != nil {
			opts.OnRecord(rec)
		}
		eng.Feed(rec)
	}
	if readErr != nil {
		return eng.Finish(), readErr
	}
	return eng.Finish(), nil
}
