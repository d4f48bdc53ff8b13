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
// "RULE line N" ("RULE" for a whole-file finding). A finding at or above
// --fail-on (Options.FailOn) is a <failure>; one below it is a passing case
// carrying the finding in <system-out>, so that the test report fails
// exactly when the run does. A file that could not be analysed has a case
// named "not analysed" with an <error> (type: the FileError code). A file
// analysed without findings has one passing case named "clean". No time
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
	Error     *junitFailure `xml:"error,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"` // the severity, or the FileError code
	Text    string `xml:",chardata"`
}

func newJUnit(r *Report, failOn checks.Severity) junitTestSuites {
	root := junitTestSuites{Name: strings.TrimSpace(r.Tool + " " + r.Command)}
	for i := range r.Files {
		f := &r.Files[i]
		suite := junitTestSuite{Name: f.Path}
		if f.Error != nil {
			suite.Cases = append(suite.Cases, junitTestCase{Name: "not analysed", ClassName: f.Path,
				Error: &junitFailure{Message: f.Error.Message, Type: f.Error.Code, Text: f.Path + ": " + notAnalysed(f.Error)}})
			suite.Errors++
		}
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
			if fd.Severity >= failOn {
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
		root.Errors += suite.Errors
		root.Suites = append(root.Suites, suite)
	}
	return root
}

// printJUnit writes the JUnit XML document, indented by two spaces, ending
// with a newline. Nothing is written if it cannot be encoded.
func printJUnit(w io.Writer, r *Report, o Options) error {
	var buf bytes.Buffer
	buf.WriteString(xml.Header)
	enc := xml.NewEncoder(&buf)
	enc.Indent("", "  ")
	if err := enc.Encode(newJUnit(r, o.FailOn)); err != nil {
		return fmt.Errorf("encode junit report: %w", err)
	}
	buf.WriteByte('\n')
	if _, err := w.Write(buf.Bytes()); err != nil {
		return fmt.Errorf("write junit report: %w", err)
	}
	return nil
}
