// Package s3server runs a real S3-compatible server, SeaweedFS, for the
// tests of the object-storage input (issue 33): Start launches `weed
// server -s3` on free loopback ports with fixed keys and stops it when the
// test ends; Env gives a client the environment that points at it;
// CreateBucket and Upload load a directory tree; CountingEndpoint puts a
// reverse proxy in front that counts requests by kind.
//
// The weed binary is built once, outside the repository, into the cache
// Binary names (.ci/run runs internal/build, which calls Build); Start
// skips the test, saying how to build it, when it is not there. It is a
// test harness (internal/testkit): used only by tests.
package s3server

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"time"
)

// Module and Version are the SeaweedFS the tests run; the build and Start
// both read them here.
const (
	Module  = "github.com/seaweedfs/seaweedfs"
	Version = "v0.0.0-20261109003541-7506e5f91cd6"
)

// Binary is where the weed binary of Version lives: $ROLLOUT_SEAWEEDFS,
// else $XDG_CACHE_HOME/rollout/seaweedfs/VERSION/weed, else
// ~/.cache/rollout/seaweedfs/VERSION/weed (as the Codex releases are
// cached, internal/testkit/conformance).
func Binary() string {
	if p := os.Getenv("ROLLOUT_SEAWEEDFS"); p != "" {
		return p
	}
	cache := os.Getenv("XDG_CACHE_HOME")
	if cache == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			home = os.TempDir()
		}
		cache = filepath.Join(home, ".cache")
	}
	return filepath.Join(cache, "rollout", "seaweedfs", Version, "weed")
}

// Installed reports the binary when it is there.
func Installed() (string, bool) {
	p := Binary()
	fi, err := os.Stat(p)
	return p, err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
}

// Build builds weed into Binary unless it is there, and returns its path.
// SeaweedFS cannot be `go install`ed (its go.mod has replace directives):
// its module is downloaded, copied somewhere writable and built as the
// main module. go's output goes to log. The binary is renamed into place,
// so an interrupted build leaves none behind.
func Build(ctx context.Context, log io.Writer) (string, error) {
	bin, ok := Installed()
	if ok {
		return bin, nil
	}
	if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
		return "", err
	}
	work, err := os.MkdirTemp(filepath.Dir(bin), "build-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(work)
	// Outside any module, so that this repository's go.mod and go.sum stay
	// as they are.
	dl := exec.CommandContext(ctx, "go", "mod", "download", "-json", Module+"@"+Version)
	dl.Dir, dl.Env, dl.Stderr = work, append(os.Environ(), "GOFLAGS=-mod=mod", "GO111MODULE=on"), log
	out, err := dl.Output()
	if err != nil {
		return "", fmt.Errorf("downloading %s@%s: %w", Module, Version, err)
	}
	var mod struct{ Dir, Error string }
	if err := json.Unmarshal(out, &mod); err != nil || mod.Dir == "" {
		return "", fmt.Errorf("downloading %s@%s: %s%v", Module, Version, mod.Error, err)
	}
	src := filepath.Join(work, "src")
	if err := copyTree(mod.Dir, src); err != nil {
		return "", fmt.Errorf("copying %s: %w", mod.Dir, err)
	}
	start := time.Now()
	tmp := filepath.Join(work, "weed")
	// -trimpath: the build directory is a fresh temporary one each time, and
	// without it go's cache would not serve a build interrupted and rerun.
	b := exec.CommandContext(ctx, "go", "build", "-trimpath", "-o", tmp, "./weed")
	b.Dir, b.Env, b.Stdout, b.Stderr = src, append(os.Environ(), "GOFLAGS=-mod=mod"), log, log
	if err := b.Run(); err != nil {
		return "", fmt.Errorf("building weed in %s: %w", src, err)
	}
	fmt.Fprintf(log, "go build ./weed took %s\n", time.Since(start).Round(time.Second))
	return bin, os.Rename(tmp, bin)
}

// copyTree copies the module's files (read-only in the module cache) into
// a writable tree.
func copyTree(from, to string) error {
	return filepath.WalkDir(from, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		dst := filepath.Join(to, rel)
		if d.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(dst, b, 0o644)
	})
}
