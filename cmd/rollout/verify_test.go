package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/rollout-dev/rollout/internal/output/report"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/rollout-dev/rollout/checks"
	"github.com/rollout-dev/rollout/reconstruct"
	"github.com/rollout-dev/rollout/rollout"
)

// TestVerifyArgs checks args -> options through the runF hook: flags are
// parsed and validated before anything is read.
func TestVerifyArgs(t *testing.T) {
	t.Parallel()
	defaults := verifyOptions{formats: []string{"text"}, failOn: "error",
		replayFlags: replayFlags{maxLineBytes: rollout.DefaultMaxLineBytes, handoffCap: 16000, capped: true}, maxFindings: 1000, jobs: runtime.NumCPU(), color: "auto", showSeverity: "info"}
	with := func(f func(o *verifyOptions)) verifyOptions {
		o := defaults
		o.formats = append([]string(nil), defaults.formats...)
		f(&o)
		return o
	}
	tests := []struct {
		name     string
		args     []string
		want     verifyOptions
		wantCode int    // 0: runF must be called with want
		wantErr  string // substring of the error
	}{
		{name: "no args", args: nil, want: defaults},
		{name: "paths", args: []string{"a.jsonl", "-", "dir"},
			want: with(func(o *verifyOptions) { o.paths = []string{"a.jsonl", "-", "dir"} })},
		{name: "formats", args: []string{"--format", "json", "--format", "sarif=out.sarif", "a"},
			want: with(func(o *verifyOptions) {
				o.paths = []string{"a"}
				o.formats = []string{"json", "sarif=out.sarif"}
			})},
		{name: "select and ignore", args: []string{"--select", "ordinal/,item/missing-id", "--ignore", "line/blank", "--ignore", "line/crlf"},
			want: with(func(o *verifyOptions) {
				o.selectRules = []string{"ordinal/", "item/missing-id"}
				o.ignoreRules = []string{"line/blank", "line/crlf"}
			})},
		{name: "everything else", args: []string{"--fail-on", "warning", "--jobs", "3", "--shard", "2/4",
			"--max-line-bytes", "1024", "--files-from", "list.txt", "--color", "never"},
			want: with(func(o *verifyOptions) {
				o.failOn, o.jobs, o.shard, o.maxLineBytes, o.filesFrom, o.color = "warning", 3, "2/4", 1024, "list.txt", "never"
			})},
		{name: "fail-on never", args: []string{"--fail-on", "never"}, want: with(func(o *verifyOptions) { o.failOn = "never" })},
		{name: "ci policy", args: []string{"--baseline", "b.json", "--write-baseline", "new.json", "--quiet", "--show-severity", "warning", "--statistics"},
			want: with(func(o *verifyOptions) {
				o.baseline, o.writeBaseline, o.quiet, o.showSeverity, o.statistics = "b.json", "new.json", true, "warning", true
			})},
		{name: "bad show-severity", args: []string{"--show-severity", "never"}, wantCode: exitUsage, wantErr: `invalid --show-severity "never"`},
		{name: "missing config", args: []string{"--config", "nosuch.yaml"}, wantCode: exitUsage, wantErr: "nosuch.yaml"},
		{name: "bad fail-on", args: []string{"--fail-on", "fatal"}, wantCode: exitUsage, wantErr: `invalid --fail-on "fatal"`},
		{name: "bad format", args: []string{"--format", "xml"}, wantCode: exitUsage, wantErr: "xml"},
		{name: "two formats on stdout", args: []string{"--format", "json", "--format", "text"}, wantCode: exitUsage, wantErr: "only one --format"},
		{name: "zero jobs", args: []string{"--jobs", "0"}, wantCode: exitUsage, wantErr: "invalid --jobs 0"},
		{name: "handoff cap", args: []string{"--handoff-cap", "64000"}, want: with(func(o *verifyOptions) { o.handoffCap = 64000 })},
		{name: "zero handoff cap", args: []string{"--handoff-cap", "0"}, wantCode: exitUsage, wantErr: "invalid --handoff-cap 0"},
		{name: "max findings", args: []string{"--max-findings-per-rule", "0"}, want: with(func(o *verifyOptions) { o.maxFindings = 0 })},
		{name: "negative max findings", args: []string{"--max-findings-per-rule", "-1"}, wantCode: exitUsage, wantErr: "invalid --max-findings-per-rule -1"},
		{name: "zero max line", args: []string{"--max-line-bytes", "0"}, wantCode: exitUsage, wantErr: "invalid --max-line-bytes 0"},
		{name: "shard K > N", args: []string{"--shard", "5/4"}, wantCode: exitUsage, wantErr: `invalid --shard "5/4"`},
		{name: "shard zero", args: []string{"--shard", "0/4"}, wantCode: exitUsage, wantErr: "invalid --shard"},
		{name: "shard not K/N", args: []string{"--shard", "2"}, wantCode: exitUsage, wantErr: "invalid --shard"},
		{name: "bad color", args: []string{"--color", "yes"}, wantCode: exitUsage, wantErr: `invalid --color "yes"`},
		{name: "unknown rule", args: []string{"--select", "nosuch/rule"}, wantCode: exitUsage, wantErr: `unknown rule or area "nosuch/rule"`},
		{name: "unknown area ignored", args: []string{"--ignore", "nosuch/"}, wantCode: exitUsage, wantErr: `"nosuch/"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			io, _, _ := testIO("")
			var got *verifyOptions
			cmd := newVerifyCmd(&app{io: io}, func(_ context.Context, o *verifyOptions) error {
				got = o
				return nil
			})
			cmd.SetArgs(tt.args)
			cmd.SetOut(io.Out)
			cmd.SetErr(io.Err)
			err := cmd.Execute()
			if tt.wantCode != 0 {
				var ee *exitError
				if !errors.As(err, &ee) || ee.code != tt.wantCode || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want exit %d mentioning %q", err, tt.wantCode, tt.wantErr)
				}
				if got != nil {
					t.Fatal("runF called despite invalid options")
				}
				return
			}
			if err != nil || got == nil {
				t.Fatalf("Execute: %v (runF called: %v)", err, got != nil)
			}
			if diff := cmp.Diff(tt.want, *got, cmp.AllowUnexported(verifyOptions{}, inputFlags{}, nowFlag{}, replayFlags{}), cmpopts.EquateEmpty(),
				// what validate parses from the flags compared here
				cmpopts.IgnoreFields(verifyOptions{}, "outputs", "failOnSev", "showSev", "filter", "inputFlags.shardPart")); diff != "" {
				t.Errorf("options (-want +got):\n%s", diff)
			}
		})
	}
}

func TestStateArgs(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args    []string
		want    *stateOptions
		wantErr bool
	}{
		{[]string{"f.jsonl"}, &stateOptions{path: "f.jsonl", replayFlags: replayFlags{maxLineBytes: rollout.DefaultMaxLineBytes}}, false},
		{[]string{"--at-line", "12", "--max-line-bytes", "99", "-"}, &stateOptions{path: "-", atLine: 12, replayFlags: replayFlags{maxLineBytes: 99}}, false},
		{[]string{}, nil, true},
		{[]string{"a", "b"}, nil, true},
		{[]string{"--at-line", "-3", "f.jsonl"}, nil, true},
	}
	for _, tt := range tests {
		io, _, _ := testIO("")
		var got *stateOptions
		cmd := newStateCmd(&app{io: io}, func(_ context.Context, o *stateOptions) error {
			got = o
			return nil
		})
		cmd.SetArgs(tt.args)
		cmd.SetOut(io.Out)
		cmd.SetErr(io.Err)
		err := cmd.Execute()
		if tt.wantErr {
			if err == nil || got != nil {
				t.Errorf("%q: error %v, runF called %v; want an error and no call", tt.args, err, got != nil)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tt.args, err)
			continue
		}
		if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(stateOptions{}, replayFlags{})); diff != "" {
			t.Errorf("%q: options (-want +got):\n%s", tt.args, diff)
		}
	}
}

// TestRunVerify runs options + fixtures through run(): stdout, stderr and
// the exit code. Messages are the rule's wording, so stdout is matched as a
// regexp around them: the line, severity, rule and summary are exact.
func TestRunVerify(t *testing.T) {
	t.Parallel()
	const (
		legacy    = "testdata/legacy.jsonl"
		paginated = "testdata/paginated.jsonl"
		clean     = "testdata/clean.jsonl"
	)
	legacyBytes, err := os.ReadFile(legacy)
	if err != nil {
		t.Fatal(err)
	}
	q := regexp.QuoteMeta
	tests := []struct {
		name       string
		args       []string
		stdin      string
		wantCode   int
		wantStdout string // regexp matching all of stdout
		wantStderr string // exact
	}{
		{name: "clean", args: []string{"verify", clean}, wantCode: exitOK,
			wantStdout: q("1 files, 6 records: 0 errors, 0 warnings, 0 infos\n")},
		{name: "legacy warning", args: []string{"verify", legacy}, wantCode: exitOK,
			wantStdout: q(legacy+":9: warning: ") + `[^\n]+` + q(" [item/missing-id]\n1 files, 18 records: 0 errors, 1 warnings, 0 infos\n")},
		{name: "legacy fail-on warning", args: []string{"verify", "--fail-on", "warning", "--format", "jsonl", legacy}, wantCode: exitFindings,
			wantStdout: q(`{"path":"`+legacy+`","rule":"item/missing-id","severity":"warning","line":9,"byte_offset":2411,"ordinal":null,"message":"`) +
				`[^"]+",` + q(`"fixable":true,"evidence":{`) + `[^\n]*}\n`},
		{name: "paginated warning", args: []string{"verify", "--format", "github", paginated}, wantCode: exitOK,
			wantStdout: q("::warning file="+paginated+",line=8,title=item/missing-id::") + `[^\n]+\n` +
				q("::notice title=rollout verify::1 files, 14 records: 0 errors, 1 warnings, 0 infos\n")},
		{name: "stdin", args: []string{"verify", "--select", "item/", "-"}, stdin: string(legacyBytes), wantCode: exitOK,
			wantStdout: q("-:9: warning: ") + `[^\n]+` + q(" [item/missing-id]\n1 files, 18 records: 0 errors, 1 warnings, 0 infos\n")},
		{name: "oversized", args: []string{"verify", "--max-line-bytes", "470", "--select", "line/", clean, legacy}, wantCode: exitIncomplete,
			wantStdout: q(legacy+":10: warning: ") + `[^\n]*\b614\b[^\n]*` + q(" [line/oversized]\n") +
				q(legacy+":16: warning: ") + `[^\n]*\b706\b[^\n]*` + q(" [line/oversized]\n") +
				q("2 files, 24 records: 0 errors, 2 warnings, 0 infos\n")},
		{name: "missing file", args: []string{"verify", "testdata/nosuch.jsonl"}, wantCode: exitUsage,
			wantStderr: "rollout: error: testdata/nosuch.jsonl: no such file or directory\n"},
		{name: "bad flag", args: []string{"verify", "--bogus"}, wantCode: exitUsage,
			wantStderr: "rollout: error: unknown flag: --bogus\nrollout: hint: see `rollout verify --help`\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			io, stdout, stderr := testIO(tt.stdin)
			code := run(tt.args, io)
			if code != tt.wantCode {
				t.Errorf("exit code %d, want %d; stderr:\n%s", code, tt.wantCode, stderr)
			}
			if !regexp.MustCompile(`\A` + tt.wantStdout + `\z`).MatchString(stdout.String()) {
				t.Errorf("stdout:\n%s\nwant a match for:\n%s", stdout, tt.wantStdout)
			}
			if diff := cmp.Diff(tt.wantStderr, stderr.String()); diff != "" {
				t.Errorf("stderr (-want +got):\n%s", diff)
			}
		})
	}
}

// panicReader hands out data, then panics on the next Read: a bug in the
// middle of a file.
type panicReader struct{ data []byte }

func (p *panicReader) Read(b []byte) (int, error) {
	if len(p.data) == 0 {
		panic("boom: injected read panic")
	}
	n := copy(b, p.data)
	p.data = p.data[n:]
	return n, nil
}

// firstLines is the first n lines of data and half of the next.
func firstLines(t *testing.T, data []byte, n int) []byte {
	t.Helper()
	off := 0
	for range n {
		i := bytes.IndexByte(data[off:], '\n')
		if i < 0 {
			t.Fatalf("fewer than %d lines", n)
		}
		off += i + 1
	}
	next := bytes.IndexByte(data[off:], '\n')
	return data[:off+next/2]
}

func TestRunReaderPanicIsInternalError(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile("testdata/legacy.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	t.Run("panic while replaying a line", func(t *testing.T) {
		t.Parallel()
		// The Flow observer runs inside the replay of each record: a panic
		// there must name the line being replayed.
		trigger := 0
		flow := func(o reconstruct.Observation) {
			if o.Pos.Line >= 5 && trigger == 0 {
				trigger = o.Pos.Line
				panic("boom: injected engine panic")
			}
		}
		res, err := checks.RunReader("some/rollout.jsonl", bytes.NewReader(data), checks.Options{}, flow)
		var ie *reconstruct.InternalError
		if !errors.As(err, &ie) || res != nil {
			t.Fatalf("RunReader = %v, %v; want a *reconstruct.InternalError", res, err)
		}
		if ie.Path != "some/rollout.jsonl" || ie.Line != trigger || trigger < 5 || ie.Value != "boom: injected engine panic" || len(ie.Stack) == 0 {
			t.Errorf("InternalError{Path %q, Line %d, Value %v, %d-byte stack}; want the path, line %d and the panic value",
				ie.Path, ie.Line, ie.Value, len(ie.Stack), trigger)
		}
		if !strings.Contains(ie.Error(), "some/rollout.jsonl:") {
			t.Errorf("Error() = %q does not name the file", ie.Error())
		}
	})
	t.Run("panic while reading", func(t *testing.T) {
		t.Parallel()
		// Lines 1-7 and half of line 8 arrive, then the stream panics.
		r := &panicReader{data: firstLines(t, data, 7)}
		_, err := checks.RunReader("other.jsonl", r, checks.Options{})
		var ie *reconstruct.InternalError
		if !errors.As(err, &ie) {
			t.Fatalf("error %v, want a *reconstruct.InternalError", err)
		}
		// The panic is in line 8; RunReader only knows the last line it
		// finished (7). Either is near enough to find the spot.
		if ie.Path != "other.jsonl" || ie.Line < 7 || ie.Line > 8 {
			t.Errorf("InternalError at %s:%d, want other.jsonl:7 or 8", ie.Path, ie.Line)
		}
	})
}

// TestVerifyPanicExit5: a bug while analysing one file exits 5 and names the
// file and line on stderr; the other files are still reported.
func TestVerifyPanicExit5(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile("testdata/legacy.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	io, stdout, stderr := testIO("")
	io.In = &panicReader{data: firstLines(t, data, 7)}
	code := run([]string{"verify", "--fail-on", "never", "-", "testdata/legacy.jsonl"}, io)
	if code != exitInternal {
		t.Errorf("exit code %d, want %d", code, exitInternal)
	}
	if !strings.Contains(stderr.String(), "rollout: internal error: -:7: boom: injected read panic") &&
		!strings.Contains(stderr.String(), "rollout: internal error: -:8: boom: injected read panic") {
		t.Errorf("stderr %q does not name the file and line", stderr)
	}
	if !strings.Contains(stdout.String(), "testdata/legacy.jsonl:9: warning:") {
		t.Errorf("the healthy file was not reported: stdout %q", stdout)
	}
}

// TestRunRecoversPanic: a panic outside the per-file analysis (here while
// reading --files-from -) is recovered by run(): exit 5, and the stack on
// stderr says where.
func TestRunRecoversPanic(t *testing.T) {
	t.Parallel()
	io, _, stderr := testIO("")
	io.In = &panicReader{data: []byte("testdata/clean.jsonl\ntestdata/leg")}
	code := run([]string{"verify", "--files-from", "-"}, io)
	if code != exitInternal {
		t.Errorf("exit code %d, want %d", code, exitInternal)
	}
	if !strings.HasPrefix(stderr.String(), "rollout: internal error: boom: injected read panic\n") ||
		!strings.Contains(stderr.String(), "verify_test.go:") {
		t.Errorf("stderr should name the panic and hold the stack with its file and line:\n%s", stderr)
	}
}

// TestProgress: the progress line goes to stderr only when stderr is a
// terminal and --quiet is not given, whatever the output; it is erased at
// the end and never reaches stdout.
func TestProgress(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	clean, err := os.ReadFile("testdata/clean.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"rollout-a.jsonl", "rollout-b.jsonl", "rollout-c.jsonl"} {
		if err := os.WriteFile(filepath.Join(dir, n), clean, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name    string
		tty     bool
		args    []string
		wantErr bool
	}{
		{"not a terminal", false, []string{"verify", dir}, false},
		{"terminal, text", true, []string{"verify", "--jobs", "1", dir}, true},
		{"terminal, text to a file", true, []string{"verify", "--format", "json", "--format", "text=" + filepath.Join(t.TempDir(), "r.txt"), dir}, true},
		{"terminal, json", true, []string{"verify", "--format", "json", dir}, true},
		{"terminal, --quiet", true, []string{"verify", "--quiet", dir}, false},
		{"terminal, one file", true, []string{"verify", filepath.Join(dir, "rollout-a.jsonl")}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			io, stdout, stderr := testIO("")
			io.ErrIsTTY = tt.tty
			if code := run(tt.args, io); code != exitOK {
				t.Fatalf("exit code %d; stderr %q", code, stderr)
			}
			if !tt.wantErr {
				if stderr.Len() != 0 {
					t.Errorf("stderr %q, want nothing", stderr)
				}
				return
			}
			size := report.Size(int64(3 * len(clean)))
			last := "\rverifying 3/3 files, " + size + " of " + size + " (100%)\x1b[K\r\x1b[K"
			if !strings.HasSuffix(stderr.String(), last) || !strings.HasPrefix(stderr.String(), "\rverifying 0/3 files, ") {
				t.Errorf("stderr %q, want progress ending in %q", stderr, last)
			}
			if strings.Contains(stdout.String(), "verifying") {
				t.Errorf("progress leaked to stdout: %q", stdout)
			}
		})
	}
}

// TestStdinHint: reading "-" from a terminal says so on stderr, so that
// `rollout verify -` does not seem to hang; from a pipe it says nothing.
func TestStdinHint(t *testing.T) {
	t.Parallel()
	clean, err := os.ReadFile("testdata/clean.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	const hint = "rollout: hint: reading a rollout from standard input (a terminal): paste it and end with Ctrl-D, or name a file\n"
	for _, tty := range []bool{false, true} {
		for _, args := range [][]string{{"verify", "-"}, {"state", "-"}} {
			io, _, stderr := testIO(string(clean))
			io.InIsTTY = tty
			if code := run(args, io); code != exitOK {
				t.Fatalf("%v: exit %d; stderr %q", args, code, stderr)
			}
			if got := strings.Contains(stderr.String(), hint); got != tty {
				t.Errorf("%v, terminal %v: stderr %q", args, tty, stderr)
			}
		}
	}
}

// TestDefaultInputsSaid: verify without a path says what it reads on a
// terminal, and nothing when standard error is piped (a CI log).
func TestDefaultInputsSaid(t *testing.T) {
	home := t.TempDir()
	sessions := filepath.Join(home, "sessions")
	if err := os.Mkdir(sessions, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("CODEX_HOME", home)
	for _, tty := range []bool{false, true} {
		io, _, stderr := testIO("")
		io.ErrIsTTY = tty
		if code := run([]string{"verify"}, io); code != exitOK {
			t.Fatalf("exit %d; stderr %q", code, stderr)
		}
		want := ""
		if tty {
			want = "rollout: reading " + sessions + "\n"
		}
		if stderr.String() != want {
			t.Errorf("stderr a terminal: %v: %q, want %q", tty, stderr, want)
		}
	}
}
