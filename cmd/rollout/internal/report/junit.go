package report

import (
	"bufio"
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
	XMLName  xml.Name        `xml:"testsuite"` // encoded on its own
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

func newJUnitSuite(f *FileResult, failOn checks.Severity) junitTestSuite {
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
	return suite
}

// junitStream writes the JUnit XML document, indented by two spaces,
// ending with a newline. The totals are attributes of the root element:
// each file's <testsuite> is encoded, as the document holds it, into a
// spool until Close. Nothing is written if a suite cannot be encoded.
type junitStream struct {
	w      io.Writer
	failOn checks.Severity
	root   junitTestSuites // totals; no suites
	suites spool
	buf    bytes.Buffer
}

func newJUnitStream(w io.Writer, o Options) formatStream {
	return &junitStream{w: w, failOn: o.FailOn}
}

func (s *junitStream) file(f *FileResult, _ *tally) error {
	suite := newJUnitSuite(f, s.failOn)
	s.root.Tests += suite.Tests
	s.root.Failures += suite.Failures
	s.root.Errors += suite.Errors
	s.buf.Reset()
	s.buf.WriteByte('\n')
	// A new encoder each time: one that has written starts the next
	// element with a newline of its own.
	enc := xml.NewEncoder(&s.buf)
	enc.Indent("  ", "  ") // a suite is one level down
	if err := enc.Encode(suite); err != nil {
		return fmt.Errorf("encode junit report: %w", err)
	}
	_, err := s.suites.Write(s.buf.Bytes())
	return err
}

func (s *junitStream) finish(r *Report, _ *tally) error {
	s.root.Name = strings.TrimSpace(r.Tool + " " + r.Command)
	var head bytes.Buffer
	head.WriteString(xml.Header)
	enc := xml.NewEncoder(&head)
	enc.Indent("", "  ")
	if err := enc.Encode(s.root); err != nil {
		return fmt.Errorf("encode junit report: %w", err)
	}
	if s.suites.empty() {
		head.WriteByte('\n')
		_, err := s.w.Write(head.Bytes())
		return wrapWrite("junit", err)
	}
	const end = "</testsuites>"
	bw := bufio.NewWriterSize(s.w, 64<<10)
	bw.Write(bytes.TrimSuffix(head.Bytes(), []byte(end)))
	if err := s.suites.copyTo(bw); err != nil {
		return wrapWrite("junit", err)
	}
	bw.WriteString("\n" + end + "\n")
	return wrapWrite("junit", bw.Flush())
}

func (s *junitStream) release() { s.suites.release() }
