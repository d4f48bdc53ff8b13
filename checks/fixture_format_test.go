package checks_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// TestFixtureFormat checks the fixture reader itself: a reader that dropped
// escapes or directives would let every fixture pass for the wrong reason.
func TestFixtureFormat(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	fx, err := parseRuleFixture(write("line-crlf.variant.txtar", `# prose, not a directive
no-final-newline clean.jsonl
max-line-bytes 10
path rollout-x.jsonl
-- rollout.jsonl --
{}<CR>
-- want --
# a comment
1 line/crlf
-- clean.jsonl --
{}
`))
	if err != nil {
		t.Fatal(err)
	}
	if fx.rule != "line/crlf" || fx.maxLn != 10 || fx.path != "rollout-x.jsonl" {
		t.Errorf("rule %q, max %d, path %q", fx.rule, fx.maxLn, fx.path)
	}
	type sec struct {
		Section, Data string
		Want          []string
	}
	var secs []sec
	for _, c := range fx.cases {
		secs = append(secs, sec{c.section, string(c.data), lines(c.want)})
	}
	want := []sec{{"rollout.jsonl", "{}\r\n", []string{"1 line/crlf info"}}, {"clean.jsonl", "{}", nil}}
	if diff := cmp.Diff(want, secs, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("sections (-want +got):\n%s", diff)
	}

	for name, body := range map[string]string{
		"unknown directive": "bogus\n-- rollout.jsonl --\n{}\n-- want --\n",
		"no want":           "-- rollout.jsonl --\n{}\n",
		"no rollout":        "-- want --\n",
		"unregistered rule": "-- rollout.jsonl --\n{}\n-- want --\n1 line/no-such-rule\n",
		"bad severity":      "-- rollout.jsonl --\n{}\n-- want --\n1 line/crlf loud\n",
		"bad line":          "-- rollout.jsonl --\n{}\n-- want --\nL1 line/crlf\n",
		"unknown section":   "-- rollout.jsonl --\n{}\n-- want --\n-- notes --\n",
		"orphan clean.want": "-- rollout.jsonl --\n{}\n-- want --\n-- clean.want --\n",
		"no-final-newline":  "no-final-newline other.jsonl\n-- rollout.jsonl --\n{}\n-- want --\n",
	} {
		if _, err := parseRuleFixture(write("line-crlf.txtar", body)); err == nil {
			t.Errorf("%s: parsed without error", name)
		}
	}
	if _, err := parseRuleFixture(write("nohyphen.txtar", "-- rollout.jsonl --\n{}\n-- want --\n")); err == nil {
		t.Error("a name without <area>-<name> parsed without error")
	}
}
