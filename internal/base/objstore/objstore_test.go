package objstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// These tests pin this package's own paths (ranges, resuming, heads,
// errors) against a small HTTP server that answers GETs as S3 does; the
// real S3-compatible server is exercised in cmd/rollout's fleet test.

// store serves objects by path "/BUCKET/KEY", honouring Range, and can cut
// a response short once to test resuming.
type store struct {
	mu      sync.Mutex
	objects map[string]string
	cutOnce map[string]int // path -> bytes sent before the connection drops
	ranges  []string       // every Range asked, in order
}

func (s *store) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	body, ok := s.objects[r.URL.Path]
	cut, cutting := s.cutOnce[r.URL.Path]
	delete(s.cutOnce, r.URL.Path)
	s.ranges = append(s.ranges, r.Header.Get("Range"))
	s.mu.Unlock()
	if !ok {
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprint(w, `<?xml version="1.0"?><Error><Code>NoSuchKey</Code><Message>gone</Message></Error>`)
		return
	}
	w.Header().Set("ETag", `"v1"`)
	start, end := 0, len(body)
	if rg := r.Header.Get("Range"); rg != "" {
		a, b, _ := strings.Cut(strings.TrimPrefix(rg, "bytes="), "-")
		start, _ = strconv.Atoi(a)
		if b != "" {
			e, _ := strconv.Atoi(b)
			end = min(e+1, len(body))
		}
		if start >= len(body) {
			w.WriteHeader(http.StatusRequestedRangeNotSatisfiable)
			return
		}
		w.Header().Set("Content-Range", fmt.Sprintf("bytes %d-%d/%d", start, end-1, len(body)))
		w.Header().Set("Content-Length", strconv.Itoa(end-start))
		w.WriteHeader(http.StatusPartialContent)
	} else {
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	}
	if r.Method == http.MethodHead {
		return
	}
	part := body[start:end]
	if cutting && cut < len(part) {
		io.WriteString(w, part[:cut])
		// Drop the connection with the response unfinished.
		hj, _ := w.(http.Hijacker)
		conn, _, _ := hj.Hijack()
		conn.Close()
		return
	}
	io.WriteString(w, part)
}

var testStore = &store{objects: map[string]string{}, cutOnce: map[string]int{}}

func TestMain(m *testing.M) {
	srv := httptest.NewServer(testStore)
	os.Setenv("AWS_ENDPOINT_URL_S3", srv.URL)
	os.Setenv("AWS_ACCESS_KEY_ID", "test")
	os.Setenv("AWS_SECRET_ACCESS_KEY", "test")
	os.Setenv("AWS_REGION", "us-east-1")
	os.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	os.Setenv("AWS_CONFIG_FILE", os.DevNull)
	os.Setenv("AWS_SHARED_CREDENTIALS_FILE", os.DevNull)
	code := m.Run()
	srv.Close()
	os.Exit(code)
}

func put(key, body string) string {
	testStore.mu.Lock()
	defer testStore.mu.Unlock()
	testStore.objects["/b/"+key] = body
	testStore.ranges = nil
	return "s3://b/" + key
}

// read returns a reader of what Open returns: read(t)(Open(...)).
func read(t *testing.T) func(io.ReadCloser, error) string {
	return func(r io.ReadCloser, err error) string {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		got, err := io.ReadAll(r)
		if err != nil {
			t.Fatal(err)
		}
		return string(got)
	}
}

func TestIsURIAndSplit(t *testing.T) {
	for p, want := range map[string]bool{"s3://b/k": true, "gs://b": true, "a/b": false, "C:\\x": false, "./s3://x": false, "-": false} {
		if IsURI(p) != want {
			t.Errorf("IsURI(%q) = %v", p, !want)
		}
	}
	if b, k, err := Split("s3://bucket/a/b.jsonl"); err != nil || b != "bucket" || k != "a/b.jsonl" {
		t.Errorf("Split = %q %q %v", b, k, err)
	}
	if _, _, err := Split("gs://bucket/x"); err == nil || !strings.Contains(err.Error(), "not supported") {
		t.Errorf("gs:// = %v, want not supported", err)
	}
}

// A connection dropped part-way is resumed from the byte it broke at.
func TestOpenResumes(t *testing.T) {
	body := strings.Repeat("0123456789", 10000)
	uri := put("resume.jsonl", body)
	testStore.mu.Lock()
	testStore.cutOnce["/b/resume.jsonl"] = 12345
	testStore.mu.Unlock()
	if got := read(t)(Open(context.Background(), uri, 0, -1)); got != body {
		t.Fatalf("read %d bytes, want %d intact", len(got), len(body))
	}
	// The second GET starts where the bytes that arrived end (the server
	// may lose some of the 12,345 it wrote when the connection drops).
	var at int
	if r := testStore.ranges; len(r) != 2 || r[0] != "" {
		t.Fatalf("ranges asked = %q, want a whole GET then the rest", r)
	} else if _, err := fmt.Sscanf(r[1], "bytes=%d-", &at); err != nil || at <= 0 || at > 12345 || !strings.HasSuffix(r[1], "-") {
		t.Errorf("resumed with %q, want bytes=N- with 0 < N <= 12345", r[1])
	}
}

// A pinned object is read to its pinned size: what was appended after the
// plan is left for the next run.
func TestOpenPinned(t *testing.T) {
	uri := put("pinned.jsonl", "line one\nline two\n")
	Pin(Object{URI: uri, Size: 9, ETag: `"v1"`})
	if got := read(t)(Open(context.Background(), uri, 0, -1)); got != "line one\n" {
		t.Errorf("pinned read = %q", got)
	}
	if o, err := Stat(context.Background(), uri); err != nil || o.Size != 9 {
		t.Errorf("Stat of a pinned object = %+v, %v", o, err)
	}
}

// A head read asks for a small range, then longer ones as it wants more,
// and stops at the object's end.
func TestOpenHeadGrows(t *testing.T) {
	body := strings.Repeat("x", 1000)
	uri := put("head.jsonl", body)
	if got := read(t)(OpenHead(context.Background(), uri, 100, 1<<20)); got != body {
		t.Fatalf("head read %d bytes, want %d", len(got), len(body))
	}
	want := []string{"bytes=0-99", "bytes=100-199", "bytes=200-399", "bytes=400-799", "bytes=800-1599"}
	if r := testStore.ranges; strings.Join(r, " ") != strings.Join(want, " ") {
		t.Errorf("ranges = %q, want %q", r, want)
	}
	small := put("small.jsonl", "abc")
	if got := read(t)(OpenHead(context.Background(), small, 100, 1<<20)); got != "abc" {
		t.Errorf("head of a short object = %q", got)
	}
	if r := testStore.ranges; len(r) != 1 {
		t.Errorf("a short object took %d requests, want 1: %q", len(r), r)
	}
}

func TestMissingIsNotExist(t *testing.T) {
	_, err := Open(context.Background(), "s3://b/none.jsonl", 0, -1)
	if !errors.Is(err, fs.ErrNotExist) || !errors.Is(err, ErrNotExist) {
		t.Errorf("missing object: %v, want ErrNotExist (and fs.ErrNotExist)", err)
	}
	empty := put("empty.jsonl", "")
	if got := read(t)(Open(context.Background(), empty, 0, 10)); got != "" {
		t.Errorf("empty object read %q", got)
	}
}

// Read-ahead fetches pinned small objects once, before Open asks, and Open
// takes them without a request of its own.
func TestReadAhead(t *testing.T) {
	var uris []string
	for i := range 5 {
		u := put(fmt.Sprintf("ahead/%d.jsonl", i), strings.Repeat(fmt.Sprint(i), 100+i))
		Pin(Object{URI: u, Size: int64(100 + i)})
		uris = append(uris, u)
	}
	stop := readAhead(context.Background(), uris, 2)
	// The first two (depth 2) are fetched before anything is opened.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		testStore.mu.Lock()
		n := len(testStore.ranges)
		testStore.mu.Unlock()
		if n == 2 {
			break
		}
		if n > 2 || time.Now().After(deadline) {
			t.Fatalf("%d GETs before any Open, want the depth, 2", n)
		}
	}
	for i, u := range uris {
		if i == 3 {
			take(u) // a file the run does not read after all
			continue
		}
		if got := read(t)(Open(context.Background(), u, 0, -1)); got != strings.Repeat(fmt.Sprint(i), 100+i) {
			t.Errorf("%s: read %q", u, got)
		}
	}
	stop()
	testStore.mu.Lock()
	gets := len(testStore.ranges)
	testStore.mu.Unlock()
	if gets > 5 || gets < 4 {
		t.Errorf("%d GETs for 5 objects (one forgotten), want one each at most", gets)
	}
}
