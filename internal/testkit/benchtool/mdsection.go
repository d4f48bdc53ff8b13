package main

import (
	"errors"
	"fmt"
	"os"
	"strings"
)

// writeSection replaces the generated section name of the Markdown file at
// path, between the lines "<!-- benchtool:NAME begin -->" and
// "<!-- benchtool:NAME end -->", and leaves everything else as it is (the
// hand-written text around the tables). A file without the markers gets
// the section appended; a missing file is created.
func writeSection(path, name, body string) error {
	old, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	begin := fmt.Sprintf("<!-- benchtool:%s begin -->\n", name)
	end := fmt.Sprintf("<!-- benchtool:%s end -->\n", name)
	block := begin + strings.TrimRight(body, "\n") + "\n" + end
	s := string(old)
	i := strings.Index(s, begin)
	j := strings.Index(s, end)
	switch {
	case i >= 0 && j > i:
		s = s[:i] + block + s[j+len(end):]
	case i >= 0 || j >= 0:
		return fmt.Errorf("%s: the markers of section %q are out of order or one is missing", path, name)
	default:
		if s != "" && !strings.HasSuffix(s, "\n\n") {
			s = strings.TrimRight(s, "\n") + "\n\n"
		}
		s += block
	}
	return replaceFile(path, func(tmp string) error { return os.WriteFile(tmp, []byte(s), 0o644) })
}
