package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// podSpec is what TestScaleDocRunsTheImage reads of a Job in docs/scale.md.
type podSpec struct {
	SecurityContext struct {
		RunAsUser int `yaml:"runAsUser"`
	} `yaml:"securityContext"`
	Containers []struct {
		Name    string
		Image   string
		Command []string
		Args    []string
	}
}

// TestScaleDocRunsTheImage: the Kubernetes recipes of docs/scale.md run
// the image make image builds, which has no shell: each container is
// pinned by digest, runs rollout through the entrypoint with args alone,
// as the image's user, and asks nothing of a shell ($((...)), globs, &&).
func TestScaleDocRunsTheImage(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", "scale.md"))
	if err != nil {
		t.Fatal(err)
	}
	blocks := regexp.MustCompile("(?s)```yaml\n(.*?)```").FindAllStringSubmatch(string(b), -1)
	if len(blocks) < 2 {
		t.Fatalf("docs/scale.md has %d YAML blocks, want the verify and merge Jobs", len(blocks))
	}
	pinned := regexp.MustCompile(`^[^\s:]+/rollout:[A-Za-z0-9_][A-Za-z0-9._-]*@sha256:\S+$`)
	for _, blk := range blocks {
		var job struct {
			Metadata struct{ Name string }
			Spec     struct {
				Template struct{ Spec podSpec }
			}
		}
		if err := yaml.Unmarshal([]byte(blk[1]), &job); err != nil {
			t.Errorf("a YAML block of docs/scale.md: %v", err)
			continue
		}
		pod := job.Spec.Template.Spec
		if pod.SecurityContext.RunAsUser != uid {
			t.Errorf("%s: runAsUser %d, the image's user is %d", job.Metadata.Name, pod.SecurityContext.RunAsUser, uid)
		}
		for _, c := range pod.Containers {
			where := job.Metadata.Name + "/" + c.Name
			if !pinned.MatchString(c.Image) {
				t.Errorf("%s: image %q is not REGISTRY/rollout:VERSION@sha256:DIGEST", where, c.Image)
			}
			if c.Command != nil {
				t.Errorf("%s: command %q: the image's entrypoint is rollout, and it has no shell", where, c.Command)
			}
			if len(c.Args) == 0 || strings.HasPrefix(c.Args[0], "-") {
				t.Errorf("%s: args %q do not start with a rollout command", where, c.Args)
			}
			for _, a := range c.Args {
				if strings.Contains(a, "$((") || strings.ContainsAny(a, "*;|&`") || strings.Contains(a, "${") {
					t.Errorf("%s: argument %q needs a shell", where, a)
				}
			}
		}
	}
}
