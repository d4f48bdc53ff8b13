// Package termsafe escapes text from a rollout before it reaches a terminal
// or a text report: a rollout is untrusted input, and raw control bytes in
// it (ESC sequences, OSC terminal-title writes, BEL, NUL, C1 controls,
// bidirectional overrides) would act on the reader's terminal.
//
// It sits beside the printers: every printer of human text (findings,
// repair plans and diffs, state diffs) passes the strings it took from a
// rollout through String.
package termsafe

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// String returns s with every byte or rune a terminal would act on
// escaped: line feed and carriage return as \n and \r, other C0 controls
// and DEL as \x1b, C1 controls and the bidirectional
// and other invisible format characters as \u009b or \u202e, bytes that
// are not UTF-8 as \xff. Tab and printable text, including every
// non-ASCII letter, are kept. A backslash is kept as it is: the escaping
// makes text harmless, not reversible.
func String(s string) string {
	i := 0
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		if unsafe(r, size) {
			break
		}
		i += size
	}
	if i == len(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	b.WriteString(s[:i])
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case unsafe(r, size) && r < 0x80:
			fmt.Fprintf(&b, `\x%02x`, r)
		case unsafe(r, size):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// Lines is String for a text of several lines: each line is escaped, the
// line feeds between them are kept.
func Lines(s string) string {
	var b strings.Builder
	for line := range strings.Lines(s) {
		body, nl := strings.CutSuffix(line, "\n")
		b.WriteString(String(body))
		if nl {
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// Bytes is String for a byte slice.
func Bytes(b []byte) string { return String(string(b)) }

// IsSafe reports whether s needs no escaping.
func IsSafe(s string) bool { return String(s) == s }

func unsafe(r rune, size int) bool {
	switch {
	case r == utf8.RuneError && size == 1:
		return true
	case r == '\t':
		return false
	case r < 0x20, r == 0x7f: // C0 controls, DEL
		return true
	case r >= 0x80 && r <= 0x9f: // C1 controls (CSI, OSC, ...)
		return true
	case r == 0x200e, r == 0x200f, r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069: // bidi marks and overrides
		return true
	case r == 0x2028, r == 0x2029, r == 0xfeff: // line/paragraph separators, BOM
		return true
	}
	return false
}

// JSON escapes, in encoded JSON, what encoding/json leaves raw and a
// terminal acts on: DEL, C1 controls and the bidirectional controls become
// \u escapes. Those characters only occur inside JSON strings, so the
// result is the same JSON value.
func JSON(b []byte) []byte {
	if IsSafe(string(b)) {
		return b
	}
	out := make([]byte, 0, len(b)+16)
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		if r != '\n' && r != '\r' && r != '\t' && unsafe(r, size) && !(r == utf8.RuneError && size == 1) {
			out = fmt.Appendf(out, `\u%04x`, r)
		} else {
			out = append(out, b[i:i+size]...)
		}
		i += size
	}
	return out
}
