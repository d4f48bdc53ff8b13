package conformance

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/tidwall/gjson"
)

// interruptGrace is how long Interrupt lets the slow command run before
// the interrupt: time for Codex to start it and record its call.
const interruptGrace = 2 * time.Second

// Interrupt resumes session id (a new session when id is "") with prompt
// and interrupts its turn as a user's Ctrl-C does: SIGINT to codex exec
// (the npm launcher passes it on to the native binary) once the mock has
// answered with the prompt's "slowshell" call, or held a "hold" response,
// and interruptGrace has passed. It records what the run did; a Codex
// that has not exited 20 s after the signal gets a second one.
func (h *Home) Interrupt(ctx context.Context, id, prompt string) (*Run, error) {
	var sub []string
	if id != "" {
		sub = []string{"resume", id}
	}
	s, err := h.Start(ctx, h.ExecArgs(sub, prompt)...)
	if err != nil {
		return nil, err
	}
	exited := make(chan struct{})
	var run *Run
	var runErr error
	go func() { run, runErr = s.Wait(); close(exited) }()
	deadline := time.After(h.Timeout)
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
wait:
	for {
		select {
		case <-exited:
			if runErr != nil {
				return nil, runErr
			}
			return run, fmt.Errorf("conformance: codex exited (%d) before its turn could be interrupted: %s", run.ExitCode, tail([]byte(run.Stderr), 800))
		case <-deadline:
			s.cancel()
			<-exited
			return nil, fmt.Errorf("conformance: the mock answered no slowshell or hold within %s", h.Timeout)
		case <-h.Mock.Held():
			break wait
		case <-tick.C:
			for _, q := range h.Mock.Since(s.mark) {
				if q.Answer == "slowshell" {
					break wait
				}
			}
		}
	}
	time.Sleep(interruptGrace)
	for i := 0; ; i++ {
		if err := s.cmd.Process.Signal(syscall.SIGINT); err != nil {
			break // it has exited
		}
		select {
		case <-exited:
			return run, runErr
		case <-time.After(20 * time.Second):
			if i == 1 {
				s.cancel()
				<-exited
				return nil, fmt.Errorf("conformance: codex did not exit on SIGINT")
			}
		}
	}
	<-exited
	return run, runErr
}

// lastTurnID is the turn id of the last task_started event (turn_started
// in some versions) of session id's rollout in the home.
func lastTurnID(h *Home, id string) (string, error) {
	for _, rel := range h.Rollouts() {
		if !strings.Contains(filepath.Base(rel), id) {
			continue
		}
		f, err := os.Open(filepath.Join(h.Dir, rel))
		if err != nil {
			return "", err
		}
		defer f.Close()
		turn := ""
		r := bufio.NewReaderSize(f, 1<<20)
		for {
			line, err := r.ReadSlice('\n')
			if err == bufio.ErrBufferFull {
				// A record longer than the buffer (a big output) is not a
				// turn start: skip to its end.
				for err == bufio.ErrBufferFull {
					_, err = r.ReadSlice('\n')
				}
				continue
			}
			if t := gjson.GetBytes(line, "payload.type").String(); gjson.GetBytes(line, "type").String() == "event_msg" &&
				(t == "task_started" || t == "turn_started") {
				if v := gjson.GetBytes(line, "payload.turn_id").String(); v != "" {
					turn = v
				}
			}
			if err != nil {
				break
			}
		}
		if turn == "" {
			return "", fmt.Errorf("conformance: %s names no turn id", rel)
		}
		return turn, nil
	}
	return "", fmt.Errorf("conformance: no rollout of session %s in %s", id, h.Dir)
}
