package report

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/rollout-dev/rollout/internal/derive/result"
	"github.com/rollout-dev/rollout/internal/edit/outfile"
)

// An Output is one requested report of verify's document (verify, home,
// merge): a format and the file it goes to ("" for standard output).
type Output struct{ Format, File string }

// OutputOptions are what an Outputs set needs besides the report.
type OutputOptions struct {
	// Report are the presentation choices every output shares; Color and
	// Links are set per output.
	Report Options
	// Stdout is where an output without a file goes.
	Stdout io.Writer
	// ColorStdout and ColorFile say whether a format that draws colour
	// does so on standard output and in a file (--color, NO_COLOR, tty).
	ColorStdout, ColorFile bool
	// ViewPage is where `rollout view` writes the page of a rollout; the
	// html format links to it when it exists.
	ViewPage func(path string) string
	// StepSummary is the file GitHub Actions names in
	// $GITHUB_STEP_SUMMARY ("" outside it): a format with StepSummary adds
	// the report there in summaryFormat.
	StepSummary string
}

// summaryFormat is the format of the GitHub step summary, and its heading.
const (
	summaryFormat  = "markdown"
	summaryHeading = "### rollout verify\n\n"
)

// Outputs are the reports of a run being written, one Stream per Output,
// plus the step summary. A report that fails stops being written; the
// others go on.
type Outputs struct {
	outs []*outputStream
}

type outputStream struct {
	name   string
	stream *Stream
	file   *outfile.File // nil for standard output
	bw     *bufio.Writer
	err    error
	// wrap says what failed.
	wrap func(error) error
	// closeFile closes what the report is written to, when it was opened
	// here (the step summary).
	closeFile func() error
}

// A WriteError is a report that could not be written. ToFile is set when it
// was bound for a file (or the step summary), not standard output.
type WriteError struct {
	msg    string
	err    error
	ToFile bool
}

func (e *WriteError) Error() string { return e.msg + ": " + e.err.Error() }
func (e *WriteError) Unwrap() error { return e.err }

// OpenOutputs starts every requested report. Report files are written to a
// temporary file renamed over the target on Close (outfile), so nothing at
// the path changes before the run is done.
func OpenOutputs(outs []Output, run *result.Report, o OutputOptions) *Outputs {
	rs := &Outputs{}
	summary := false
	for _, out := range outs {
		name, file := out.Format, out.File
		f, _ := LookupFormat(DocVerify, name)
		summary = summary || f.StepSummary
		ro := o.Report
		r := &outputStream{name: name}
		rs.outs = append(rs.outs, r)
		if f.Dir {
			// Tables in a directory (parseOutputs refuses one without):
			// each part file is its own outfile, committed on Close.
			r.wrap = func(err error) error {
				return &WriteError{msg: fmt.Sprintf("writing %s report to %s", name, file), err: err, ToFile: true}
			}
			r.stream = openParquetOutput(file, run)
			continue
		}
		var w io.Writer
		if file == "" {
			ro.Color = f.Color && o.ColorStdout
			if f.Links {
				ro.Links = htmlLinks(".", o.ViewPage)
			}
			r.wrap = func(err error) error { return &WriteError{msg: fmt.Sprintf("writing %s report", name), err: err} }
			w = o.Stdout
		} else {
			ro.Color = f.Color && o.ColorFile
			if f.Links {
				ro.Links = htmlLinks(filepath.Dir(file), o.ViewPage)
			}
			r.wrap = func(err error) error {
				return &WriteError{msg: fmt.Sprintf("writing %s report to %s", name, file), err: err, ToFile: true}
			}
			if r.file, r.err = outfile.Create(file, outfile.Options{}); r.err != nil {
				continue
			}
			r.bw = bufio.NewWriterSize(r.file, 64<<10)
			w = r.bw
		}
		r.stream, r.err = NewStream(name, w, run, ro)
	}
	if summary && o.StepSummary != "" {
		rs.outs = append(rs.outs, openStepSummary(o.StepSummary, run, o.Report))
	}
	return rs
}

// openStepSummary starts the step summary's report.
func openStepSummary(path string, run *result.Report, ro Options) *outputStream {
	r := &outputStream{name: summaryFormat, wrap: func(err error) error {
		return &WriteError{msg: "writing the step summary to " + path, err: err, ToFile: true}
	}}
	w := &stepSummary{path: path}
	r.bw, r.closeFile = bufio.NewWriterSize(w, 64<<10), w.close
	r.bw.WriteString(summaryHeading)
	r.stream, r.err = NewStream(summaryFormat, r.bw, run, ro)
	return r
}

// Err is the first report that could not be started (its file could not be
// created, say): a command stops there, before the run, not after it.
func (rs *Outputs) Err() error {
	for _, r := range rs.outs {
		if r.err != nil {
			return r.wrap(r.err)
		}
	}
	return nil
}

// File hands one normalized file to every report still being written.
func (rs *Outputs) File(f *result.FileResult) {
	for _, r := range rs.outs {
		if r.err == nil {
			r.err = r.stream.File(f)
		}
	}
}

// Close completes every report and returns the first error, in the order
// of the outputs (the step summary last).
func (rs *Outputs) Close() error {
	var first error
	for _, r := range rs.outs {
		if r.err == nil {
			r.err = r.stream.Close()
		} else if r.stream != nil {
			r.stream.Discard()
		}
		if r.err == nil && r.bw != nil {
			r.err = r.bw.Flush()
		}
		if r.file != nil {
			if r.err == nil {
				r.err = r.file.Commit()
			} else {
				r.file.Abort()
			}
		}
		if r.closeFile != nil {
			if err := r.closeFile(); r.err == nil {
				r.err = err
			}
		}
		if r.err != nil && first == nil {
			first = r.wrap(r.err)
		}
	}
	return first
}

// Discard drops every report: report files are left as they were.
func (rs *Outputs) Discard() {
	for _, r := range rs.outs {
		if r.stream != nil {
			r.stream.Discard()
		}
		if r.file != nil {
			r.file.Abort()
		}
	}
}

// WriteOutputs writes a whole normalized report to every output (merge).
func WriteOutputs(outs []Output, rep *result.Report, o OutputOptions) error {
	rs := OpenOutputs(outs, rep, o)
	for i := range rep.Files {
		rs.File(&rep.Files[i])
	}
	return rs.Close()
}

// stepSummary appends to the job summary file GitHub Actions names in
// $GITHUB_STEP_SUMMARY (other steps write to it too: it is appended to,
// never replaced), opened on the first write.
type stepSummary struct {
	path string
	f    *os.File
}

func (s *stepSummary) Write(p []byte) (int, error) {
	if s.f == nil {
		f, err := os.OpenFile(s.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o666)
		if err != nil {
			return 0, err
		}
		s.f = f
	}
	return s.f.Write(p)
}

func (s *stepSummary) close() error {
	if s.f == nil {
		return nil
	}
	return s.f.Close()
}

// htmlLinks are the links of an HTML report written in dir: to each
// rollout, and to the page `rollout view` wrote beside it, if there is one.
func htmlLinks(dir string, viewPage func(string) string) Links {
	return Links{
		File: func(path string) string {
			if path == "-" {
				return ""
			}
			return RelativeLink(dir, path)
		},
		View: func(path string) string {
			if path == "-" || viewPage == nil {
				return ""
			}
			if _, err := os.Stat(viewPage(path)); err != nil {
				return ""
			}
			return RelativeLink(dir, viewPage(path))
		},
	}
}
