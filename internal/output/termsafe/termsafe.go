// Package termsafe escapes text from a rollout before it reaches a terminal
// or a text report: a rollout is untrusted input, and raw control bytes in
// it (ESC sequences, OSC terminal-title writes, BEL, NUL, C1 controls,
// bidirectional overrides) would act on the reader's terminal.
//
// It belongs to the output stage (internal/output), beside the printers:
// every printer of human text (findings, repair plans and diffs, state
// diffs) passes the strings it took from a rollout through String.
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
	i := safePrefix(s, utf8.DecodeRuneInString)
	if i == len(s) {
		return s
	}
	dst := append(make([]byte, 0, len(s)+16), s[:i]...)
	return string(appendEscaped(dst, s[i:], utf8.DecodeRuneInString))
}

// Append appends String(string(b)) to dst without making the string: a
// printer escapes into the buffer it writes from.
func Append(dst, b []byte) []byte {
	i := safePrefix(b, utf8.DecodeRune)
	return appendEscaped(append(dst, b[:i]...), b[i:], utf8.DecodeRune)
}

// safePrefix is the length of the longest prefix of s that needs no
// escaping.
func safePrefix[T string | []byte](s T, decode func(T) (rune, int)) int {
	i := 0
	for i < len(s) {
		r, size := rune(s[i]), 1
		if r >= utf8.RuneSelf {
			r, size = decode(s[i:])
		}
		if unsafe(r, size) {
			break
		}
		i += size
	}
	return i
}

// appendEscaped appends s to dst with each unsafe rune escaped.
func appendEscaped[T string | []byte](dst []byte, s T, decode func(T) (rune, int)) []byte {
	for i := 0; i < len(s); {
		r, size := decode(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = fmt.Appendf(dst, `\x%02x`, s[i])
		case r == '\n':
			dst = append(dst, `\n`...)
		case r == '\r':
			dst = append(dst, `\r`...)
		case unsafe(r, size) && r < 0x80:
			dst = fmt.Appendf(dst, `\x%02x`, r)
		case unsafe(r, size):
			dst = fmt.Appendf(dst, `\u%04x`, r)
		default:
			dst = append(dst, s[i:i+size]...)
		}
		i += size
	}
	return dst
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

// isSafe reports whether s needs no escaping.
func isSafe(s string) bool { return String(s) == s }

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
	if isSafe(string(b)) {
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
