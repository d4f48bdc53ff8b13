package main

import (
	"archive/tar"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
)

var amd64 = target{os: "linux", arch: "amd64"}

// fakeSpec is a spec whose "binary" is a few bytes: buildImage does not
// look inside it (binaryInfo does, and run calls it).
func fakeSpec(t *testing.T, content string) spec {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "rollout")
	if err := os.WriteFile(bin, []byte(content), 0o755); err != nil {
		t.Fatal(err)
	}
	return spec{binary: bin, version: "v1.2.3", revision: "0123456789abcdef",
		created: time.Date(2026, 12, 2, 7, 51, 18, 0, time.UTC)}
}

func digestOf(t *testing.T, sp spec) v1.Hash {
	t.Helper()
	img, err := buildImage(sp, amd64)
	if err != nil {
		t.Fatal(err)
	}
	d, err := writeLayout(filepath.Join(t.TempDir(), "oci"), img, "v1.2.3", amd64)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestSameInputsSameDigest: the digest depends on the binary, the version,
// the revision and the timestamp, and on nothing else (not the clock, not
// the directory, not the order maps iterate in).
func TestSameInputsSameDigest(t *testing.T) {
	sp := fakeSpec(t, "binary one")
	first := digestOf(t, sp)
	if again := digestOf(t, sp); again != first {
		t.Errorf("the same inputs gave %s, then %s", first, again)
	}
	later := sp
	later.created = later.created.Add(time.Second)
	other := fakeSpec(t, "binary two")
	other.created = sp.created
	for name, changed := range map[string]spec{"created": later, "binary": other} {
		if d := digestOf(t, changed); d == first {
			t.Errorf("changing %s kept the digest %s", name, d)
		}
	}
}

// TestConfig: what a runtime reads from the image.
func TestConfig(t *testing.T) {
	img, err := buildImage(fakeSpec(t, "x"), amd64)
	if err != nil {
		t.Fatal(err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	c := cf.Config
	if len(c.Entrypoint) != 1 || c.Entrypoint[0] != binaryPath || c.Cmd != nil {
		t.Errorf("entrypoint %q, cmd %q", c.Entrypoint, c.Cmd)
	}
	if c.User != "65532:65532" || c.WorkingDir != workDir || cf.OS != "linux" || cf.Architecture != "amd64" {
		t.Errorf("user %q, workdir %q, platform %s/%s", c.User, c.WorkingDir, cf.OS, cf.Architecture)
	}
	for k, want := range map[string]string{
		"org.opencontainers.image.source":   sourceURL,
		"org.opencontainers.image.version":  "v1.2.3",
		"org.opencontainers.image.revision": "0123456789abcdef",
		"org.opencontainers.image.created":  "2026-12-02T07:51:18Z",
	} {
		if got := c.Labels[k]; got != want {
			t.Errorf("label %s = %q, want %q", k, got, want)
		}
	}
	if !cf.Created.Time.Equal(time.Date(2026, 12, 2, 7, 51, 18, 0, time.UTC)) {
		t.Errorf("created %v", cf.Created)
	}
}

// TestRootfs: the layer holds no shell, and every entry has the fixed
// owner, mode and time.
func TestRootfs(t *testing.T) {
	mtime := time.Unix(1_800_000_000, 0)
	b, err := rootfs([]byte("bin"), []byte("certs"), mtime)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]*tar.Header{}
	tr := tar.NewReader(strings.NewReader(string(b)))
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if !h.ModTime.Equal(mtime) {
			t.Errorf("%s: mtime %v", h.Name, h.ModTime)
		}
		got[h.Name] = h
	}
	want := map[string]struct {
		mode int64
		uid  int
	}{
		"usr/local/bin/rollout": {0o755, 0}, "tmp/": {0o1777, 0}, "work/": {0o755, uid},
		"home/nonroot/": {0o755, uid}, "etc/passwd": {0o644, 0}, "etc/ssl/certs/ca-certificates.crt": {0o644, 0},
	}
	for name, w := range want {
		h := got[name]
		if h == nil {
			t.Errorf("no %s in the layer", name)
			continue
		}
		if h.Mode != w.mode || h.Uid != w.uid || h.Gid != w.uid {
			t.Errorf("%s: mode %o, owner %d:%d; want %o, %d", name, h.Mode, h.Uid, h.Gid, w.mode, w.uid)
		}
	}
	for name := range got {
		if strings.HasPrefix(name, "bin/") || strings.HasSuffix(name, "/sh") {
			t.Errorf("the layer holds %s: the image has no shell", name)
		}
	}
}

func TestTagOf(t *testing.T) {
	for version, want := range map[string]string{
		"v1.2.3": "v1.2.3",
		"v0.0.0-20261202075118-79dd412f61c1+dirty": "v0.0.0-20261202075118-79dd412f61c1-dirty",
		"latest":   "",
		"LATEST":   "",
		"(devel)":  "",
		"":         "",
		"v1 beta":  "",
		"-v1.2.3":  "",
		"v1.2.3/x": "",
	} {
		got, err := tagOf(version)
		if got != want || (err == nil) != (want != "") {
			t.Errorf("tagOf(%q) = %q, %v; want %q", version, got, err, want)
		}
	}
}

func TestCreatedTime(t *testing.T) {
	if got, err := createdTime("1800000000", "2026-01-01T00:00:00Z"); err != nil || got.Unix() != 1_800_000_000 {
		t.Errorf("SOURCE_DATE_EPOCH first: %v, %v", got, err)
	}
	if got, err := createdTime("", "2026-01-01T00:00:00Z"); err != nil || got.Year() != 2026 {
		t.Errorf("then the commit time: %v, %v", got, err)
	}
	if _, err := createdTime("", ""); err == nil || !strings.Contains(err.Error(), "SOURCE_DATE_EPOCH") {
		t.Errorf("neither: %v", err)
	}
	if _, err := createdTime("yesterday", ""); err == nil {
		t.Error("a bad SOURCE_DATE_EPOCH was taken")
	}
}

// TestWriteLayout: a layout is replaced, not merged into (one image, one
// tag), and a directory that is not a layout is left alone.
func TestWriteLayout(t *testing.T) {
	img, err := buildImage(fakeSpec(t, "x"), amd64)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "oci")
	for range 2 {
		if _, err := writeLayout(dir, img, "v1.2.3", amd64); err != nil {
			t.Fatal(err)
		}
	}
	idx, err := layout.ImageIndexFromPath(dir)
	if err != nil {
		t.Fatal(err)
	}
	m, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Manifests) != 1 || m.Manifests[0].Annotations["org.opencontainers.image.ref.name"] != "v1.2.3" {
		t.Errorf("index after two writes: %+v", m.Manifests)
	}
	other := t.TempDir()
	os.WriteFile(filepath.Join(other, "keep"), nil, 0o644)
	if _, err := writeLayout(other, img, "v1.2.3", amd64); err == nil || !strings.Contains(err.Error(), "not an OCI image layout") {
		t.Errorf("writing over a directory that is not a layout: %v", err)
	}
	if _, err := os.Stat(filepath.Join(other, "keep")); err != nil {
		t.Error("the directory's file is gone")
	}
}
