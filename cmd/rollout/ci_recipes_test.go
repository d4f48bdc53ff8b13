package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// TestCIRecipesBuild runs the install steps of docs/ci.md's jobs as far as
// they run here: the checkout of this repository at the pinned commit (a
// clone of the local repository stands in for GitHub's), the build with
// the commands the job gives, and the binary they build, found where the
// job puts it on PATH. (TestCIDocs runs the jobs' rollout commands.) It
// also holds the Go versions the docs name to go.mod's.
func TestCIRecipesBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("builds rollout twice")
	}
	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	gomod, err := os.ReadFile(filepath.Join(repo, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	goVersion := regexp.MustCompile(`(?m)^go (\S+)$`).FindSubmatch(gomod)
	if goVersion == nil {
		t.Fatal("go.mod names no go version")
	}
	want := string(goVersion[1])
	readme, _ := os.ReadFile(filepath.Join(repo, "README.md"))
	if !strings.Contains(string(readme), "Go "+want+" ") {
		t.Errorf("README.md does not say the Go version go.mod names (%s)", want)
	}
	doc, err := os.ReadFile(filepath.Join(repo, "docs/ci.md"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git: the recipes clone the repository")
	}
	if out, err := exec.Command("git", "-C", repo, "rev-parse", "--is-shallow-repository").Output(); err != nil || strings.TrimSpace(string(out)) != "false" {
		t.Skipf("%s is not a whole git clone (%v): the pinned commit cannot be checked out", repo, err)
	}
	env := append(os.Environ(), "GOFLAGS=-trimpath", "GOTOOLCHAIN=local")
	sh := func(dir, script string, extra ...string) string {
		t.Helper()
		cmd := exec.Command("bash", "-ec", script)
		cmd.Dir, cmd.Env = dir, append(append([]string(nil), env...), extra...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("docs/ci.md: %s: %v\n%s", script, err, out)
		}
		return string(out)
	}
	pinned := func(commit string) {
		t.Helper()
		if !regexp.MustCompile(`^[0-9a-f]{40}$`).MatchString(commit) {
			t.Fatalf("docs/ci.md pins %q, not a full commit id", commit)
		}
		if err := exec.Command("git", "-C", repo, "cat-file", "-e", commit+"^{commit}").Run(); err != nil {
			t.Fatalf("docs/ci.md pins %s, which is not a commit of this repository", commit)
		}
	}
	// built checks the binary a job put on PATH: it runs, from the commit.
	built := func(job, out, commit string) {
		t.Helper()
		m := regexp.MustCompile(`commit ([0-9a-f]+)`).FindStringSubmatch(out)
		if m == nil || !strings.HasPrefix(commit, m[1]) {
			t.Errorf("docs/ci.md: the %s job's rollout is not the pinned commit %s:\n%s", job, commit, out)
		}
	}
	jobs := 0
	for _, b := range fencedBlocks(string(doc)) {
		switch {
		case b.lang == "yaml" && strings.Contains(b.text, "jobs:"):
			jobs++
			var wf struct {
				Env  map[string]string `yaml:"env"`
				Jobs map[string]struct {
					Steps []struct {
						Uses string            `yaml:"uses"`
						Run  string            `yaml:"run"`
						With map[string]string `yaml:"with"`
					} `yaml:"steps"`
				} `yaml:"jobs"`
			}
			if err := yaml.Unmarshal([]byte(b.text), &wf); err != nil {
				t.Fatal(err)
			}
			commit := wf.Env["ROLLOUT_COMMIT"]
			pinned(commit)
			work := t.TempDir()
			os.MkdirAll(filepath.Join(work, "tmp"), 0o777)
			githubPath := filepath.Join(work, "github_path")
			expr := strings.NewReplacer("${{ env.ROLLOUT_COMMIT }}", commit)
			for _, job := range wf.Jobs {
				for _, st := range job.Steps {
					switch {
					case strings.HasPrefix(st.Uses, "actions/checkout@") && st.With["repository"] == "rollout-dev/rollout":
						dst := filepath.Join(work, st.With["path"])
						sh(work, "git clone -q --no-checkout '"+repo+"' '"+dst+"' && git -C '"+dst+"' checkout -q '"+expr.Replace(st.With["ref"])+"'")
					case strings.HasPrefix(st.Uses, "actions/setup-go@"):
						f := st.With["go-version-file"]
						if data, err := os.ReadFile(filepath.Join(work, f)); err != nil || !bytes.Contains(data, []byte("\ngo ")) {
							t.Errorf("docs/ci.md: setup-go reads %q, not the checkout's go.mod: %v", f, err)
						}
					case st.Run != "" && !strings.HasPrefix(st.Run, "rollout "):
						sh(work, st.Run, "RUNNER_TEMP="+filepath.Join(work, "tmp"), "GITHUB_PATH="+githubPath)
					}
				}
			}
			dirs, err := os.ReadFile(githubPath)
			if err != nil {
				t.Fatalf("docs/ci.md: the GitHub job puts nothing on PATH: %v", err)
			}
			path := strings.Join(strings.Fields(string(dirs)), ":") + ":" + os.Getenv("PATH")
			built("GitHub", sh(work, "rollout version", "PATH="+path), commit)
		case b.lang == "yaml" && strings.Contains(b.text, "artifacts:"):
			jobs++
			var gl map[string]struct {
				Image     string            `yaml:"image"`
				Variables map[string]string `yaml:"variables"`
				Script    []string          `yaml:"script"`
			}
			if err := yaml.Unmarshal([]byte(b.text), &gl); err != nil {
				t.Fatal(err)
			}
			for name, job := range gl {
				if job.Image != "golang:"+want {
					t.Errorf("docs/ci.md: GitLab job %s runs in %s; go.mod needs Go %s", name, job.Image, want)
				}
				commit := job.Variables["ROLLOUT_COMMIT"]
				pinned(commit)
				// The script's lines share one shell, up to its first
				// rollout command; the clone is of the local repository.
				var script []string
				for _, line := range job.Script {
					if strings.HasPrefix(line, "rollout ") {
						break
					}
					script = append(script, strings.ReplaceAll(line, "https://github.com/rollout-dev/rollout.git", "'"+repo+"'"))
				}
				work := t.TempDir()
				out := sh(work, strings.Join(append(script, "rollout version"), "\n"), "CI_PROJECT_DIR="+work, "ROLLOUT_COMMIT="+commit)
				built("GitLab "+name, out, commit)
			}
		}
	}
	if jobs != 2 {
		t.Errorf("docs/ci.md has %d CI jobs, want the GitHub and the GitLab one", jobs)
	}
}
