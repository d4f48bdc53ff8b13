package main

import (
	"fmt"
	"io"
	"sync"
)

// What rollout says on standard error goes through here, and only here is
// its shape spelled: every line starts with "rollout: ", then the kind of
// message ("error: ", "warning: ", "note: ", "hint: ", "internal error: ";
// none for a plain remark), then the text.

// msgLine is one line of the kind, with its newline.
func msgLine(kind, format string, args ...any) string {
	if kind != "" {
		kind += ": "
	}
	return "rollout: " + kind + fmt.Sprintf(format, args...) + "\n"
}

func say(w io.Writer, kind, format string, args ...any) {
	io.WriteString(w, msgLine(kind, format, args...))
}

func errorf(w io.Writer, format string, args ...any)   { say(w, "error", format, args...) }
func warningf(w io.Writer, format string, args ...any) { say(w, "warning", format, args...) }
func notef(w io.Writer, format string, args ...any)    { say(w, "note", format, args...) }
func hintf(w io.Writer, format string, args ...any)    { say(w, "hint", format, args...) }
func printf(w io.Writer, format string, args ...any)   { say(w, "", format, args...) }

// internalf says that rollout hit a bug, with the hint to report it.
func internalf(w io.Writer, format string, args ...any) {
	say(w, "internal error", format, args...)
}

// exitPriority orders the exit codes: when several apply, the highest
// priority wins (5, then 2, 4, 3, 1; see exitCodesHelp).
func exitPriority(code int) int {
	return map[int]int{exitOK: 0, exitFindings: 1, exitIncomplete: 2, exitUnsafe: 3, exitUsage: 4, exitInternal: 5}[code]
}

// worse is the exit code of higher priority.
func worse(a, b int) int {
	if exitPriority(b) > exitPriority(a) {
		return b
	}
	return a
}

// exitStatus is the exit code of a run over many inputs: each raises it,
// the code of highest priority wins. Safe for concurrent use.
type exitStatus struct {
	mu   sync.Mutex
	code int
}

func (s *exitStatus) raise(code int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.code = worse(s.code, code)
}

func (s *exitStatus) get() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.code
}

// err is the run's end: nil when clean, else an exit with no message (the
// report said it all).
func (s *exitStatus) err() error {
	if c := s.get(); c != exitOK {
		return silentExit(c)
	}
	return nil
}
