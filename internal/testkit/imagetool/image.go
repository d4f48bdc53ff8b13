package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"debug/buildinfo"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// What the image is; the Dockerfile at the repository root says the same
// (dockerfile_test.go holds the two together).
const (
	binaryPath = "/usr/local/bin/rollout"
	uid        = 65532 // distroless's "nonroot": no file on the host is likely to be its
	userName   = "nonroot"
	homeDir    = "/home/nonroot"
	workDir    = "/work"                                  // where users mount their rollouts, writable when nothing is
	caPath     = "/etc/ssl/certs/ca-certificates.crt"     // where Go's crypto/x509 looks first on Linux
	sourceURL  = "https://github.com/rollout-dev/rollout" // org.opencontainers.image.source
)

// user is the config's User: numeric, so that a runtime need not read
// /etc/passwd to drop root (Kubernetes' runAsNonRoot checks it).
var user = fmt.Sprintf("%d:%d", uid, uid)

// spec is everything the image is made from: the same spec gives the same
// manifest digest.
type spec struct {
	binary   string // a static linux rollout binary
	caCerts  string // a CA bundle for HTTPS (s3:// inputs), "" for none
	version  string // the tag and the version label
	revision string // the commit, "" when unknown
	created  time.Time
}

// target is the platform a Go binary was built for, from its build info.
type target struct{ os, arch, variant string }

// binaryInfo reads what the Go toolchain stamped into the binary and refuses
// one the image cannot run: the image has no libc and no loader.
func binaryInfo(file string) (target, *buildinfo.BuildInfo, error) {
	bi, err := buildinfo.ReadFile(file)
	if err != nil {
		return target{}, nil, fmt.Errorf("%s: not a Go binary: %w", file, err)
	}
	s := map[string]string{}
	for _, kv := range bi.Settings {
		s[kv.Key] = kv.Value
	}
	t := target{os: s["GOOS"], arch: s["GOARCH"]}
	if t.arch == "arm" && s["GOARM"] != "" {
		t.variant = "v" + strings.TrimSuffix(strings.TrimSuffix(s["GOARM"], ",softfloat"), ",hardfloat")
	}
	switch {
	case t.os != "linux":
		return t, bi, fmt.Errorf("%s is built for %s: the image needs GOOS=linux", file, t.os)
	case s["CGO_ENABLED"] != "0":
		return t, bi, fmt.Errorf("%s is built with cgo: the image has no libc (build it with CGO_ENABLED=0)", file)
	}
	return t, bi, nil
}

// tagRE is the OCI distribution spec's tag grammar.
var tagRE = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9._-]{0,127}$`)

// tagOf is the tag of a version: Go's "+dirty" becomes "-dirty" ('+' is
// not allowed in a tag). "latest" is refused: a tag names one build.
func tagOf(version string) (string, error) {
	tag := strings.ReplaceAll(version, "+", "-")
	switch {
	case tag == "" || tag == "(devel)":
		return "", errors.New("the binary carries no version: give -version")
	case strings.EqualFold(tag, "latest"):
		return "", errors.New("refusing the tag latest: an image is tagged with the version it holds")
	case !tagRE.MatchString(tag):
		return "", fmt.Errorf("version %q is not a valid image tag", version)
	}
	return tag, nil
}

// buildImage assembles the image: one layer on an empty base (no shell, no
// package manager), timestamps all sp.created.
func buildImage(sp spec, t target) (v1.Image, error) {
	bin, err := os.ReadFile(sp.binary)
	if err != nil {
		return nil, err
	}
	var certs []byte
	if sp.caCerts != "" {
		if certs, err = os.ReadFile(sp.caCerts); err != nil {
			return nil, err
		}
	}
	layerTar, err := rootfs(bin, certs, sp.created)
	if err != nil {
		return nil, err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(layerTar)), nil
	}, tarball.WithMediaType(types.OCILayer), tarball.WithCompressionLevel(gzip.BestCompression), tarball.WithCompressedCaching)
	if err != nil {
		return nil, err
	}
	created := v1.Time{Time: sp.created}
	base := mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON)
	img, err := mutate.Append(base, mutate.Addendum{Layer: layer, History: v1.History{
		Created: created, CreatedBy: "internal/testkit/imagetool", Comment: "rollout " + sp.version}})
	if err != nil {
		return nil, err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.Created = created
	cf.OS, cf.Architecture, cf.Variant = t.os, t.arch, t.variant
	cf.Config = v1.Config{
		Entrypoint: []string{binaryPath},
		User:       user,
		WorkingDir: workDir,
		Env:        []string{"PATH=/usr/local/bin", "HOME=" + homeDir},
		Labels:     labels(sp),
	}
	return mutate.ConfigFile(img, cf)
}

// labels are the OCI annotations a registry and a scanner read.
func labels(sp spec) map[string]string {
	l := map[string]string{
		"org.opencontainers.image.title":   "rollout",
		"org.opencontainers.image.source":  sourceURL,
		"org.opencontainers.image.version": sp.version,
		"org.opencontainers.image.created": sp.created.UTC().Format(time.RFC3339),
	}
	if sp.revision != "" {
		l["org.opencontainers.image.revision"] = sp.revision
	}
	return l
}

// passwd and group name the user, for tools that look it up (and Go's
// os/user); no login shell exists.
var (
	passwd = fmt.Sprintf("root:x:0:0:root:/root:/sbin/nologin\n%s:x:%d:%d:%s:%s:/sbin/nologin\n", userName, uid, uid, userName, homeDir)
	group  = fmt.Sprintf("root:x:0:\n%s:x:%d:\n", userName, uid)
)

// entry is one file or directory of the layer.
type entry struct {
	name string // without a leading slash
	mode int64  // permission bits, and sticky
	uid  int
	data []byte // nil for a directory
}

// rootfs is the layer's tar: the directories a non-root process needs
// (a writable /tmp, home and working directory), passwd and group naming
// the user, the CA bundle and the binary. Entries are in a fixed order
// with fixed owners and times, so the bytes depend on the inputs only.
func rootfs(bin, certs []byte, mtime time.Time) ([]byte, error) {
	entries := []entry{
		{name: "etc/", mode: 0o755},
		{name: "etc/group", mode: 0o644, data: []byte(group)},
		{name: "etc/passwd", mode: 0o644, data: []byte(passwd)},
	}
	if certs != nil {
		entries = append(entries,
			entry{name: "etc/ssl/", mode: 0o755},
			entry{name: "etc/ssl/certs/", mode: 0o755},
			entry{name: strings.TrimPrefix(caPath, "/"), mode: 0o644, data: certs})
	}
	entries = append(entries,
		entry{name: "home/", mode: 0o755},
		entry{name: strings.TrimPrefix(homeDir, "/") + "/", mode: 0o755, uid: uid},
		entry{name: "tmp/", mode: 0o1777},
		entry{name: "usr/", mode: 0o755},
		entry{name: "usr/local/", mode: 0o755},
		entry{name: "usr/local/bin/", mode: 0o755},
		entry{name: strings.TrimPrefix(binaryPath, "/"), mode: 0o755, data: bin},
		entry{name: strings.TrimPrefix(workDir, "/") + "/", mode: 0o755, uid: uid},
	)
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range entries {
		h := &tar.Header{Name: e.name, Mode: e.mode, Uid: e.uid, Gid: e.uid, ModTime: mtime.Truncate(time.Second), Format: tar.FormatPAX}
		if e.data == nil {
			h.Typeflag = tar.TypeDir
		} else {
			h.Typeflag, h.Size = tar.TypeReg, int64(len(e.data))
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
		if _, err := tw.Write(e.data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
