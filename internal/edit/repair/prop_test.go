package repair_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/rollout-dev/rollout/checks"
	"github.com/rollout-dev/rollout/internal/edit/repair"
	"github.com/rollout-dev/rollout/internal/testkit/fixturegen/gen"
	"github.com/rollout-dev/rollout/rollout"
)

// Property tests: generated rollouts with injected faults, repaired with
// the default fixes. Each case asserts that
//   - untouched lines are written back byte for byte;
//   - output + quarantine account for every input byte (the input is
//     rebuilt from them, undoing only the changes the report lists);
//   - the output verifies clean of the fixed rules;
//   - a second repair is a no-op;
//   - two runs give identical bytes.

type fault struct {
	name  string
	apply func(r *rand.Rand, lines []string, paginated bool) []string
}

var (
	payloadIDRE   = regexp.MustCompile(`"payload":\{"type":"([a-z_]+)","id":"([^"]*)",`)
	ordinalRE     = regexp.MustCompile(`"ordinal":[0-9]+,`)
	callIDRE      = regexp.MustCompile(`"call_id":"([^"]*)"`)
	payloadTypeRE = regexp.MustCompile(`"payload":\{"type":"([a-z_]+)",`)
)

// pick returns the indexes of lines matching re, excluding line 0.
func pick(lines []string, re *regexp.Regexp) []int {
	var out []int
	for i, l := range lines[1:] {
		if re.MatchString(l) {
			out = append(out, i+1)
		}
	}
	return out
}

var faults = []fault{
	{"delete-ids", func(r *rand.Rand, lines []string, _ bool) []string {
		c := pick(lines, payloadIDRE)
		for n := 0; n < 3 && len(c) > 0; n++ {
			i := c[r.IntN(len(c))]
			lines[i] = payloadIDRE.ReplaceAllString(lines[i], `"payload":{"type":"$1",`)
		}
		return lines
	}},
	{"duplicate-id", func(r *rand.Rand, lines []string, _ bool) []string {
		c := pick(lines, payloadIDRE)
		if len(c) < 2 {
			return lines
		}
		i, j := c[r.IntN(len(c)/2)], c[len(c)/2+r.IntN(len(c)-len(c)/2)]
		mi, mj := payloadIDRE.FindStringSubmatch(lines[i]), payloadIDRE.FindStringSubmatch(lines[j])
		if i < j && mi != nil && mj != nil && mi[1] == mj[1] {
			lines[j] = strings.Replace(lines[j], `"id":"`+mj[2]+`"`, `"id":"`+mi[2]+`"`, 1)
		}
		return lines
	}},
	{"prefix-mismatch", func(r *rand.Rand, lines []string, _ bool) []string {
		c := pick(lines, regexp.MustCompile(`"payload":\{"type":"message","id":"msg_`))
		if len(c) > 0 {
			i := c[r.IntN(len(c))]
			lines[i] = strings.Replace(lines[i], `"id":"msg_`, `"id":"rs_`, 1)
		}
		return lines
	}},
	{"break-ordinals", func(r *rand.Rand, lines []string, paginated bool) []string {
		if !paginated {
			return lines
		}
		for n := 0; n < 3; n++ {
			i := 1 + r.IntN(len(lines)-1)
			switch r.IntN(3) {
			case 0:
				lines[i] = ordinalRE.ReplaceAllString(lines[i], "")
			case 1:
				lines[i] = ordinalRE.ReplaceAllString(lines[i], fmt.Sprintf(`"ordinal":%d,`, r.IntN(len(lines))))
			default:
				lines[len(lines)-1] = ordinalRE.ReplaceAllString(lines[len(lines)-1], "")
			}
		}
		return lines
	}},
	{"invalid-line", func(r *rand.Rand, lines []string, _ bool) []string {
		i := 1 + r.IntN(len(lines)-1)
		bad := []string{"WARN codex_core::rollout: flush took 1200ms", `{"timestamp":"2026-03-10T09:35:30.130Z","type":"event_ms`, "\x00\xff garbage"}[r.IntN(3)]
		return append(lines[:i], append([]string{bad}, lines[i:]...)...)
	}},
	{"concatenate", func(r *rand.Rand, lines []string, _ bool) []string {
		i := 1 + r.IntN(len(lines)-2)
		lines[i] += lines[i+1]
		return append(lines[:i+1], lines[i+2:]...)
	}},
	{"drop-output", func(r *rand.Rand, lines []string, _ bool) []string { // leaves an orphan call
		c := pick(lines, regexp.MustCompile(`"payload":\{"type":"(function_call_output|custom_tool_call_output)"`))
		if len(c) == 0 {
			return lines
		}
		i := c[r.IntN(len(c))]
		return append(lines[:i], lines[i+1:]...)
	}},
	{"drop-call", func(r *rand.Rand, lines []string, _ bool) []string { // leaves an orphan output
		c := pick(lines, regexp.MustCompile(`"payload":\{"type":"(function_call|custom_tool_call)",`))
		if len(c) == 0 {
			return lines
		}
		i := c[r.IntN(len(c))]
		return append(lines[:i], lines[i+1:]...)
	}},
	// The faults issue 11 found a second repair still changed.
	{"duplicate-call-id", func(r *rand.Rand, lines []string, _ bool) []string {
		c := pick(lines, callIDRE)
		if len(c) < 2 {
			return lines
		}
		i, j := c[r.IntN(len(c))], c[r.IntN(len(c))]
		if m := callIDRE.FindStringSubmatch(lines[i]); m != nil && i != j {
			lines[j] = callIDRE.ReplaceAllString(lines[j], `"call_id":"`+m[1]+`"`)
		}
		return lines
	}},
	{"duplicate-type-key", func(r *rand.Rand, lines []string, _ bool) []string {
		c := pick(lines, payloadTypeRE)
		if len(c) > 0 {
			i := c[r.IntN(len(c))]
			lines[i] = payloadTypeRE.ReplaceAllString(lines[i], `"payload":{"type":"$1","type":"$1",`)
		}
		return lines
	}},
	{"cr-cr-lf", func(r *rand.Rand, lines []string, _ bool) []string {
		i := 1 + r.IntN(len(lines)-2)
		lines[i] += "\r\r"
		return lines
	}},
	{"fix-inside-concatenated", func(r *rand.Rand, lines []string, _ bool) []string {
		c := pick(lines, payloadIDRE)
		if len(c) == 0 || c[len(c)-1] >= len(lines)-1 {
			return lines
		}
		i := c[r.IntN(len(c))]
		if i+1 >= len(lines) {
			return lines
		}
		lines[i] = payloadIDRE.ReplaceAllString(lines[i], `"payload":{"type":"$1",`)
		lines[i+1] = payloadIDRE.ReplaceAllString(lines[i+1], `"payload":{"type":"$1",`)
		lines[i] += lines[i+1]
		return append(lines[:i+1], lines[i+2:]...)
	}},
	{"orphan-output-without-id", func(r *rand.Rand, lines []string, _ bool) []string {
		c := pick(lines, regexp.MustCompile(`"payload":\{"type":"function_call",`))
		if len(c) == 0 {
			return lines
		}
		i := c[r.IntN(len(c))]
		m := callIDRE.FindStringSubmatch(lines[i])
		if m == nil {
			return lines
		}
		for j := i + 1; j < len(lines); j++ {
			if strings.Contains(lines[j], `"call_id":"`+m[1]+`"`) {
				lines[j] = payloadIDRE.ReplaceAllString(lines[j], `"payload":{"type":"$1",`)
			}
		}
		return append(lines[:i], lines[i+1:]...)
	}},
	// Issue 25: a crash mid-record, then an append on the same line; an
	// item appended twice.
	{"glued-torn", func(r *rand.Rand, lines []string, _ bool) []string {
		i, j := 2+r.IntN(len(lines)-2), 1+r.IntN(len(lines)-1)
		if len(lines[j]) < 2 {
			return lines
		}
		lines[i] = lines[j][:1+r.IntN(len(lines[j])-1)] + lines[i]
		return lines
	}},
	{"duplicate-line", func(r *rand.Rand, lines []string, _ bool) []string {
		c := pick(lines, regexp.MustCompile(`"type":"response_item"`))
		if len(c) == 0 {
			return lines
		}
		i := c[r.IntN(len(c))]
		return append(lines[:i+1], append([]string{lines[i]}, lines[i+1:]...)...)
	}},
	{"move-meta", func(r *rand.Rand, lines []string, _ bool) []string {
		k := 1 + r.IntN(min(5, len(lines)-1))
		if !strings.HasPrefix(lines[1], `{"`) {
			return lines // a garbage first line is no rollout (exit 2)
		}
		meta := lines[0]
		copy(lines, lines[1:k+1])
		lines[k] = meta
		return lines
	}},
}

// build turns lines into a file: CRLF on some lines, the last one torn.
func build(r *rand.Rand, lines []string, crlf, tear bool) []byte {
	var b bytes.Buffer
	for i, l := range lines {
		if i == len(lines)-1 && tear {
			cut := 1 + r.IntN(len(l)-1)
			b.WriteString(l[:cut])
			break
		}
		b.WriteString(l)
		if crlf && r.IntN(4) == 0 {
			b.WriteByte('\r')
		}
		b.WriteByte('\n')
	}
	return b.Bytes()
}

type reportChange struct {
	Rule       string          `json:"rule"`
	Line       int             `json:"line"`
	Object     int             `json:"object"`
	Action     string          `json:"action"`
	Path       string          `json:"path"`
	Before     json.RawMessage `json:"before"`
	After      json.RawMessage `json:"after"`
	OutputLine int             `json:"output_line"`
}

type repairReport struct {
	Changes  []reportChange `json:"changes"`
	NotFixed []struct {
		Rule   string `json:"rule"`
		Line   int    `json:"line"`
		Reason string `json:"reason"`
	} `json:"not_fixed"`
}

type qEntry struct {
	Line       int    `json:"line"`
	ByteOffset int64  `json:"byte_offset"`
	Reason     string `json:"reason"`
	Raw        string `json:"raw"`
	RawBase64  string `json:"raw_base64"`
	EOL        string `json:"eol"`
}

// readQuarantine reads the entries of a quarantine file (none: no file).
func readQuarantine(t *testing.T, path string) []qEntry {
	t.Helper()
	q, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	var out []qEntry
	for _, l := range strings.Split(strings.TrimSuffix(string(q), "\n"), "\n") {
		var e qEntry
		if err := json.Unmarshal([]byte(l), &e); err != nil {
			t.Fatalf("quarantine line %q: %v", l, err)
		}
		out = append(out, e)
	}
	return out
}

func (q qEntry) bytes() []byte {
	if q.RawBase64 != "" {
		b, _ := base64.StdEncoding.DecodeString(q.RawBase64)
		return b
	}
	return []byte(q.Raw)
}

func TestRepairProperties(t *testing.T) {
	seeds := 24
	if testing.Short() {
		seeds = 6
	}
	for seed := 1; seed <= seeds; seed++ {
		paginated := seed%2 == 0
		t.Run(fmt.Sprintf("seed%d", seed), func(t *testing.T) {
			t.Parallel()
			var buf bytes.Buffer
			if _, err := gen.Write(&buf, gen.Options{Seed: uint64(seed), TargetBytes: 150_000, Paginated: paginated}); err != nil {
				t.Fatal(err)
			}
			r := rand.New(rand.NewPCG(uint64(seed), 99))
			lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
			var applied []string
			for _, f := range faults {
				if r.IntN(2) == 0 {
					lines = f.apply(r, lines, paginated)
					applied = append(applied, f.name)
				}
			}
			crlf, tear := r.IntN(3) == 0, r.IntN(2) == 0
			input := build(r, lines, crlf, tear)
			var fix []string // the default fixes; every third seed all of them
			if seed%3 == 0 {
				fix = []string{"all"}
			}
			t.Logf("faults %v crlf=%v torn=%v fix=%v", applied, crlf, tear, fix)
			checkRepairProperties(t, input, fix)
		})
	}
}

func checkRepairProperties(t *testing.T, input []byte, fix []string) {
	t.Helper()
	dir := t.TempDir()
	in := filepath.Join(dir, "in.jsonl")
	os.WriteFile(in, input, 0o644)
	out, rep := filepath.Join(dir, "out.jsonl"), filepath.Join(dir, "report.json")
	fixes, err := checks.SelectFixes(fix)
	if err != nil {
		t.Fatal(err)
	}
	force := false
	repairTo := func(output, input string) (*repair.Outcome, string, error) {
		return repairWrite(repair.Options{Path: input, Output: output, Write: true, Fix: fixes, Force: force})
	}
	o, stdout, err := repairTo(out, in)
	if err != nil && strings.Contains(err.Error(), "first line is not a JSON object") {
		// A fault moved a broken line first: Force repairs such a file.
		force = true
		o, stdout, err = repairTo(out, in)
	}
	if err != nil || !cleanExit(o) {
		t.Fatalf("repair: %v\n%s", err, stdout)
	}
	writeReport(t, rep, o)
	output := readFile(t, out)
	var report repairReport
	if err := json.Unmarshal(readFile(t, rep), &report); err != nil {
		t.Fatal(err)
	}
	quarantine := readQuarantine(t, out+".quarantine.jsonl")

	// Untouched lines identical, and every byte accounted for.
	rebuilt := rebuildInput(t, input, output, quarantine, report.Changes)
	if !bytes.Equal(rebuilt, input) {
		i := 0
		for i < len(rebuilt) && i < len(input) && rebuilt[i] == input[i] {
			i++
		}
		t.Fatalf("output + quarantine do not rebuild the input: first difference at byte %d:\n in  %.120q\n got %.120q\n%s",
			i, input[i:], rebuilt[i:], stdout)
	}

	// The output verifies clean of the fixed rules.
	sel, _ := checks.SelectFixes(fix)
	res, err := checks.Run(out, nil, checks.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range res.Findings {
		if sel[f.Rule] {
			t.Errorf("output still has %s on line %d: %s\n%s", f.Rule, f.Line, f.Message, stdout)
		}
	}

	// A second repair is a no-op.
	out2 := filepath.Join(dir, "out2.jsonl")
	o2, stdout2, err := repairTo(out2, out)
	if err != nil || !o2.NothingToFix() || !bytes.Equal(readFile(t, out2), output) {
		t.Errorf("second repair is not a no-op:\n%s", stdout2)
	}

	// Two runs are identical.
	out3 := filepath.Join(dir, "out3.jsonl")
	repairTo(out3, in)
	if !bytes.Equal(readFile(t, out3), output) {
		t.Errorf("a second run on the same input wrote different bytes")
	}
	q1, _ := os.ReadFile(out + ".quarantine.jsonl")
	q3, _ := os.ReadFile(out3 + ".quarantine.jsonl")
	if !bytes.Equal(q1, q3) {
		t.Errorf("a second run on the same input quarantined different bytes")
	}
}

type physLine struct {
	raw []byte
	eol string
}

func physLines(b []byte) []physLine {
	var out []physLine
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			out = append(out, physLine{raw: b})
			break
		}
		raw, eol := rollout.SplitEOL(b[:i+1])
		out = append(out, physLine{raw: raw, eol: eol})
		b = b[i+1:]
	}
	return out
}

// undoSet reverses one reported member change in an output line: the
// member found by gjson at path must hold the reported new value.
func undoSet(t *testing.T, raw []byte, path string, before, after json.RawMessage) []byte {
	t.Helper()
	gpath := strings.NewReplacer("[", ".", "]", "").Replace(path)
	v := gjson.GetBytes(raw, gpath)
	if !v.Exists() || v.Raw != string(after) {
		t.Fatalf("output line has %s = %s, the report says %s:\n%s", path, v.Raw, after, raw)
	}
	start, end := v.Index, v.Index+len(v.Raw)
	if len(before) > 0 {
		return append(append(append([]byte{}, raw[:start]...), before...), raw[end:]...)
	}
	key := path[strings.LastIndexAny(path, ".]")+1:]
	ks := start - len(`"`+key+`":`)
	if ks < 0 || string(raw[ks:start]) != `"`+key+`":` {
		t.Fatalf("inserted member %s is not written \"%s\":value", path, key)
	}
	switch {
	case end < len(raw) && raw[end] == ',':
		end++
	case raw[ks-1] == ',':
		ks--
	}
	return append(append([]byte{}, raw[:ks]...), raw[end:]...)
}

// rebuildInput rebuilds the input from the output, the quarantine and the
// reported changes. Output lines are assigned to input lines in order (the
// moved line first, inserted lines after their line); an input line with
// no change must come back byte for byte.
func rebuildInput(t *testing.T, input, output []byte, quarantine []qEntry, changes []reportChange) []byte {
	t.Helper()
	in := physLines(input)
	r := &rebuilder{t: t, out: physLines(output), qs: map[int][]qEntry{}}
	info := r.undoChanges(changes)
	for _, q := range quarantine {
		r.qs[q.Line] = append(r.qs[q.Line], q)
	}
	for _, c := range changes {
		if c.Action == "move" {
			r.moved, r.cur = r.out[0], 1
		}
	}
	for n := 1; n <= len(in); n++ {
		r.line(n, in[n-1], info(n))
	}
	if r.cur != len(r.out) {
		t.Fatalf("%d output lines are not accounted for", len(r.out)-r.cur)
	}
	return r.b.Bytes()
}

// lineInfo is what the reported changes did to one input line.
type lineInfo struct {
	split   int // objects, when split
	moved   int // object moved to the front, -1 none
	dropped map[int]bool
	inserts []json.RawMessage
	changed bool
	cut     bool // the torn bytes before its records went to the quarantine
}

// rebuilder walks the output lines while the input is rebuilt into b.
type rebuilder struct {
	t     *testing.T
	out   []physLine
	cur   int      // output lines consumed
	moved physLine // the line moved to the front
	qs    map[int][]qEntry
	b     bytes.Buffer
}

// undoChanges undoes the set and lf changes in the output lines and
// returns, per input line, what the changes did to it.
func (r *rebuilder) undoChanges(changes []reportChange) func(int) *lineInfo {
	t, out := r.t, r.out
	info := map[int]*lineInfo{}
	get := func(l int) *lineInfo {
		if info[l] == nil {
			info[l] = &lineInfo{moved: -1, dropped: map[int]bool{}}
		}
		return info[l]
	}
	for _, c := range changes {
		li := get(c.Line)
		li.changed = true
		switch c.Action {
		case "set":
			out[c.OutputLine-1].raw = undoSet(t, out[c.OutputLine-1].raw, c.Path, c.Before, c.After)
		case "lf":
			out[c.OutputLine-1].eol = "\r\n"
			var before string
			if json.Unmarshal(c.Before, &before) == nil && before != "" {
				out[c.OutputLine-1].eol = before // "\r\r\n" too
			}
		case "split":
			var s string
			json.Unmarshal(c.After, &s)
			li.split, _ = strconv.Atoi(strings.Fields(s)[0])
		case "move":
			li.moved = c.Object
		case "quarantine":
			li.dropped[c.Object] = true
		case "cut":
			li.cut = true
		case "insert":
			li.inserts = append(li.inserts, c.After)
		default:
			t.Fatalf("unexpected change %+v", c)
		}
	}
	return get
}

func (r *rebuilder) next() physLine {
	if r.cur >= len(r.out) {
		r.t.Fatalf("the output has fewer lines than the input accounts for")
	}
	r.cur++
	return r.out[r.cur-1]
}

// line rebuilds input line n, then checks the lines inserted after it.
func (r *rebuilder) line(n int, line physLine, li *lineInfo) {
	t, qs := r.t, r.qs
	// Whole line in quarantine.
	if len(qs[n]) == 1 && string(qs[n][0].bytes()) == string(line.raw) && qs[n][0].EOL == line.eol && li.split == 0 {
		r.b.Write(line.raw)
		r.b.WriteString(line.eol)
		return
	}
	wantEOL := func(got string) {
		if got != line.eol && !(line.eol == "" && got == "\n") {
			t.Fatalf("input line %d ends in %q, its output in %q", n, line.eol, got)
		}
	}
	var raw []byte // the torn bytes, when they were cut off
	di := 0
	if li.cut {
		raw = append(raw, qs[n][0].bytes()...)
		di = 1
	}
	switch {
	case li.cut && li.split == 0:
		o := r.next()
		wantEOL(o.eol)
		raw = append(raw, o.raw...)
	case li.split > 0:
		for k := 0; k < li.split; k++ {
			switch {
			case k == li.moved:
				raw = append(raw, r.moved.raw...)
			case li.dropped[k]:
				raw = append(raw, qs[n][di].bytes()...)
				di++
			default:
				o := r.next()
				raw = append(raw, o.raw...)
				if k == li.split-1 {
					wantEOL(o.eol)
				}
			}
		}
	case li.moved >= 0:
		wantEOL(r.moved.eol)
		raw = r.moved.raw
	default:
		o := r.next()
		if !li.changed && !bytes.Equal(o.raw, line.raw) {
			t.Fatalf("untouched input line %d differs in the output (line %d):\n in  %.200q\n out %.200q", n, r.cur, line.raw, o.raw)
		}
		wantEOL(o.eol)
		raw = o.raw
	}
	r.b.Write(raw)
	r.b.WriteString(line.eol)
	for _, ins := range li.inserts {
		var want string
		json.Unmarshal(ins, &want)
		// A long inserted line (an output moved after its call) is
		// reported clipped to repair.KeepBytes.
		if o := r.next(); string(o.raw) != want && !(len(want) == repair.KeepBytes && strings.HasPrefix(string(o.raw), want)) {
			t.Fatalf("inserted line after input line %d is not the one reported", n)
		}
	}
}

// TestRepairIdempotentOnHostileFaults applies each fault issue 11 found a
// second repair still changed, alone, with every fix: the repair must
// account for every byte and a second repair must change nothing.
func TestRepairIdempotentOnHostileFaults(t *testing.T) {
	names := []string{"duplicate-call-id", "duplicate-type-key", "cr-cr-lf", "fix-inside-concatenated", "orphan-output-without-id"}
	for _, name := range names {
		var f fault
		for _, c := range faults {
			if c.name == name {
				f = c
			}
		}
		for seed := 1; seed <= 6; seed++ {
			t.Run(fmt.Sprintf("%s/seed%d", name, seed), func(t *testing.T) {
				t.Parallel()
				var buf bytes.Buffer
				if _, err := gen.Write(&buf, gen.Options{Seed: uint64(seed), TargetBytes: 60_000, Paginated: seed%2 == 0}); err != nil {
					t.Fatal(err)
				}
				r := rand.New(rand.NewPCG(uint64(seed), 7))
				lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
				for range 3 {
					lines = f.apply(r, lines, seed%2 == 0)
				}
				checkRepairProperties(t, build(r, lines, false, false), []string{"all"})
			})
		}
	}
}
