package space

import (
	"context"
	"fmt"
	"io"
	"runtime/debug"

	"github.com/rollout-dev/rollout/internal/base/objstore"
	"github.com/rollout-dev/rollout/internal/base/pool"
)

// ReadAll reads paths into sum on a pool of jobs workers. Accounts fold
// into the summary in path order as they finish, so only the files in the
// bounded run-ahead window are held whole (each file's full path-class list
// is dropped once merged): memory follows the largest files in flight, not
// the fleet. step is called as each file is done; failed, in path order,
// for each file that could not be read (a panic is that file's error, not
// the run's end).
func ReadAll(paths []string, stdin io.Reader, o ReadOptions, jobs int, sum *Summary, step func(), failed func(path string, err error)) {
	jobs = min(jobs, len(paths))
	defer objstore.ReadAhead(context.Background(), paths)()
	work := func(i int) outcome {
		out := accountFile(paths[i], stdin, o)
		step()
		return out
	}
	pool.InOrder(len(paths), jobs, 2*jobs, nil, 0, work, func(i int, out outcome) {
		if out.err != nil {
			failed(paths[i], out.err)
			return
		}
		sum.Add(out.file, out.classes)
	})
}

// outcome is one file's account, or why there is none.
type outcome struct {
	file    *File
	classes []Bucket
	err     error
}

// accountFile reads one rollout into its space account.
func accountFile(path string, stdin io.Reader, o ReadOptions) (out outcome) {
	defer func() {
		if v := recover(); v != nil {
			out = outcome{err: fmt.Errorf("internal error reading %s: %v\n%s", path, v, debug.Stack())}
		}
	}()
	file, classes, err := ReadFile(path, stdin, o)
	return outcome{file: file, classes: classes, err: err}
}
