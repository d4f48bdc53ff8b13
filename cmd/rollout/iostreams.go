package main

import (
	"bytes"
	"io"
	"os"

	"golang.org/x/term"
)

// IO owns the standard streams, terminal detection and colour.
type IO struct {
	In       io.Reader
	Out      io.Writer
	Err      io.Writer
	ErrIsTTY bool // progress goes to stderr only when it is a terminal
	OutIsTTY bool
	InIsTTY  bool // reading "-" from a terminal earns a hint
	NoColor  bool // NO_COLOR is set
}

func systemIO() *IO {
	_, noColor := os.LookupEnv("NO_COLOR")
	return &IO{
		In: os.Stdin, Out: os.Stdout, Err: os.Stderr,
		ErrIsTTY: term.IsTerminal(int(os.Stderr.Fd())),
		OutIsTTY: term.IsTerminal(int(os.Stdout.Fd())),
		InIsTTY:  term.IsTerminal(int(os.Stdin.Fd())),
		NoColor:  noColor,
	}
}

// testIO returns an IO over buffers, as no terminal.
func testIO(stdin string) (*IO, *bytes.Buffer, *bytes.Buffer) {
	var out, errb bytes.Buffer
	return &IO{In: bytes.NewBufferString(stdin), Out: &out, Err: &errb}, &out, &errb
}

// useColor resolves --color auto|always|never for a stream.
func (io *IO) useColor(mode string, tty bool) bool {
	switch mode {
	case "always":
		return true
	case "never":
		return false
	}
	return tty && !io.NoColor
}

// stdinHint says, when standard input is a terminal, that a command is now
// waiting for it: otherwise `rollout verify -` just seems to hang.
func (io *IO) stdinHint(what string) {
	if io.InIsTTY {
		hintf(io.Err, "reading %s from standard input (a terminal): paste it and end with Ctrl-D, or name a file", what)
	}
}
