package termsafe

import "testing"

func TestString(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain text, tab\tand ünïcödé 日本", "plain text, tab\tand ünïcödé 日本"},
		{"\x1b[31mred\x1b[0m", `\x1b[31mred\x1b[0m`},
		{"\x1b]0;pwned\x07title", `\x1b]0;pwned\x07title`},
		{"nul\x00 and del\x7f", `nul\x00 and del\x7f`},
		{"line\nbreak\rreturn", `line\nbreak\rreturn`},
		{"c1 csi \u009b2J", `c1 csi \u009b2J`},
		{"bidi \u202eevil\u202c", `bidi \u202eevil\u202c`},
		{"bad \xff\xfe utf-8", `bad \xff\xfe utf-8`},
		{`back\slash kept`, `back\slash kept`},
		{"", ""},
	}
	for _, tt := range tests {
		if got := String(tt.in); got != tt.want {
			t.Errorf("String(%q) = %q, want %q", tt.in, got, tt.want)
		}
		if got := string(Append([]byte("> "), []byte(tt.in))); got != "> "+tt.want {
			t.Errorf("Append(%q) = %q, want %q", tt.in, got, "> "+tt.want)
		}
		if got := isSafe(tt.in); got != (tt.in == tt.want) {
			t.Errorf("IsSafe(%q) = %v", tt.in, got)
		}
	}
}

// No output of String holds a byte a terminal acts on.
func FuzzString(f *testing.F) {
	f.Add("\x1b]0;x\x07")
	f.Add("\u009b\u202e\xff")
	f.Fuzz(func(t *testing.T, s string) {
		out := String(s)
		if app := string(Append(nil, []byte(s))); app != out {
			t.Fatalf("Append(%q) = %q, String gives %q", s, app, out)
		}
		for i := 0; i < len(out); i++ {
			if c := out[i]; (c < 0x20 && c != '\t') || c == 0x7f {
				t.Fatalf("String(%q) = %q keeps byte %#x", s, out, c)
			}
		}
		if !isSafe(out) {
			t.Fatalf("String(%q) = %q is not safe", s, out)
		}
	})
}

func TestJSON(t *testing.T) {
	tests := []struct{ in, want string }{
		{`{"a":"plain"}` + "\n", `{"a":"plain"}` + "\n"},
		{"{\"a\":\"del\x7f c1\u009b bidi\u202e\"}\n", `{"a":"del\u007f c1\u009b bidi\u202e"}` + "\n"},
		{"{\n  \"a\": 1\n}", "{\n  \"a\": 1\n}"},
	}
	for _, tt := range tests {
		if got := string(JSON([]byte(tt.in))); got != tt.want {
			t.Errorf("JSON(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestLines(t *testing.T) {
	if got, want := Lines("a\x1b[2J\nb\r\n\x07"), "a\\x1b[2J\nb\\r\n\\x07"; got != want {
		t.Errorf("Lines = %q, want %q", got, want)
	}
}
