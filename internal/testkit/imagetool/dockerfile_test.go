package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// instruction is one Dockerfile instruction, continuation lines joined.
type instruction struct{ cmd, args string }

// dockerfile reads the repository's Dockerfile into its stages, each the
// instructions from one FROM to the next.
func dockerfile(t *testing.T) [][]instruction {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	var stages [][]instruction
	var cur string
	for line := range strings.SplitSeq(string(b), "\n") {
		trimmed := strings.TrimSpace(line)
		if cur == "" && (trimmed == "" || strings.HasPrefix(trimmed, "#")) {
			continue
		}
		if rest, ok := strings.CutSuffix(trimmed, `\`); ok {
			cur += rest + " "
			continue
		}
		cur += trimmed
		cmd, args, _ := strings.Cut(cur, " ")
		cur = ""
		in := instruction{strings.ToUpper(cmd), strings.TrimSpace(args)}
		if in.cmd == "FROM" {
			stages = append(stages, nil)
		}
		if len(stages) == 0 {
			t.Fatalf("Dockerfile: %s before the first FROM", in.cmd)
		}
		stages[len(stages)-1] = append(stages[len(stages)-1], in)
	}
	if len(stages) < 2 {
		t.Fatalf("Dockerfile: %d stages, want a build stage and the image", len(stages))
	}
	return stages
}

func args(stage []instruction, cmd string) []string {
	var out []string
	for _, in := range stage {
		if in.cmd == cmd {
			out = append(out, in.args)
		}
	}
	return out
}

// TestDockerfileMatchesImagetool: the Dockerfile cannot be built here (no
// Docker engine), so it is held to what imagetool builds and the tests
// run: the binary path, the user, the directories, the entrypoint, a
// static build on the Go of go.mod, and an empty final stage.
func TestDockerfileMatchesImagetool(t *testing.T) {
	stages := dockerfile(t)
	build, final := stages[0], stages[len(stages)-1]

	gomod, err := os.ReadFile(filepath.Join("..", "..", "..", "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	goMinor := regexp.MustCompile(`(?m)^go (\d+\.\d+)`).FindSubmatch(gomod)
	if from := build[0].args; goMinor == nil || !strings.HasPrefix(from, "golang:"+string(goMinor[1])+" ") {
		t.Errorf("build stage FROM %s: want golang:%s (go.mod's go)", from, goMinor[1])
	}
	if from := final[0].args; from != "scratch" {
		t.Errorf("final stage FROM %s: want scratch (no shell, as imagetool's empty base)", from)
	}

	runs := strings.Join(args(build, "RUN"), "\n")
	for _, want := range []string{
		"CGO_ENABLED=0 ", "-trimpath", "-o /rootfs" + binaryPath + " ./cmd/rollout",
		"chmod 1777 /rootfs/tmp", "chown " + user + " /rootfs" + homeDir + " /rootfs" + workDir,
		"/rootfs" + caPath,
		strings.ReplaceAll(passwd, "\n", `\n`) + "' > /rootfs/etc/passwd",
		strings.ReplaceAll(group, "\n", `\n`) + "' > /rootfs/etc/group",
	} {
		if !strings.Contains(runs, want) {
			t.Errorf("the build stage's RUN lines lack %q", want)
		}
	}

	var entrypoint []string
	if ep := args(final, "ENTRYPOINT"); len(ep) != 1 || json.Unmarshal([]byte(ep[0]), &entrypoint) != nil {
		t.Errorf("ENTRYPOINT %q: want one, in exec form (there is no shell)", ep)
	}
	if !slices.Equal(entrypoint, []string{binaryPath}) {
		t.Errorf("ENTRYPOINT %q, imagetool's %q", entrypoint, binaryPath)
	}
	if got := args(final, "USER"); !slices.Equal(got, []string{user}) {
		t.Errorf("USER %q, imagetool's %q", got, user)
	}
	if got := args(final, "WORKDIR"); !slices.Equal(got, []string{workDir}) {
		t.Errorf("WORKDIR %q, imagetool's %q", got, workDir)
	}
	if got := args(final, "CMD"); got != nil {
		t.Errorf("CMD %q: imagetool's image has none", got)
	}
	env := strings.Fields(strings.Join(args(final, "ENV"), " "))
	for _, want := range []string{"PATH=/usr/local/bin", "HOME=" + homeDir} {
		if !slices.Contains(env, want) {
			t.Errorf("ENV %q lacks %s", env, want)
		}
	}
	if labels := strings.Join(args(final, "LABEL"), " "); !strings.Contains(labels, `org.opencontainers.image.source="`+sourceURL+`"`) {
		t.Errorf("LABEL %s: want the source label %s", labels, sourceURL)
	}
}
