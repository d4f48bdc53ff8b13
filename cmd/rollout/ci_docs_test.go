package main

import (
	"encoding/json"
	"encoding/xml"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
	"go.yaml.in/yaml/v3"

	"github.com/rollout-dev/rollout/checks"
	"github.com/rollout-dev/rollout/internal/base/config"
)

// TestCIDocs runs the snippets of docs/ci.md: every `rollout` command of
// the GitHub Actions and GitLab CI jobs over a sessions/ directory holding
// the demo rollout, then checks the report files those jobs upload; the
// pre-commit hook the repository ships on the files pre-commit would pass
// it; the .rollout.yaml example through the config parser; and the shell
// sessions ("$ rollout ...") against their shown output.
//
// It changes the working directory (the snippets use relative paths), so it
// does not run in parallel.
func TestCIDocs(t *testing.T) {
	doc, err := os.ReadFile("../../docs/ci.md")
	if err != nil {
		t.Fatal(err)
	}
	hooks, err := os.ReadFile("../../.pre-commit-hooks.yaml")
	if err != nil {
		t.Fatal(err)
	}
	demo, err := filepath.Glob("../../fixtures/demo/rollout-*.jsonl")
	if err != nil || len(demo) != 1 {
		t.Fatalf("the demo rollout: %v %v", demo, err)
	}
	demoData, err := os.ReadFile(demo[0])
	if err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	t.Chdir(work)
	write := func(name string, data []byte) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(name), 0o777); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(name, data, 0o666); err != nil {
			t.Fatal(err)
		}
	}
	demoPath := "sessions/" + filepath.Base(demo[0])
	write(demoPath, demoData)
	write(demoPath+".quarantine.jsonl", []byte(`{"line":3,"byte_offset":0,"reason":"line/blank","raw":""}`+"\n"))
	write("sessions/notes.txt", []byte("not a rollout\n"))

	blocks := fencedBlocks(string(doc))
	seen := map[string]bool{}
	for _, b := range blocks {
		switch {
		case b.lang == "yaml" && strings.Contains(b.text, "jobs:"):
			seen["github"] = true
			checkGitHubWorkflow(t, b.text)
		case b.lang == "yaml" && strings.Contains(b.text, "artifacts:"):
			seen["gitlab"] = true
			checkGitLabJob(t, b.text)
		case b.lang == "yaml" && strings.Contains(b.text, "repos:"):
			seen["pre-commit"] = true
			checkPreCommit(t, b.text, hooks)
		case b.lang == "yaml" && strings.Contains(b.text, ".rollout.yaml"):
			seen["config"] = true
			c, err := config.Parse([]byte(b.text))
			if err != nil {
				t.Errorf("docs/ci.md: the .rollout.yaml example does not parse: %v", err)
				continue
			}
			for _, list := range append([][]string{c.Select, c.Ignore}, slices.Collect(maps.Values(c.PerPathIgnores))...) {
				if _, err := checks.NewFilter(list, nil); err != nil {
					t.Errorf("docs/ci.md: the .rollout.yaml example: %v", err)
				}
			}
		case b.lang == "" && strings.HasPrefix(b.text, "$ "):
			seen["session"] = true
			checkShellSession(t, b.text)
		}
	}
	for _, want := range []string{"github", "gitlab", "pre-commit", "config", "session"} {
		if !seen[want] {
			t.Errorf("docs/ci.md has no %s snippet", want)
		}
	}
}

type fenced struct{ lang, text string }

var fenceRE = regexp.MustCompile("(?ms)^```([a-z]*)\n(.*?)^```$")

func fencedBlocks(doc string) []fenced {
	var out []fenced
	for _, m := range fenceRE.FindAllStringSubmatch(doc, -1) {
		out = append(out, fenced{m[1], m[2]})
	}
	return out
}

// runRollout runs one `rollout ...` line of a snippet in-process.
func runDocCommand(t *testing.T, line string) (code int, stdout, stderr string) {
	t.Helper()
	args := strings.Fields(line)
	if args[0] != "rollout" {
		t.Fatalf("not a rollout command: %s", line)
	}
	io, out, errb := testIO("")
	code = run(args[1:], io)
	return code, out.String(), errb.String()
}

// runSnippetCommand runs a shell line of a CI job if it is a rollout
// command; findings in the demo make it exit 1, which the jobs expect.
func runSnippetCommand(t *testing.T, line string) bool {
	t.Helper()
	line = strings.TrimSpace(line)
	if !strings.HasPrefix(line, "rollout ") {
		return false
	}
	code, _, stderr := runDocCommand(t, line)
	if code != exitFindings {
		t.Errorf("docs/ci.md: %s: exit %d, want 1 (the demo has errors)\n%s", line, code, stderr)
	}
	return true
}

func checkGitHubWorkflow(t *testing.T, text string) {
	var wf struct {
		Permissions map[string]string `yaml:"permissions"`
		Jobs        map[string]struct {
			Steps []struct {
				Uses string            `yaml:"uses"`
				Run  string            `yaml:"run"`
				If   string            `yaml:"if"`
				With map[string]string `yaml:"with"`
			} `yaml:"steps"`
		} `yaml:"jobs"`
	}
	if err := yaml.Unmarshal([]byte(text), &wf); err != nil {
		t.Fatalf("docs/ci.md: the GitHub workflow does not parse: %v", err)
	}
	if wf.Permissions["security-events"] != "write" {
		t.Error("docs/ci.md: upload-sarif needs permissions: security-events: write")
	}
	t.Setenv("GITHUB_STEP_SUMMARY", filepath.Join(t.TempDir(), "summary.md"))
	ran, uploaded := 0, 0
	for _, job := range wf.Jobs {
		for _, st := range job.Steps {
			if runSnippetCommand(t, st.Run) {
				ran++
			}
			if strings.HasPrefix(st.Uses, "github/codeql-action/upload-sarif@") {
				uploaded++
				if st.If != "always()" {
					t.Errorf("docs/ci.md: upload-sarif must run after a failing verify (if: always()), has %q", st.If)
				}
				data, err := os.ReadFile(st.With["sarif_file"])
				if err != nil {
					t.Errorf("docs/ci.md: the workflow uploads %q, which verify did not write: %v", st.With["sarif_file"], err)
					continue
				}
				if gjson.GetBytes(data, "version").String() != "2.1.0" || !gjson.GetBytes(data, "runs.0.results.0").Exists() {
					t.Errorf("docs/ci.md: %s is not a SARIF log with results", st.With["sarif_file"])
				}
			}
		}
	}
	if ran == 0 || uploaded == 0 {
		t.Errorf("docs/ci.md: the GitHub workflow runs %d rollout commands and uploads %d SARIF files", ran, uploaded)
	}
	summary, err := os.ReadFile(os.Getenv("GITHUB_STEP_SUMMARY"))
	if err != nil || !strings.Contains(string(summary), "| item/id-prefix-mismatch |") {
		t.Errorf("docs/ci.md: the workflow's verify wrote no step summary with the findings: %v\n%s", err, summary)
	}
}

func checkGitLabJob(t *testing.T, text string) {
	var jobs map[string]struct {
		Script    []string `yaml:"script"`
		Artifacts struct {
			When    string            `yaml:"when"`
			Reports map[string]string `yaml:"reports"`
		} `yaml:"artifacts"`
	}
	if err := yaml.Unmarshal([]byte(text), &jobs); err != nil {
		t.Fatalf("docs/ci.md: the GitLab job does not parse: %v", err)
	}
	for name, job := range jobs {
		ran := 0
		for _, line := range job.Script {
			if runSnippetCommand(t, line) {
				ran++
			}
		}
		if ran == 0 {
			t.Errorf("docs/ci.md: GitLab job %s runs no rollout command", name)
		}
		if job.Artifacts.When != "always" {
			t.Errorf("docs/ci.md: GitLab job %s keeps its reports only on success (artifacts:when %q)", name, job.Artifacts.When)
		}
		junit, err := os.ReadFile(job.Artifacts.Reports["junit"])
		var suites struct {
			XMLName  xml.Name `xml:"testsuites"`
			Failures int      `xml:"failures,attr"`
		}
		if err != nil || xml.Unmarshal(junit, &suites) != nil || suites.Failures == 0 {
			t.Errorf("docs/ci.md: GitLab job %s: the JUnit report %q is missing or has no failures: %v", name, job.Artifacts.Reports["junit"], err)
		}
		cq, err := os.ReadFile(job.Artifacts.Reports["codequality"])
		var issues []map[string]any
		if err != nil || json.Unmarshal(cq, &issues) != nil || len(issues) == 0 || issues[0]["fingerprint"] == nil {
			t.Errorf("docs/ci.md: GitLab job %s: the Code Quality report %q is missing or empty: %v", name, job.Artifacts.Reports["codequality"], err)
		}
	}
}

func checkPreCommit(t *testing.T, text string, hooksFile []byte) {
	var cfg struct {
		Repos []struct {
			Repo  string `yaml:"repo"`
			Rev   string `yaml:"rev"`
			Hooks []struct {
				ID string `yaml:"id"`
			} `yaml:"hooks"`
		} `yaml:"repos"`
	}
	if err := yaml.Unmarshal([]byte(text), &cfg); err != nil || len(cfg.Repos) != 1 || len(cfg.Repos[0].Hooks) != 1 {
		t.Fatalf("docs/ci.md: the pre-commit config does not parse as one repo with one hook: %v", err)
	}
	var hooks []struct {
		ID          string `yaml:"id"`
		Name        string `yaml:"name"`
		Description string `yaml:"description"`
		Entry       string `yaml:"entry"`
		Language    string `yaml:"language"`
		Files       string `yaml:"files"`
		Exclude     string `yaml:"exclude"`
	}
	dec := yaml.NewDecoder(strings.NewReader(string(hooksFile)))
	dec.KnownFields(true)
	if err := dec.Decode(&hooks); err != nil {
		t.Fatalf(".pre-commit-hooks.yaml: %v", err)
	}
	repo := cfg.Repos[0]
	if repo.Repo != "https://github.com/rollout-dev/rollout" || !regexp.MustCompile(`^(v\d+\.\d+\.\d+|[0-9a-f]{40})$`).MatchString(repo.Rev) {
		t.Errorf("docs/ci.md: pre-commit uses %s at %q; want this repository at a pinned commit or vX.Y.Z", repo.Repo, repo.Rev)
	}
	found := false
	for _, h := range hooks {
		if h.ID != repo.Hooks[0].ID {
			continue
		}
		found = true
		// pre-commit passes the staged files that match files and not
		// exclude (Python regexes; these are also valid Go ones).
		files, exclude := regexp.MustCompile(h.Files), regexp.MustCompile(h.Exclude)
		var staged []string
		filepath.WalkDir(".", func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() && files.MatchString(p) && !exclude.MatchString(p) {
				staged = append(staged, p)
			}
			return err
		})
		if len(staged) != 1 || staged[0] != filepath.Join("sessions", filepath.Base(staged[0])) || strings.Contains(staged[0], "quarantine") {
			t.Errorf(".pre-commit-hooks.yaml: the hook would get %v; want only the demo rollout", staged)
			continue
		}
		code, stdout, stderr := runDocCommand(t, h.Entry+" "+strings.Join(staged, " "))
		// --quiet: only what fails the commit (the demo's two errors).
		if code != exitFindings || strings.Count(stdout, ": error: ") != 2 || strings.Contains(stdout, ": warning: ") {
			t.Errorf(".pre-commit-hooks.yaml: %s: exit %d, want 1 with only the errors shown:\n%s%s", h.Entry, code, stdout, stderr)
		}
		if h.Language != "golang" {
			t.Errorf(".pre-commit-hooks.yaml: language %q; pre-commit builds the pinned rev with golang", h.Language)
		}
	}
	if !found {
		t.Errorf("docs/ci.md: hook %s is not in .pre-commit-hooks.yaml", repo.Hooks[0].ID)
	}
}

// checkShellSession runs each "$ rollout ..." line and compares its
// standard output with the lines shown after it.
func checkShellSession(t *testing.T, text string) {
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	for i := 0; i < len(lines); i++ {
		cmd, ok := strings.CutPrefix(lines[i], "$ ")
		if !ok {
			continue
		}
		var want []string
		for i+1 < len(lines) && !strings.HasPrefix(lines[i+1], "$ ") {
			i++
			want = append(want, lines[i])
		}
		if !strings.HasPrefix(cmd, "rollout ") {
			continue
		}
		code, stdout, stderr := runDocCommand(t, cmd)
		if code != exitOK {
			t.Errorf("docs/ci.md: %s: exit %d, want 0\n%s", cmd, code, stderr)
		}
		if len(want) > 0 && strings.TrimSuffix(stdout, "\n") != strings.Join(want, "\n") {
			t.Errorf("docs/ci.md: %s prints\n%s\nbut the page shows\n%s", cmd, stdout, strings.Join(want, "\n"))
		}
	}
}
