package rollout

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// piece is one write into a LinePipe: bytes, or a whole line.
type piece struct {
	bytes     string
	body      []byte
	eol       string
	wholeLine bool
}

func feed(p *LinePipe, pieces []piece) {
	for _, pc := range pieces {
		if pc.wholeLine {
			p.WriteLine(pc.body, pc.eol)
		} else {
			p.Write([]byte(pc.bytes))
		}
	}
	p.CloseWithError(nil)
}

// A Reader on a LinePipe gives the records of the bytes written, and a
// line handed whole is the writer's own bytes, not a copy.
func TestLinePipeWholeLines(t *testing.T) {
	long := func(c string) []byte { return []byte(`{"s":"` + strings.Repeat(c, readBufferSize+3) + `"}`) }
	crBody := append(long("y"), '\r') // "\r" before a "\r\n": one terminator, as SplitEOL has it
	pieces := []piece{
		{bytes: "{\"a\":1}\n"},
		{body: long("x"), eol: "\n", wholeLine: true},
		{body: crBody, eol: "\r\n", wholeLine: true},
		{bytes: "\n{\"b\":2}\r\n"},
		{body: long("z"), eol: "", wholeLine: true},
	}
	var all strings.Builder
	for _, pc := range pieces {
		all.WriteString(pc.bytes)
		all.Write(pc.body)
		all.WriteString(pc.eol)
	}
	for _, max := range []int64{0, 100} {
		want := readAll(t, strings.NewReader(all.String()), max)
		p := NewLinePipe()
		go feed(p, pieces)
		got := readAll(t, p, max)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("max %d: records differ (-stream +pipe):\n%.2000s", max, diff)
		}
	}

	p := NewLinePipe()
	go feed(p, pieces)
	rd := NewReader(p, 0)
	defer rd.Release()
	rd.Next()
	rec, err := rd.Next()
	if err != nil {
		t.Fatal(err)
	}
	if &rec.Raw[0] != &pieces[1].body[0] {
		t.Error("the whole line was copied")
	}
}

// A reader that stops drains the pipe: the writer does not block.
func TestLinePipeDrain(t *testing.T) {
	p := NewLinePipe()
	done := make(chan struct{})
	go func() {
		defer close(done)
		p.Write([]byte("{\"a\":1}\n"))
		p.WriteLine(bytes.Repeat([]byte("x"), 10), "\n")
		p.Write([]byte("{\"b\":2}\n"))
		p.CloseWithError(nil)
	}()
	rd := NewReader(p, 0)
	if _, err := rd.Next(); err != nil {
		t.Fatal(err)
	}
	p.Drain()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the writer is still blocked after Drain")
	}
}

// The writer's error reaches the reader after what was written.
func TestLinePipeWriterError(t *testing.T) {
	p := NewLinePipe()
	boom := errors.New("boom")
	go func() {
		p.Write([]byte("{\"a\":1}\n"))
		p.CloseWithError(boom)
	}()
	rd := NewReader(p, 0)
	if _, err := rd.Next(); err != nil {
		t.Fatal(err)
	}
	if _, err := rd.Next(); !errors.Is(err, boom) || errors.Is(err, io.EOF) {
		t.Fatalf("err %v, want the writer's", err)
	}
}
