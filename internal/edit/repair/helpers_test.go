package repair_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/rollout-dev/rollout/checks"
	"github.com/rollout-dev/rollout/internal/edit/inplace"
	"github.com/rollout-dev/rollout/internal/edit/repair"
	"github.com/rollout-dev/rollout/internal/output/report"
	"github.com/rollout-dev/rollout/internal/testkit/filetest"
	"github.com/rollout-dev/rollout/reconstruct"
	"github.com/rollout-dev/rollout/rollout"
)

// repairWrite runs one repair through Begin and Finish, as the command
// does, and returns its Outcome and what the command prints of it: the
// plan, then the outcome.
func repairWrite(opts repair.Options) (*repair.Outcome, string, error) {
	o, printed, _, err := repairPrinted(opts)
	return o, printed, err
}

// repairPrinted is repairWrite with the hints the command would give
// apart.
func repairPrinted(opts repair.Options) (o *repair.Outcome, printed string, hints []string, err error) {
	t, err := repair.Begin(withDefaults(opts))
	if err != nil {
		return nil, "", nil, err
	}
	var buf bytes.Buffer
	p := &report.RepairPrinter{Out: &buf, Err: &buf, Path: opts.Path, Write: opts.Write, Output: opts.Output,
		Say:  func(format string, args ...any) { fmt.Fprintf(&buf, format+"\n", args...) },
		Hint: func(format string, args ...any) { hints = append(hints, fmt.Sprintf(format, args...)) }}
	if !t.NothingToFix() {
		p.PrintPlan(&t.Outcome)
	}
	o = t.Finish()
	p.PrintOutcome(o, o.Remaining())
	return o, buf.String(), hints, nil
}

// withDefaults fills what the command fills when its flags are not given:
// the clock, --max-line-bytes and --handoff-cap.
func withDefaults(opts repair.Options) repair.Options {
	if opts.Now.IsZero() {
		opts.Now = time.Now()
	}
	if opts.MaxLineBytes == 0 {
		opts.MaxLineBytes = rollout.DefaultMaxLineBytes
	}
	if opts.HandoffCap == 0 {
		opts.HandoffCap = reconstruct.DefaultHandoffCap
	}
	return opts
}

// writeInPlace runs repair --write of path in place, stage (nil: none)
// called at each step.
func writeInPlace(path string, stage func(string), fix ...string) (*repair.Outcome, *inplace.Refusal, error) {
	opts := repair.Options{Path: path, Write: true, Stage: stage}
	if fix != nil {
		fs, err := checks.SelectFixes(fix)
		if err != nil {
			return nil, nil, err
		}
		opts.Fix = fs
	}
	o, _, err := repairWrite(opts)
	return o, refusalOf(o, err), err
}

// refusalOf is a repair's refusal: Begin's error or the Outcome's.
func refusalOf(o *repair.Outcome, err error) *inplace.Refusal {
	var r *inplace.Refusal
	if errors.As(err, &r) {
		return r
	}
	if o != nil {
		return o.Refusal
	}
	return nil
}

// refusedUnsafe reports whether the command exits 4 on r: a refusal of
// any kind but the three that are usage errors (exit 2).
func refusedUnsafe(r *inplace.Refusal) bool {
	return r != nil && r.Kind != inplace.NotRollout && r.Kind != inplace.Compressed && r.Kind != inplace.BadOutput
}

// cleanExit reports whether the command would exit 0 or 1 (errors left)
// after this outcome: not refused, nothing incomplete, nothing late, no
// warning.
func cleanExit(o *repair.Outcome) bool {
	if o.Refusal != nil || o.Late != nil || o.Warning != "" {
		return false
	}
	for _, f := range o.Remaining() {
		if f.Incomplete {
			return false
		}
	}
	return true
}

// writeReport writes the JSON report of o (repair --report) to path.
func writeReport(t *testing.T, path string, o *repair.Outcome) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := report.WriteRepairJSON(f, o); err != nil {
		t.Fatal(err)
	}
}

func readFile(t *testing.T, p string) []byte { return filetest.Read(t, p) }
