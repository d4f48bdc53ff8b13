package main

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// TestRepairOptions: arguments -> options, through the runF hook.
func TestRepairOptions(t *testing.T) {
	tests := []struct {
		args []string
		want repairOptions
		code int // exit code of an invalid invocation; 0: valid
	}{
		{args: []string{"f.jsonl"}, want: repairOptions{path: "f.jsonl", paths: []string{"f.jsonl"}, replayFlags: replayFlags{maxLineBytes: 64 << 20, handoffCap: 16000, capped: true}, color: "auto"}},
		{args: []string{"--write", "-o", "out.jsonl", "f.jsonl"}, want: repairOptions{path: "f.jsonl", paths: []string{"f.jsonl"}, write: true, output: "out.jsonl", replayFlags: replayFlags{maxLineBytes: 64 << 20, handoffCap: 16000, capped: true}, color: "auto"}},
		{args: []string{"--write", "--no-backup", "--diff", "--random-ids", "--report", "r.json", "f.jsonl"},
			want: repairOptions{path: "f.jsonl", paths: []string{"f.jsonl"}, write: true, noBackup: true, diff: "short", randomIDs: true, report: "r.json", replayFlags: replayFlags{maxLineBytes: 64 << 20, handoffCap: 16000, capped: true}, color: "auto"}},
		{args: []string{"--diff=full", "--color", "never", "f.jsonl"}, want: repairOptions{path: "f.jsonl", paths: []string{"f.jsonl"}, diff: "full", color: "never", replayFlags: replayFlags{maxLineBytes: 64 << 20, handoffCap: 16000, capped: true}}},
		{args: []string{"--diff=words", "f.jsonl"}, code: exitUsage},
		{args: []string{"--color", "blue", "f.jsonl"}, code: exitUsage},
		{args: []string{"--fix", "default,tool/orphan-call", "--fix", "ordinal/", "--max-line-bytes", "100", "--handoff-cap", "64000", "f.jsonl"},
			want: repairOptions{path: "f.jsonl", paths: []string{"f.jsonl"}, fix: []string{"default", "tool/orphan-call", "ordinal/"}, replayFlags: replayFlags{maxLineBytes: 100, handoffCap: 64000, capped: true}, color: "auto"}},
		{args: []string{"-o", "out.jsonl", "f.jsonl"}, code: exitUsage},                   // -o needs --write
		{args: []string{"--no-backup", "f.jsonl"}, code: exitUsage},                       // only with --write
		{args: []string{"--write", "--no-backup", "-o", "o", "f.jsonl"}, code: exitUsage}, // and not with -o
		{args: []string{"-"}, code: exitUsage},
		{args: []string{"--fix", "nope/nothing", "f.jsonl"}, code: exitUsage},
		{args: []string{"--fix", "tool/duplicate-call-id", "f.jsonl"}, code: exitUsage}, // a rule without a fix
		{args: []string{"--max-line-bytes", "0", "f.jsonl"}, code: exitUsage},
		{args: []string{"--handoff-cap", "0", "f.jsonl"}, code: exitUsage},
		{args: []string{}, code: exitUsage},
		{args: []string{"a", "b"}, want: repairOptions{path: "a", paths: []string{"a", "b"}, replayFlags: replayFlags{maxLineBytes: 64 << 20, handoffCap: 16000, capped: true}, color: "auto"}},
		{args: []string{"--write", "-o", "o.jsonl", "a", "b"}, code: exitUsage}, // -o takes one input
		{args: []string{"--undo", "--write", "f.jsonl"}, code: exitUsage},
		{args: []string{"--undo", "f.jsonl"}, want: repairOptions{path: "f.jsonl", paths: []string{"f.jsonl"}, undo: true, replayFlags: replayFlags{maxLineBytes: 64 << 20, handoffCap: 16000, capped: true}, color: "auto"}},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			io, _, _ := testIO("")
			var got *repairOptions
			cmd := newRepairCmd(&app{io: io}, func(_ context.Context, o *repairOptions) error { got = o; return nil })
			cmd.SetArgs(tt.args)
			cmd.SetOut(io.Out)
			cmd.SetErr(io.Err)
			cmd.SilenceErrors, cmd.SilenceUsage = true, true
			err := cmd.Execute()
			if tt.code != 0 {
				if err == nil {
					t.Fatalf("accepted, want exit %d", tt.code)
				}
				if code := reportError(io, err); code != tt.code {
					t.Errorf("exit %d, want %d (%v)", code, tt.code, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, *got, cmp.AllowUnexported(repairOptions{}, nowFlag{}, replayFlags{}), cmpopts.IgnoreFields(repairOptions{}, "fixes"), cmp.Comparer(func(a, b func(string)) bool { return a == nil && b == nil })); diff != "" {
				t.Errorf("options (-want +got):\n%s", diff)
			}
		})
	}
}
