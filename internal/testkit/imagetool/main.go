// Command imagetool writes the OCI image of rollout from a static linux
// binary, without Docker and without the network: an empty base (no
// shell), the binary at /usr/local/bin/rollout as the entrypoint, the
// non-root user 65532, the OCI labels, every timestamp the commit's (or
// SOURCE_DATE_EPOCH), so that the same binary gives the same digest.
// It writes an OCI image layout directory, tagged with the version, and
// prints the manifest digest. `make image` runs it (docs/scale.md says how
// to push the image and pin it by digest).
// It is a tool (internal/testkit): nothing of the product imports it.
//
// Usage:
//
//	imagetool -binary FILE -o DIR [-version V] [-revision SHA] [-ca-certs FILE]
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "imagetool:", err)
		os.Exit(1)
	}
}

// run prints the manifest digest to stdout, what it did to standard error.
func run(args []string, stdout io.Writer) error {
	fl := flag.NewFlagSet("imagetool", flag.ContinueOnError)
	binary := fl.String("binary", "", "the static linux rollout `FILE` (CGO_ENABLED=0)")
	out := fl.String("o", "", "the OCI image layout `DIR` to write (replaced when it is one)")
	version := fl.String("version", "", "the version: the tag and the version label (default: the binary's module version)")
	revision := fl.String("revision", "", "the commit `SHA` of the revision label (default: the binary's vcs.revision)")
	caCerts := fl.String("ca-certs", "", "a CA bundle `FILE` to install at "+caPath+" (HTTPS needs one)")
	if err := fl.Parse(args); err != nil {
		return err
	}
	if *binary == "" || *out == "" || fl.NArg() > 0 {
		fl.Usage()
		return errors.New("give -binary FILE and -o DIR")
	}
	t, bi, err := binaryInfo(*binary)
	if err != nil {
		return err
	}
	sp := spec{binary: *binary, caCerts: *caCerts, version: *version, revision: *revision}
	vcs := map[string]string{}
	for _, kv := range bi.Settings {
		vcs[kv.Key] = kv.Value
	}
	if sp.version == "" {
		sp.version = bi.Main.Version
	}
	if sp.revision == "" {
		sp.revision = vcs["vcs.revision"]
	}
	if sp.created, err = createdTime(os.Getenv("SOURCE_DATE_EPOCH"), vcs["vcs.time"]); err != nil {
		return err
	}
	tag, err := tagOf(sp.version)
	if err != nil {
		return err
	}
	img, err := buildImage(sp, t)
	if err != nil {
		return err
	}
	digest, err := writeLayout(*out, img, tag, t)
	if err != nil {
		return err
	}
	size, err := imageSize(img)
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "imagetool: wrote %s:%s (%s/%s, %d bytes compressed)\n", *out, tag, t.os, t.arch, size)
	fmt.Fprintln(stdout, digest)
	return nil
}

// createdTime is the one timestamp of the image: SOURCE_DATE_EPOCH
// (reproducible-builds.org), else the commit time Go stamped into the
// binary. Never the clock: the digest would change on every build.
func createdTime(epoch, vcsTime string) (time.Time, error) {
	if epoch != "" {
		n, err := strconv.ParseInt(epoch, 10, 64)
		if err != nil {
			return time.Time{}, fmt.Errorf("SOURCE_DATE_EPOCH=%q: not a number of seconds", epoch)
		}
		return time.Unix(n, 0).UTC(), nil
	}
	if vcsTime != "" {
		return time.Parse(time.RFC3339, vcsTime)
	}
	return time.Time{}, errors.New("no timestamp: set SOURCE_DATE_EPOCH (e.g. to the commit time, git log -1 --format=%ct)")
}

// writeLayout writes img as the only image of an OCI layout at dir, its
// index entry naming the tag (what `oci:DIR:TAG` and `umoci --image
// DIR:TAG` look up), and returns the manifest digest. The layout is built
// beside dir and renamed over it: an old layout is replaced, never merged
// into, and anything else at dir is refused.
func writeLayout(dir string, img v1.Image, tag string, t target) (v1.Hash, error) {
	if _, err := os.Stat(dir); err == nil {
		if _, err := os.Stat(filepath.Join(dir, "oci-layout")); err != nil {
			return v1.Hash{}, fmt.Errorf("%s exists and is not an OCI image layout: refusing to replace it", dir)
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return v1.Hash{}, err
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), "."+filepath.Base(dir)+".tmp")
	if err != nil {
		return v1.Hash{}, err
	}
	defer os.RemoveAll(tmp)
	p, err := layout.Write(tmp, empty.Index)
	if err != nil {
		return v1.Hash{}, err
	}
	platform := v1.Platform{OS: t.os, Architecture: t.arch, Variant: t.variant}
	err = p.AppendImage(img, layout.WithAnnotations(map[string]string{"org.opencontainers.image.ref.name": tag}),
		layout.WithPlatform(platform))
	if err != nil {
		return v1.Hash{}, err
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return v1.Hash{}, err
	}
	if err := os.RemoveAll(dir); err != nil {
		return v1.Hash{}, err
	}
	if err := os.Rename(tmp, dir); err != nil {
		return v1.Hash{}, err
	}
	return img.Digest()
}

// imageSize is what a pull transfers: the manifest, the config and the
// compressed layers.
func imageSize(img v1.Image) (int64, error) {
	m, err := img.Manifest()
	if err != nil {
		return 0, err
	}
	raw, err := img.RawManifest()
	if err != nil {
		return 0, err
	}
	n := int64(len(raw)) + m.Config.Size
	for _, l := range m.Layers {
		n += l.Size
	}
	return n, nil
}
