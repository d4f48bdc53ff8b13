package report

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/rollout-dev/rollout/checks"
)

// JUnit XML as read by CI systems (Jenkins, GitLab, GitHub test reporters).
// The number of rules evaluated per file is not known to the printer, so a
// file's test cases are its findings: one <testcase> per finding, named
// "RULE line N" ("RULE" for a whole-file finding), with a <failure> for an
// error or a warning and a passing case carrying <system-out> for an info.
// A file without findings has one passing case named "clean". No time
// attributes: the output is deterministic.

type junitTestSuites struct {
	XMLName  xml.Name         `xml:"testsuites"`
	Name     string           `xml:"name,attr"`
	Tests    int              `xml:"tests,attr"`
	Failures int              `xml:"failures,attr"`
	Errors   int              `xml:"errors,attr"`
	Skipped  int              `xml:"skipped,attr"`
	Suites   []junitTestSuite `xml:"testsuite"`
}

type junitTestSuite struct {
	Name     string          `xml:"name,attr"`
	Tests    int             `xml:"tests,attr"`
	Failures int             `xml:"failures,attr"`
	Errors   int             `xml:"errors,attr"`
	Skipped  int             `xml:"skipped,attr"`
	Cases    []junitTestCase `xml:"testcase"`
}

type junitTestCase struct {
	Name      string        `xml:"name,attr"`
	ClassName string        `xml:"classname,attr"`
	Failure   *junitFailure `xml:"failure,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"` // "error" or "warning"
	Text    string `xml:",chardata"`
}

func newJUnit(r *Report) junitTestSuites {
	root := junitTestSuites{Name: strings.TrimSpace(r.Tool + " " + r.Command)}
	for i := range r.Files {
		f := &r.Files[i]
		suite := junitTestSuite{Name: f.Path}
		for j := range f.Findings {
			fd := &f.Findings[j]
			name := fd.Rule
			if fd.Line > 0 {
				name += " line " + strconv.Itoa(fd.Line)
			}
			// The same line as the text format, kept raw: encoding/xml
			// escapes it.
			detail := location(f.Path, fd.Line) + ": " + severityName(fd.Severity) + ": " + fd.Message + " [" + fd.Rule + "]"
			tc := junitTestCase{Name: name, ClassName: f.Path}
			if fd.Severity >= checks.Warning {
				tc.Failure = &junitFailure{Message: fd.Message, Type: severityName(fd.Severity), Text: detail}
				suite.Failures++
			} else {
				tc.SystemOut = detail
			}
			suite.Cases = append(suite.Cases, tc)
		}
		if len(suite.Cases) == 0 {
			suite.Cases = append(suite.Cases, junitTestCase{Name: "clean", ClassName: f.Path})
		}
		suite.Tests = len(suite.Cases)
		root.Tests += suite.Tests
		root.Failures += suite.Failures
		root.Suites = append(root.Suites, suite)
	}
	return root
}

// printJUnit writes the JUnit XML document, indented by two spaces, ending
// with a newline. Nothing is written if it cannot be encoded.
func printJUnit(w io.Writer, r *Report, _ Options) error {
	var buf bytes.Buffer
	buf.WriteString(xml.Header)
	enc := xml.NewEncoder(&buf)
	enc.Indent("", "  ")
	if err := enc.Encode(newJUnit(r)); err != nil {
		return fmt.Errorf("encode junit report: %w", err)
	}
	buf.WriteByte('\n')
	if _, err := w.Write(buf.Bytes()); err != nil {
		return fmt.Errorf("write junit report: %w", err)
	}
	return nil
}
