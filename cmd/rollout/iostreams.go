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
	NoColor  bool // NO_COLOR is set
}

func systemIO() *IO {
	_, noColor := os.LookupEnv("NO_COLOR")
	return &IO{
		In: os.Stdin, Out: os.Stdout, Err: os.Stderr,
		ErrIsTTY: term.IsTerminal(int(os.Stderr.Fd())),
		OutIsTTY: term.IsTerminal(int(os.Stdout.Fd())),
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
