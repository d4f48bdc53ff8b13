package conformance

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// TUI runs the interactive codex in the home under tmux (what only the TUI
// does, such as /undo): it starts a session with prompt, waits until the
// turn has ended (the screen shows the mock's answer and settles), types
// each command followed by Enter, waiting after each until the screen has
// changed and settled, then quits with Ctrl-C and records what the run did.
// Stdout is the last screen. It needs tmux.
func (h *Home) TUI(ctx context.Context, prompt string, commands []string) (*Run, error) {
	if _, err := exec.LookPath("tmux"); err != nil {
		return nil, fmt.Errorf("conformance: the TUI runs under tmux: %w", err)
	}
	before, err := snapshot(h.Dir)
	if err != nil {
		return nil, err
	}
	mark := 0
	if h.Mock != nil {
		mark = h.Mock.Mark()
	}
	// A tmux server of our own, its socket in the case directory: nothing
	// of a user's tmux is touched, nothing is left behind.
	sock := filepath.Join(filepath.Dir(h.Dir), "tmux.sock")
	tmux := func(args ...string) (string, error) {
		out, err := exec.CommandContext(ctx, "tmux", append([]string{"-S", sock}, args...)...).CombinedOutput()
		return string(out), err
	}
	defer os.Remove(sock)
	defer tmux("kill-server")
	args := []string{"new-session", "-d", "-s", "codex", "-x", "160", "-y", "50", "-c", h.Work}
	for _, e := range h.env() {
		args = append(args, "-e", e)
	}
	args = append(append(append(args, h.Codex.Bin), h.ProviderArgs()...), "--sandbox", "danger-full-access", "-a", "never", prompt)
	if out, err := tmux(args...); err != nil {
		return nil, fmt.Errorf("conformance: tmux new-session: %w: %s", err, out)
	}
	screen := func() string {
		out, _ := tmux("capture-pane", "-p", "-t", "codex")
		return out
	}
	deadline := time.Now().Add(h.Timeout)
	// settled waits until the screen satisfies ok and then stays the same
	// for a second.
	settled := func(what string, ok func(string) bool) (string, error) {
		last, since := "", time.Now()
		for time.Now().Before(deadline) {
			s := screen()
			if s != last {
				last, since = s, time.Now()
			} else if ok(s) && time.Since(since) >= time.Second {
				return s, nil
			}
			time.Sleep(200 * time.Millisecond)
		}
		return last, fmt.Errorf("conformance: the TUI did not %s within %s; screen:\n%s", what, h.Timeout, last)
	}
	answered := func(string) bool {
		for _, q := range h.Mock.Since(mark) {
			if q.Answer == "msg" {
				return true
			}
		}
		return false
	}
	s, err := settled("end its turn", answered)
	for _, c := range commands {
		if err != nil {
			break
		}
		prev := s
		if _, err = tmux("send-keys", "-t", "codex", "-l", c); err == nil {
			time.Sleep(300 * time.Millisecond) // the popup of a slash command
			_, err = tmux("send-keys", "-t", "codex", "Enter")
		}
		if err == nil {
			s, err = settled("answer "+c, func(s string) bool { return s != prev })
		}
	}
	for i := 0; i < 2 && err == nil; i++ {
		tmux("send-keys", "-t", "codex", "C-c")
		time.Sleep(time.Second)
	}
	for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(200 * time.Millisecond) {
		if _, e := tmux("has-session", "-t", "codex"); e != nil {
			break // codex exited, and its session with it
		}
	}
	r := &Run{Args: append([]string{"tui", prompt}, commands...), Stdout: strings.TrimRight(s, "\n ")}
	if h.Mock != nil {
		r.Requests = h.Mock.Since(mark)
	}
	after, serr := snapshot(h.Dir)
	if serr != nil {
		return nil, serr
	}
	r.Changes = diffSnapshots(h.Dir, before, after)
	if err != nil {
		r.ExitCode = 1
		r.Stderr = err.Error()
	}
	return r, nil
}

// gitWork makes the home's working directory a git repository with one
// commit (what the TUI's /undo needs: it restores git snapshots) and marks
// it trusted in the home's config.toml, so the TUI asks nothing.
func (h *Home) gitWork(ctx context.Context) error {
	git := func(args ...string) error {
		cmd := exec.CommandContext(ctx, "git", args...)
		cmd.Dir = h.Work
		cmd.Env = append(h.env(), "GIT_AUTHOR_NAME=conformance", "GIT_AUTHOR_EMAIL=conformance@invalid",
			"GIT_COMMITTER_NAME=conformance", "GIT_COMMITTER_EMAIL=conformance@invalid", "GIT_CONFIG_NOSYSTEM=1")
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("conformance: git %s: %w: %s", strings.Join(args, " "), err, out)
		}
		return nil
	}
	if err := git("init", "-q"); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(h.Work, "README"), []byte("conformance\n"), 0o644); err != nil {
		return err
	}
	if err := git("add", "README"); err != nil {
		return err
	}
	if err := git("commit", "-qm", "conformance"); err != nil {
		return err
	}
	cfg := fmt.Sprintf("[projects.%q]\ntrust_level = \"trusted\"\n", h.Work)
	return os.WriteFile(filepath.Join(h.Dir, "config.toml"), []byte(cfg), 0o644)
}
