package conformance

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// CacheDir is where Codex versions are installed, outside the repository:
// $ROLLOUT_CODEX_CACHE, else $XDG_CACHE_HOME/rollout/codex, else
// ~/.cache/rollout/codex. Each version has its own npm prefix below it.
func CacheDir() string {
	if d := os.Getenv("ROLLOUT_CODEX_CACHE"); d != "" {
		return d
	}
	if d := os.Getenv("XDG_CACHE_HOME"); d != "" {
		return filepath.Join(d, "rollout", "codex")
	}
	home, err := os.UserHomeDir()
	if err != nil {
		home = os.TempDir()
	}
	return filepath.Join(home, ".cache", "rollout", "codex")
}

// Codex is one installed version of the Codex CLI.
type Codex struct {
	Version string
	Bin     string // the npm launcher, node_modules/.bin/codex
}

func binPath(version string) string {
	return filepath.Join(CacheDir(), version, "node_modules", ".bin", "codex")
}

// Installed returns the version if it is in the cache, without npm.
func Installed(version string) (*Codex, bool) {
	bin := binPath(version)
	if fi, err := os.Stat(bin); err == nil && !fi.IsDir() {
		return &Codex{Version: version, Bin: bin}, true
	}
	return nil, false
}

// Install returns the version from the cache, installing it with npm first
// when it is not there (into a staging prefix renamed into place, so an
// interrupted install leaves no half version behind).
func Install(ctx context.Context, version string) (*Codex, error) {
	if c, ok := Installed(version); ok {
		return c, nil
	}
	if strings.ContainsAny(version, "/\\ ") || version == "" || strings.HasPrefix(version, ".") {
		return nil, fmt.Errorf("conformance: bad version %q", version)
	}
	if _, err := exec.LookPath("npm"); err != nil {
		return nil, fmt.Errorf("conformance: npm not found: %w", err)
	}
	if err := os.MkdirAll(CacheDir(), 0o755); err != nil {
		return nil, err
	}
	stage, err := os.MkdirTemp(CacheDir(), "."+version+".install-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(stage)
	cmd := exec.CommandContext(ctx, "npm", "install", "--no-audit", "--no-fund", "--prefix", stage, "@openai/codex@"+version)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("conformance: npm install @openai/codex@%s: %w\n%s", version, err, tail(out, 2000))
	}
	if err := os.Rename(stage, filepath.Join(CacheDir(), version)); err != nil {
		if c, ok := Installed(version); ok { // another process won the race
			return c, nil
		}
		return nil, err
	}
	if c, ok := Installed(version); ok {
		return c, nil
	}
	return nil, fmt.Errorf("conformance: @openai/codex@%s installed no codex binary", version)
}

// Instructions are the base instructions every run gets.
const Instructions = "You are Codex under test by rollout's conformance harness. Follow the mock's script."

// Home is one Codex home (CODEX_HOME) with its working directory, driven
// against a mock. Make a fresh one per case: Codex's state_5.sqlite holds
// absolute rollout paths, so a copied home resumes the original's files.
type Home struct {
	Codex *Codex
	Mock  *Mock
	Dir   string // CODEX_HOME
	Work  string // the working directory Codex runs in
	// Config holds extra -c overrides for every run (key=value).
	Config []string
	// Remote: use the built-in openai provider pointed at the mock (remote
	// compaction in 0.153+) instead of a custom provider.
	Remote bool
	// ExperimentalAPI: AppServer's initialize opts into the experimental
	// app-server API (0.148.0 refuses thread/revert without:
	// "requires experimentalApi capability").
	ExperimentalAPI bool
	Timeout         time.Duration
}

// NewHome makes a home under dir (created; it should be empty).
func NewHome(dir string, c *Codex, m *Mock) (*Home, error) {
	h := &Home{Codex: c, Mock: m, Dir: filepath.Join(dir, "codex-home"), Work: filepath.Join(dir, "work"), Timeout: time.Minute}
	for _, d := range []string{h.Dir, h.Work, filepath.Join(dir, "user")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, err
		}
	}
	// Short base instructions keep the goldens small: every version
	// copies them into session_meta (newer ones into each resume's too).
	instr := filepath.Join(dir, "user", "instructions.md")
	if err := os.WriteFile(instr, []byte(Instructions), 0o644); err != nil {
		return nil, err
	}
	h.Config = []string{fmt.Sprintf("model_instructions_file=%q", instr), fmt.Sprintf("experimental_instructions_file=%q", instr)}
	return h, nil
}

// Run is what one Codex invocation did.
type Run struct {
	Args     []string  `json:"args"`
	ExitCode int       `json:"exit_code"`
	Stdout   string    `json:"stdout"`
	Stderr   string    `json:"stderr"`
	Requests []Request `json:"requests"`
	// Changes lists the files of CODEX_HOME the run created, changed or
	// removed, relative to it.
	Changes []Change `json:"changes"`
}

// Change is one file of CODEX_HOME a run touched.
type Change struct {
	Path string `json:"path"`
	// What: "created", "appended", "rewritten" or "removed".
	What       string `json:"what"`
	SizeBefore int64  `json:"size_before"`
	SizeAfter  int64  `json:"size_after"`
	// Appended holds the bytes appended to a rollout (a *.jsonl file).
	Appended []byte `json:"-"`
}

// Responses lists the requests to /responses (the model requests).
func (r *Run) Responses() []Request {
	var out []Request
	for _, q := range r.Requests {
		if q.Method == "POST" && strings.HasSuffix(q.Path, "/responses") {
			out = append(out, q)
		}
	}
	return out
}

func (h *Home) env() []string {
	user := filepath.Join(filepath.Dir(h.Dir), "user")
	env := []string{
		"CODEX_HOME=" + h.Dir,
		"HOME=" + user,
		"XDG_CONFIG_HOME=" + filepath.Join(user, ".config"),
		"XDG_CACHE_HOME=" + filepath.Join(user, ".cache"),
		"OPENAI_API_KEY=sk-conformance-mock",
		"PATH=" + os.Getenv("PATH"),
		"TERM=dumb",
		"NO_COLOR=1",
		"LANG=C.UTF-8",
		"NO_PROXY=127.0.0.1,localhost",
	}
	return env
}

// ProviderArgs are the global flags that point Codex at the mock.
func (h *Home) ProviderArgs() []string {
	var a []string
	if h.Remote {
		a = append(a, "-c", "model_provider=openai", "-c", fmt.Sprintf("openai_base_url=%q", h.Mock.URL()))
	} else {
		a = append(a, "-c", "model_provider=mock",
			"-c", `model_providers.mock.name="mock"`,
			"-c", fmt.Sprintf("model_providers.mock.base_url=%q", h.Mock.URL()),
			"-c", `model_providers.mock.wire_api="responses"`,
			"-c", `model_providers.mock.env_key="OPENAI_API_KEY"`,
			"-c", "model_providers.mock.request_max_retries=0",
			"-c", "model_providers.mock.stream_max_retries=0")
	}
	a = append(a, "-c", "model=gpt-5")
	for _, c := range h.Config {
		a = append(a, "-c", c)
	}
	return a
}

// Exec starts a new session: codex exec PROMPT.
func (h *Home) Exec(ctx context.Context, prompt string) (*Run, error) {
	return h.exec(ctx, nil, prompt)
}

// Resume resumes a session by id: codex exec resume ID PROMPT.
func (h *Home) Resume(ctx context.Context, id, prompt string) (*Run, error) {
	return h.exec(ctx, []string{"resume", id}, prompt)
}

// Fork forks a session (0.153+): codex exec fork ID PROMPT.
func (h *Home) Fork(ctx context.Context, id, prompt string) (*Run, error) {
	return h.exec(ctx, []string{"fork", id}, prompt)
}

func (h *Home) exec(ctx context.Context, sub []string, prompt string) (*Run, error) {
	return h.Run(ctx, h.ExecArgs(sub, prompt)...)
}

// ExecArgs are the arguments of codex exec SUB... PROMPT against the mock
// (sub: nil for a new session, "resume" ID, "fork" ID), for Run or Start.
func (h *Home) ExecArgs(sub []string, prompt string) []string {
	args := []string{"exec", "--skip-git-repo-check", "--sandbox", "danger-full-access"}
	args = append(args, h.ProviderArgs()...)
	args = append(args, sub...)
	return append(args, prompt)
}

// Run runs codex with args (any subcommand: archive, unarchive,
// migrate-rollouts, ...) in the home and records what it did.
func (h *Home) Run(ctx context.Context, args ...string) (*Run, error) {
	s, err := h.Start(ctx, args...)
	if err != nil {
		return nil, err
	}
	return s.Wait()
}

// Started is a Codex invocation running in the background (Home.Start).
type Started struct {
	h      *Home
	args   []string
	cmd    *exec.Cmd
	cancel context.CancelFunc
	ctx    context.Context
	before map[string]fileState
	mark   int
	stdout bytes.Buffer
	stderr bytes.Buffer
	// stdin and stdoutPipe are set when the caller talks to the process
	// (startPiped).
	stdin      io.WriteCloser
	stdoutPipe io.ReadCloser
}

func (s *Started) command() *exec.Cmd {
	cmd := exec.CommandContext(s.ctx, s.h.Codex.Bin, s.args...)
	cmd.Dir = s.h.Work
	cmd.Env = s.h.env()
	cmd.WaitDelay = 5 * time.Second
	return cmd
}

// Start starts codex with args in the home without waiting for it; Wait
// records what it did, as Run does.
func (h *Home) Start(ctx context.Context, args ...string) (*Started, error) {
	s, err := h.prepare(ctx, args, h.Timeout)
	if err != nil {
		return nil, err
	}
	s.cmd.Stdout, s.cmd.Stderr = &s.stdout, &s.stderr
	if err := s.cmd.Start(); err != nil {
		s.cancel()
		return nil, fmt.Errorf("conformance: codex %s: %w", strings.Join(args, " "), err)
	}
	return s, nil
}

// prepare snapshots the home, marks the mock and makes the command of an
// invocation, not yet started.
func (h *Home) prepare(ctx context.Context, args []string, timeout time.Duration) (*Started, error) {
	before, err := snapshot(h.Dir)
	if err != nil {
		return nil, err
	}
	s := &Started{h: h, args: args, before: before}
	if h.Mock != nil {
		s.mark = h.Mock.Mark()
	}
	s.ctx, s.cancel = context.WithTimeout(ctx, timeout)
	s.cmd = s.command()
	return s, nil
}

// PID is the pid of the process started: the npm launcher, whose child is
// the native codex binary.
func (s *Started) PID() int { return s.cmd.Process.Pid }

// Wait waits for the invocation to end and records what it did.
func (s *Started) Wait() (*Run, error) {
	defer s.cancel()
	runErr := s.cmd.Wait()
	args := s.args
	r := &Run{Args: args, Stdout: s.stdout.String(), Stderr: s.stderr.String()}
	var ee *exec.ExitError
	switch {
	case runErr == nil:
	case errors.As(runErr, &ee):
		r.ExitCode = ee.ExitCode()
	default:
		return nil, fmt.Errorf("conformance: codex %s: %w", strings.Join(args, " "), runErr)
	}
	if s.ctx.Err() != nil {
		return r, fmt.Errorf("conformance: codex %s: %w\nstderr: %s", strings.Join(args, " "), s.ctx.Err(), tail(s.stderr.Bytes(), 2000))
	}
	if s.h.Mock != nil {
		r.Requests = s.h.Mock.Since(s.mark)
	}
	after, err := snapshot(s.h.Dir)
	if err != nil {
		return nil, err
	}
	r.Changes = diffSnapshots(s.h.Dir, s.before, after)
	return r, nil
}

type fileState struct {
	size int64
	sum  string
	head []byte // the content of small rollouts, to tell an append
}

func snapshot(dir string) (map[string]fileState, error) {
	out := map[string]fileState{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if d.IsDir() && p != dir && skipDir[d.Name()] {
			return filepath.SkipDir
		}
		if !d.Type().IsRegular() {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return nil // gone meanwhile
		}
		rel, _ := filepath.Rel(dir, p)
		s := sha256.Sum256(b)
		st := fileState{size: int64(len(b)), sum: hex.EncodeToString(s[:])}
		if isRolloutName(rel) {
			st.head = b
		}
		out[rel] = st
		return nil
	})
	return out, err
}

// skipDir names the directories of a home no case is about (bundled
// skills and plugins a version unpacks on start).
var skipDir = map[string]bool{"skills": true, "plugins": true, "vendor_imports": true, "cache": true, "log": true}

func isRolloutName(p string) bool {
	return strings.HasSuffix(p, ".jsonl") && strings.HasPrefix(filepath.Base(p), "rollout-")
}

func diffSnapshots(dir string, before, after map[string]fileState) []Change {
	var out []Change
	for p, a := range after {
		b, ok := before[p]
		switch {
		case !ok:
			c := Change{Path: p, What: "created", SizeAfter: a.size}
			if a.head != nil {
				c.Appended = a.head
			}
			out = append(out, c)
		case b.sum != a.sum:
			c := Change{Path: p, What: "rewritten", SizeBefore: b.size, SizeAfter: a.size}
			if a.head != nil && b.head != nil && bytes.HasPrefix(a.head, b.head) {
				c.What, c.Appended = "appended", a.head[len(b.head):]
			}
			out = append(out, c)
		}
	}
	for p, b := range before {
		if _, ok := after[p]; !ok {
			out = append(out, Change{Path: p, What: "removed", SizeBefore: b.size})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

// Place writes files (contents by path relative to the home) into it.
func (h *Home) Place(files map[string][]byte) error {
	for rel, b := range files {
		if !filepath.IsLocal(rel) {
			return fmt.Errorf("conformance: %q is not a path inside the home", rel)
		}
		dst := filepath.Join(h.Dir, rel)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(dst, b, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// Rollouts lists the rollout files of the home (sessions/ and
// archived_sessions/), relative to it, sorted.
func (h *Home) Rollouts() []string {
	var out []string
	for _, top := range []string{"sessions", "archived_sessions"} {
		filepath.WalkDir(filepath.Join(h.Dir, top), func(p string, d fs.DirEntry, err error) error {
			if err == nil && d.Type().IsRegular() && isRolloutName(p) {
				rel, _ := filepath.Rel(h.Dir, p)
				out = append(out, rel)
			}
			return nil
		})
	}
	sort.Strings(out)
	return out
}

func tail(b []byte, n int) string {
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}
