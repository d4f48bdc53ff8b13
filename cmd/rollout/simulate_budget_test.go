package main

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"image/color"
	"image/png"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/rogpeppe/go-internal/testscript"

	"github.com/rollout-dev/rollout/internal/derive/budget"
	"github.com/rollout-dev/rollout/internal/testkit/fixturegen/gen"
)

const budgetFixtures = "../../fixtures/budget/"

// Flags -> options, through the runF hook.
func TestSimulateBudgetFlags(t *testing.T) {
	def := budget.DefaultSettings()
	tests := []struct {
		name   string
		args   []string
		want   budget.Settings
		format string
		output string
	}{
		{name: "defaults", args: nil, want: def, format: "text"},
		{name: "table is an alias of text", args: []string{"--format", "table"}, want: def, format: "text"},
		{
			name: "window sweep, k and M suffixes, repeated",
			args: []string{"--window", "64k,100000", "--window", "1M"},
			want: func() budget.Settings { s := def; s.Windows = []int64{64000, 100000, 1000000}; return s }(),
		},
		{
			name: "absolute threshold",
			args: []string{"--compact-at", "230000"},
			want: func() budget.Settings { s := def; s.CompactAt = budget.Tokens(230000); return s }(),
		},
		{
			name: "percentage with decimals",
			args: []string{"--compact-at", "87.5%"},
			want: func() budget.Settings { s := def; s.CompactAt = budget.Percent(87.5); return s }(),
		},
		{
			// 0 is a real value, not "unset" (which is -1: the recorded mean).
			name: "explicit post-compaction fill of 0",
			args: []string{"--post-compact-tokens", "0"},
			want: func() budget.Settings { s := def; s.PostCompact = 0; return s }(),
		},
		{
			name: "everything",
			args: []string{"--post-compact-tokens", "9000", "--handoff-tokens", "20k", "--handoff-cap", "64000",
				"--ledger", "1M", "--weight-output", "4", "--weight-input", "0.5", "--reminder-every", "100k",
				"--format", "json", "-o", "out.json"},
			want: func() budget.Settings {
				s := def
				s.PostCompact, s.HandoffTokens, s.HandoffCap = 9000, 20000, 64000
				s.Ledger, s.WeightOutput, s.WeightInput, s.ReminderEvery = 1000000, 4, 0.5, 100000
				return s
			}(),
			format: "json", output: "out.json",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			io, _, _ := testIO("")
			var got *simulateBudgetOptions
			cmd := newSimulateBudgetCmd(&app{io: io}, func(_ context.Context, o *simulateBudgetOptions) error {
				got = o
				return nil
			})
			cmd.SetArgs(append(tt.args, "rollout.jsonl"))
			if err := cmd.Execute(); err != nil {
				t.Fatal(err)
			}
			if len(got.paths) != 1 || got.paths[0] != "rollout.jsonl" {
				t.Errorf("paths %q", got.paths)
			}
			if diff := cmp.Diff(tt.want, got.settings, cmp.AllowUnexported(budget.Threshold{})); diff != "" {
				t.Errorf("settings (-want +got):\n%s", diff)
			}
			if tt.format == "" {
				tt.format = "text"
			}
			if got.format != tt.format || got.output != tt.output {
				t.Errorf("format %q output %q, want %q %q", got.format, got.output, tt.format, tt.output)
			}
		})
	}
}

// Usage errors exit 2 and name the problem, whatever the format.
func TestSimulateBudgetUsageErrors(t *testing.T) {
	basic := budgetFixtures + "basic.jsonl"
	tests := []struct {
		args []string
		tty  bool
		want string
	}{
		{[]string{"simulate-budget", "--jobs", "0", basic}, false, "invalid --jobs 0"},
		{[]string{"simulate-budget", "--shard", "3/2", basic}, false, `invalid --shard "3/2"`},
		{[]string{"simulate-budget", "--since", "May", basic}, false, `invalid --since "May"`},
		{[]string{"simulate-budget", "--window", "0", basic}, false, `invalid window "0"`},
		{[]string{"simulate-budget", "--window", "64k,abc", basic}, false, `invalid window "abc"`},
		{[]string{"simulate-budget", "--compact-at", "0%", basic}, false, "invalid percentage"},
		{[]string{"simulate-budget", "--compact-at", "101%", basic}, false, "invalid percentage"},
		{[]string{"simulate-budget", "--compact-at", "lots", basic}, false, "invalid threshold"},
		{[]string{"simulate-budget", "--handoff-tokens", "-5", basic}, false, "invalid token count"},
		{[]string{"simulate-budget", "--weight-output", "-1", basic}, false, "invalid ledger weight"},
		{[]string{"simulate-budget", "--format", "xml", basic}, false, `invalid --format "xml"`},
		{[]string{"simulate-budget", "--format", "png", basic}, true, "refusing to write a PNG image to a terminal"},
		{[]string{"simulate-budget", "no-such-file.jsonl"}, false, "no-such-file.jsonl"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args[1:], " "), func(t *testing.T) {
			io, out, errb := testIO("")
			io.OutIsTTY = tt.tty
			if code := run(tt.args, io); code != exitUsage {
				t.Errorf("exit %d, want %d; stderr:\n%s", code, exitUsage, errb)
			}
			if !strings.Contains(errb.String(), tt.want) {
				t.Errorf("stderr %q does not mention %q", errb, tt.want)
			}
			if out.Len() != 0 {
				t.Errorf("stdout not empty: %q", out)
			}
		})
	}
}

func writeTemp(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// Options + fixture -> stdout, stderr, exit code.
func TestSimulateBudgetRun(t *testing.T) {
	basic := budgetFixtures + "basic.jsonl"

	t.Run("no recorded window and no --window", func(t *testing.T) {
		p := writeTemp(t, "w.jsonl", `{"timestamp":"2026-05-04T09:00:00.000Z","type":"session_meta","payload":{"id":"019df2a1-0000-7000-8000-000000000009"}}`+"\n")
		io, out, errb := testIO("")
		if code := run([]string{"simulate-budget", p}, io); code != exitUsage {
			t.Fatalf("exit %d, want 2", code)
		}
		if !strings.Contains(errb.String(), "records no context window") || !strings.Contains(errb.String(), "hint: name the window(s) to simulate with --window N") {
			t.Errorf("stderr: %s", errb)
		}
		if out.Len() != 0 {
			t.Errorf("stdout: %s", out)
		}
		// With --window it runs: 0 requests.
		io, out, _ = testIO("")
		if code := run([]string{"simulate-budget", "--window", "1000", "--format", "csv", p}, io); code != exitOK {
			t.Fatalf("exit %d", code)
		}
		if want := "path,window,threshold,post_compact_tokens,compactions,compaction_requests,peak_fill,overflows,overflow_requests,deferrals,undelivered,ledger_exhausted_at,reminders\n" + p + ",1000,900,0,0,,0,0,,0,0,,0\n"; out.String() != want {
			t.Errorf("csv:\n%s\nwant:\n%s", out, want)
		}
	})

	t.Run("standard input", func(t *testing.T) {
		data, err := os.ReadFile(basic)
		if err != nil {
			t.Fatal(err)
		}
		io, out, _ := testIO(string(data))
		if code := run([]string{"simulate-budget", "--format", "json", "-"}, io); code != exitOK {
			t.Fatalf("exit %d", code)
		}
		var got struct {
			Path     string `json:"path"`
			Requests int    `json:"requests"`
		}
		if err := json.Unmarshal(out.Bytes(), &got); err != nil || got.Path != "-" || got.Requests != 8 {
			t.Errorf("got %+v, %v", got, err)
		}
	})

	t.Run("-o writes the file and nothing to stdout", func(t *testing.T) {
		io, out, _ := testIO("")
		if code := run([]string{"simulate-budget", "--format", "json", basic}, io); code != exitOK {
			t.Fatal(code)
		}
		dst := filepath.Join(t.TempDir(), "budget.json")
		io2, out2, errb2 := testIO("")
		if code := run([]string{"simulate-budget", "--format", "json", "-o", dst, basic}, io2); code != exitOK {
			t.Fatalf("exit %d: %s", code, errb2)
		}
		written, err := os.ReadFile(dst)
		if err != nil {
			t.Fatal(err)
		}
		if out2.Len() != 0 || !bytes.Equal(written, out.Bytes()) {
			t.Errorf("stdout %q; file differs from the stdout run", out2)
		}
		entries, _ := os.ReadDir(filepath.Dir(dst))
		if len(entries) != 1 {
			t.Errorf("stray files next to the output: %v", entries)
		}
	})

	t.Run("-o into a missing directory makes it", func(t *testing.T) {
		io, _, errb := testIO("")
		dst := filepath.Join(t.TempDir(), "missing", "b.svg")
		if code := run([]string{"simulate-budget", "--format", "svg", "-o", dst, basic}, io); code != exitOK {
			t.Fatalf("exit %d, want 0: %s", code, errb)
		}
		if _, err := os.Stat(dst); err != nil {
			t.Error(err)
		}
	})

	t.Run("-o under a file", func(t *testing.T) {
		io, _, errb := testIO("")
		file := filepath.Join(t.TempDir(), "file")
		if err := os.WriteFile(file, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		if code := run([]string{"simulate-budget", "--format", "svg", "-o", filepath.Join(file, "b.svg"), basic}, io); code != exitUsage {
			t.Fatalf("exit %d, want 2", code)
		}
		if !strings.Contains(errb.String(), "cannot write "+filepath.Join(file, "b.svg")+": "+file+" is not a directory") {
			t.Errorf("stderr: %s", errb)
		}
	})

	t.Run("degenerate settings warn on stderr", func(t *testing.T) {
		io, out, errb := testIO("")
		if code := run([]string{"simulate-budget", "--post-compact-tokens", "95000", basic}, io); code != exitOK {
			t.Fatal(code)
		}
		if !strings.Contains(errb.String(), "rollout: warning: window 100000: the post-compaction fill 95000 is at or above the threshold 90000") {
			t.Errorf("stderr: %s", errb)
		}
		if out.Len() == 0 {
			t.Error("no table")
		}
	})

	t.Run("oversized line: output, warning, exit 3", func(t *testing.T) {
		io, out, errb := testIO("")
		// The session_meta line of basic.jsonl is longer than 200 bytes.
		if code := run([]string{"simulate-budget", "--max-line-bytes", "250", "--format", "csv", basic}, io); code != exitIncomplete {
			t.Fatalf("exit %d, want 3; stderr %s", code, errb)
		}
		if !strings.Contains(errb.String(), "over --max-line-bytes were not read") || !strings.HasPrefix(out.String(), "path,window,") {
			t.Errorf("stdout %q stderr %q", out, errb)
		}
	})
}

// PNG bytes need not be stable across plotting-library versions, so the
// test checks the structure: a decodable image of the documented size,
// with the first window's colour drawn and the recorded series under it.
func TestSimulateBudgetPNG(t *testing.T) {
	io, out, errb := testIO("")
	if code := run([]string{"simulate-budget", "--window", "64k,100k,200k", "--format", "png", budgetFixtures + "basic.jsonl"}, io); code != exitOK {
		t.Fatalf("exit %d: %s", code, errb)
	}
	img, err := png.Decode(bytes.NewReader(out.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	// 9in x 5in at 144 DPI.
	if b := img.Bounds(); b.Dx() != 1296 || b.Dy() != 720 {
		t.Errorf("size %v, want 1296x720", b)
	}
	seen := map[color.RGBA]int{}
	for y := 0; y < img.Bounds().Dy(); y++ {
		for x := 0; x < img.Bounds().Dx(); x++ {
			r, g, b, _ := img.At(x, y).RGBA()
			seen[color.RGBA{uint8(r >> 8), uint8(g >> 8), uint8(b >> 8), 0xff}]++
		}
	}
	for name, c := range map[string]color.RGBA{
		"window 1 (blue)":       {0x00, 0x72, 0xB2, 0xff},
		"window 2 (vermillion)": {0xD5, 0x5E, 0x00, 0xff},
		"window 3 (green)":      {0x00, 0x9E, 0x73, 0xff},
		"recorded (light gray)": {0xcc, 0xcc, 0xcc, 0xff},
	} {
		if seen[c] < 100 {
			t.Errorf("%s: %d pixels of %v", name, seen[c], c)
		}
	}
	// Same input, same image.
	io2, out2, _ := testIO("")
	run([]string{"simulate-budget", "--window", "64k,100k,200k", "--format", "png", budgetFixtures + "basic.jsonl"}, io2)
	if !bytes.Equal(out.Bytes(), out2.Bytes()) {
		t.Error("two runs gave different PNG bytes")
	}
}

// The SVG is well-formed XML, byte-identical across runs, and carries one
// legend entry per window with its counts.
func TestSimulateBudgetSVG(t *testing.T) {
	render := func() []byte {
		io, out, errb := testIO("")
		if code := run([]string{"simulate-budget", "--window", "64k,70k,100k", "--format", "svg", budgetFixtures + "basic.jsonl"}, io); code != exitOK {
			t.Fatalf("exit %d: %s", code, errb)
		}
		return out.Bytes()
	}
	svg := render()
	if !bytes.Equal(svg, render()) {
		t.Fatal("two runs gave different SVG bytes")
	}
	dec := xml.NewDecoder(bytes.NewReader(svg))
	var texts []string
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("not well-formed XML: %v", err)
		}
		if cd, ok := tok.(xml.CharData); ok && strings.TrimSpace(string(cd)) != "" {
			texts = append(texts, strings.TrimSpace(string(cd)))
		}
	}
	all := strings.Join(texts, "\n")
	// Hand-computed in internal/derive/budget/model_test.go: 64k compacts at
	// 4 and 7; 70k overflows at 4 and 8; 100k compacts at 5.
	for _, want := range []string{
		"Context fill per request: basic.jsonl",
		"recorded (window 100k, 1 compaction)",
		"window 64k, threshold 57.6k: 2 compactions, 0 overflows",
		"window 70k, threshold 63k: 0 compactions, 2 overflows",
		"window 100k, threshold 90k: 1 compaction, 0 overflows",
		"window (solid), threshold (dashed)",
		"compaction",
		"overflow (the request does not fit)",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("no text %q in the SVG; texts:\n%s", want, all)
		}
	}
}

// The benchmark's row runs `rollout simulate-budget FILE` with defaults on
// a generated rollout; the evidence must match what the generator wrote.
func TestSimulateBudgetGenerated(t *testing.T) {
	p := filepath.Join(t.TempDir(), "big.jsonl")
	// A small window, so a small file holds several compactions.
	st, err := gen.WriteFile(p, gen.Options{Seed: 3, TargetBytes: 2 << 20, ContextWindow: 60000})
	if err != nil {
		t.Fatal(err)
	}
	if st.Compactions == 0 {
		t.Fatal("the generated rollout has no compaction; make it larger")
	}
	io, _, errb := testIO("")
	if code := run([]string{"simulate-budget", p}, io); code != exitOK {
		t.Fatalf("exit %d: %s", code, errb)
	}
	if errb.Len() != 0 {
		t.Errorf("stderr: %s", errb)
	}
	io, out, _ := testIO("")
	run([]string{"simulate-budget", "--format", "json", "--window", "1000000000", p}, io)
	var res budget.Result
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		t.Fatal(err)
	}
	if res.Requests != st.TokenCounts-st.Reemitted || res.Turns != st.Turns ||
		res.Recorded.Compactions != st.Compactions || res.Recorded.PeakFill != st.PeakFill || res.Recorded.Window != 60000 {
		t.Errorf("requests %d turns %d compactions %d peak %d window %d; generator: %d-%d requests, %d turns, %d compactions, peak %d",
			res.Requests, res.Turns, res.Recorded.Compactions, res.Recorded.PeakFill, res.Recorded.Window,
			st.TokenCounts, st.Reemitted, st.Turns, st.Compactions, st.PeakFill)
	}
	if o := res.Settings[0]; o.Compactions != 0 || o.Overflows != 0 {
		t.Errorf("a 1e9 window: %d compactions, %d overflows", o.Compactions, o.Overflows)
	}
}

// TestBudgetScripts runs the golden CLI scenarios in testdata/budget, one
// per format and feature. The fixtures of fixtures/budget are copied into
// each script's work directory, so paths in the output are just names.
func TestBudgetScripts(t *testing.T) {
	t.Parallel()
	fx, err := filepath.Glob(budgetFixtures + "*.jsonl")
	if err != nil || len(fx) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	testscript.Run(t, testscript.Params{
		Dir:           "testdata/budget",
		UpdateScripts: os.Getenv("ROLLOUT_UPDATE_GOLDEN") == "1",
		Setup: func(env *testscript.Env) error {
			for _, p := range fx {
				data, err := os.ReadFile(p)
				if err != nil {
					return err
				}
				if err := os.WriteFile(filepath.Join(env.WorkDir, filepath.Base(p)), data, 0o644); err != nil {
					return err
				}
			}
			// The fleet: a directory of rollouts, as under $CODEX_HOME/sessions.
			return os.CopyFS(filepath.Join(env.WorkDir, "fleet"), os.DirFS(budgetFixtures+"fleet"))
		},
		Cmds: map[string]func(*testscript.TestScript, bool, []string){
			"exitcode": cmdExitCode,
		},
	})
}
