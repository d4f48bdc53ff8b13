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
	"github.com/rollout-dev/rollout/internal/derive/result"
)

// JUnit XML as read by CI systems (Jenkins, GitLab, GitHub test reporters).
// The number of rules evaluated per file is not known to the printer, so a
// file's test cases are its findings: one <testcase> per finding, named
// "RULE line N" ("RULE" for a whole-file finding). A finding at or above
// --fail-on (Options.FailOn) is a <failure>; one below it is a passing case
// carrying the finding in <system-out>, so that the test report fails
// exactly when the run does. A file that could not be analysed has a case
// named "not analysed" with an <error> (type: the result.FileError code). A file
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
	XMLName   xml.Name      `xml:"testcase"` // encoded on its own
	Name      string        `xml:"name,attr"`
	ClassName string        `xml:"classname,attr"`
	Failure   *junitFailure `xml:"failure,omitempty"`
	Error     *junitFailure `xml:"error,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"` // the severity, or the result.FileError code
	Text    string `xml:",chardata"`
}

// junitCase is the test case of a finding, the nth of its rule in the
// file: named by the rule (then "RULE (2)", ...), never by its line, so a
// CI's test history follows a finding across edits that move it.
func junitCase(f *result.FileResult, fd *checks.Finding, nth int, failOn checks.Severity) junitTestCase {
	name := fd.Rule
	if nth > 1 {
		name += " (" + strconv.Itoa(nth) + ")"
	}
	// The same line as the text format, kept raw: encoding/xml escapes it.
	detail := location(f.Path, fd.Line) + ": " + severityName(fd.Severity) + ": " + fd.Message + " [" + fd.Rule + "]"
	tc := junitTestCase{Name: name, ClassName: f.Path}
	if fd.Severity >= failOn {
		tc.Failure = &junitFailure{Message: fd.Message, Type: severityName(fd.Severity), Text: detail}
	} else {
		tc.SystemOut = detail
	}
	return tc
}

// writeJUnitSuite writes a file's <testsuite> with enc, a case at a time,
// and returns it without its cases (its counts).
func writeJUnitSuite(enc *xml.Encoder, f *result.FileResult, failOn checks.Severity) (junitTestSuite, error) {
	suite := junitTestSuite{Name: f.Path}
	var cases []junitTestCase // the error case, or "clean"
	if f.Error != nil {
		cases = append(cases, junitTestCase{Name: "not analysed", ClassName: f.Path,
			Error: &junitFailure{Message: f.Error.Message, Type: f.Error.Code, Text: f.Path + ": " + notAnalysed(f.Error)}})
		suite.Errors++
	}
	for j := range f.Findings {
		if f.Findings[j].Severity >= failOn {
			suite.Failures++
		}
	}
	if len(cases) == 0 && len(f.Findings) == 0 {
		cases = append(cases, junitTestCase{Name: "clean", ClassName: f.Path})
	}
	suite.Tests = len(cases) + len(f.Findings)
	start := xml.StartElement{Name: xml.Name{Local: "testsuite"}, Attr: []xml.Attr{
		{Name: xml.Name{Local: "name"}, Value: suite.Name},
		{Name: xml.Name{Local: "tests"}, Value: strconv.Itoa(suite.Tests)},
		{Name: xml.Name{Local: "failures"}, Value: strconv.Itoa(suite.Failures)},
		{Name: xml.Name{Local: "errors"}, Value: strconv.Itoa(suite.Errors)},
		{Name: xml.Name{Local: "skipped"}, Value: strconv.Itoa(suite.Skipped)},
	}}
	if err := enc.EncodeToken(start); err != nil {
		return suite, err
	}
	for i := range cases {
		if err := enc.Encode(&cases[i]); err != nil {
			return suite, err
		}
	}
	nth := map[string]int{}
	for j := range f.Findings {
		nth[f.Findings[j].Rule]++
		tc := junitCase(f, &f.Findings[j], nth[f.Findings[j].Rule], failOn)
		if err := enc.Encode(&tc); err != nil {
			return suite, err
		}
	}
	if err := enc.EncodeToken(start.End()); err != nil {
		return suite, err
	}
	return suite, enc.Flush()
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
}

func newJUnitStream(w io.Writer, o Options) formatStream {
	return &junitStream{w: w, failOn: o.FailOn}
}

func (s *junitStream) file(f *result.FileResult, _ *result.Tally) error {
	s.suites.Write([]byte{'\n'}) // errors are kept for copyTo
	// A new encoder each time: one that has written starts the next
	// element with a newline of its own.
	enc := xml.NewEncoder(&s.suites)
	enc.Indent("  ", "  ") // a suite is one level down
	suite, err := writeJUnitSuite(enc, f, s.failOn)
	if err != nil {
		return fmt.Errorf("encode junit report: %w", err)
	}
	s.root.Tests += suite.Tests
	s.root.Failures += suite.Failures
	s.root.Errors += suite.Errors
	return nil
}

func (s *junitStream) finish(r *result.Report, _ *result.Tally) error {
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
