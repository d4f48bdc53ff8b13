package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
)

// TestImageWithOCITools builds rollout as `make image` does, writes the
// image twice (same digest), then checks it with standard OCI tools rather
// than with the library that wrote it: umoci unpacks it into a runtime
// bundle (the config a runtime would run) and skopeo reads its config. The
// binary then runs from the unpacked rootfs, as the bundle says: chrooted,
// as uid 65532, in /work.
func TestImageWithOCITools(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: building a static rollout takes a minute")
	}
	if _, err := exec.LookPath("umoci"); err != nil {
		t.Skip("umoci is not installed (Debian: apt-get install umoci; .ci/run installs it): the image is not checked with a standard OCI tool")
	}
	tmp := t.TempDir()
	bin := filepath.Join(tmp, "rollout")
	build := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w", "-o", bin, "./cmd/rollout")
	build.Dir = filepath.Join("..", "..", "..")
	build.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}

	t.Setenv("SOURCE_DATE_EPOCH", "1800000000")
	const tag = "v9.9.9-test"
	oci := filepath.Join(tmp, "oci")
	args := []string{"-binary", bin, "-o", oci, "-version", tag, "-revision", "0123456789abcdef"}
	var first, second bytes.Buffer
	if err := run(args, &first); err != nil {
		t.Fatal(err)
	}
	if err := run(append(args[:3:3], filepath.Join(tmp, "oci2"), "-version", tag, "-revision", "0123456789abcdef"), &second); err != nil {
		t.Fatal(err)
	}
	if first.String() != second.String() || !strings.HasPrefix(first.String(), "sha256:") {
		t.Errorf("two builds of the same binary: %q and %q", first.String(), second.String())
	}

	bundle := filepath.Join(tmp, "bundle")
	unpack := []string{"unpack", "--image", oci + ":" + tag, bundle}
	root := os.Geteuid() == 0
	if !root {
		unpack = slices.Insert(unpack, 1, "--rootless")
	}
	if out, err := exec.Command("umoci", unpack...).CombinedOutput(); err != nil {
		t.Fatalf("umoci %s: %v\n%s", strings.Join(unpack, " "), err, out)
	}
	proc := bundleProcess(t, bundle)
	rootfs := filepath.Join(bundle, "rootfs")

	t.Run("bundle", func(t *testing.T) {
		if !slices.Equal(proc.Args, []string{binaryPath}) || proc.Cwd != workDir || proc.User.UID != uid || proc.User.GID != uid {
			t.Errorf("umoci's runtime config: args %q, cwd %q, user %d:%d", proc.Args, proc.Cwd, proc.User.UID, proc.User.GID)
		}
		for _, sh := range []string{"bin/sh", "usr/bin/sh"} {
			if _, err := os.Lstat(filepath.Join(rootfs, sh)); err == nil {
				t.Errorf("the image has /%s", sh)
			}
		}
	})

	t.Run("skopeo", func(t *testing.T) {
		if _, err := exec.LookPath("skopeo"); err != nil {
			t.Skip("skopeo is not installed (Debian: apt-get install skopeo): the config is not read by it")
		}
		out, err := exec.Command("skopeo", "inspect", "--config", "oci:"+oci+":"+tag).Output()
		if err != nil {
			t.Fatalf("skopeo inspect: %v", err)
		}
		var cf struct {
			Created string
			Config  struct {
				User       string
				Entrypoint []string
				WorkingDir string
				Labels     map[string]string
			}
		}
		if err := json.Unmarshal(out, &cf); err != nil {
			t.Fatal(err)
		}
		c := cf.Config
		if c.User != user || !slices.Equal(c.Entrypoint, []string{binaryPath}) || c.WorkingDir != workDir || cf.Created != "2027-01-15T08:00:00Z" {
			t.Errorf("skopeo reads user %q, entrypoint %q, workdir %q, created %q", c.User, c.Entrypoint, c.WorkingDir, cf.Created)
		}
		if c.Labels["org.opencontainers.image.version"] != tag || c.Labels["org.opencontainers.image.source"] != sourceURL ||
			c.Labels["org.opencontainers.image.revision"] != "0123456789abcdef" {
			t.Errorf("labels %v", c.Labels)
		}
	})

	t.Run("run", func(t *testing.T) {
		if !root {
			t.Skip("running the binary chrooted as uid 65532 needs root")
		}
		out := runInBundle(t, rootfs, proc, "--version")
		if !strings.HasPrefix(out, "rollout ") {
			t.Errorf("rollout --version in the image: %q", out)
		}
		fixture, err := os.ReadFile(filepath.Join("..", "..", "..", "fixtures", "clean", "bare-2025.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(rootfs, "work", "bare.jsonl"), fixture, 0o644); err != nil {
			t.Fatal(err)
		}
		// The report's directory is made, as the Kubernetes recipe needs.
		runInBundle(t, rootfs, proc, "verify", "bare.jsonl", "--format", "json=/tmp/reports/verify.json")
		fi, err := os.Stat(filepath.Join(rootfs, "tmp", "reports", "verify.json"))
		if err != nil {
			t.Fatal(err)
		}
		if st := fi.Sys().(*syscall.Stat_t); st.Uid != uid {
			t.Errorf("the report is owned by uid %d", st.Uid)
		}
	})
}

// process is the part of a runtime bundle's config.json that says what
// runs: the OCI runtime spec's "process".
type process struct {
	Args []string
	Env  []string
	Cwd  string
	User struct {
		UID uint32 `json:"uid"`
		GID uint32 `json:"gid"`
	}
}

func bundleProcess(t *testing.T, bundle string) process {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(bundle, "config.json"))
	if err != nil {
		t.Fatal(err)
	}
	var spec struct{ Process process }
	if err := json.Unmarshal(b, &spec); err != nil {
		t.Fatal(err)
	}
	return spec.Process
}

// runInBundle runs the bundle's process with args, as a runtime would
// without namespaces: chrooted into rootfs, as its user, in its working
// directory, with its environment only.
func runInBundle(t *testing.T, rootfs string, p process, args ...string) string {
	t.Helper()
	cmd := exec.Command(p.Args[0], append(slices.Clone(p.Args[1:]), args...)...)
	cmd.Env, cmd.Dir = p.Env, p.Cwd
	cmd.SysProcAttr = &syscall.SysProcAttr{Chroot: rootfs,
		Credential: &syscall.Credential{Uid: p.User.UID, Gid: p.User.GID, Groups: []uint32{}}}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("rollout %s in the image: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return string(out)
}
