// Package config reads the project configuration of `rollout verify`,
// `.rollout.yaml`, found from the working directory upward or named with
// --config. It only parses and validates: the command decides how flags
// override it. Unknown keys are errors naming their line, so that a typo
// never silently turns a check off.
package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"go.yaml.in/yaml/v3"
)

// FileName is the name looked for from the working directory upward.
const FileName = ".rollout.yaml"

// Config is the content of a .rollout.yaml. Every field is optional; a
// missing one leaves the flag's default.
type Config struct {
	// Select and Ignore are --select and --ignore: rule ids or areas ("ordinal/").
	Select []string `yaml:"select"`
	Ignore []string `yaml:"ignore"`
	// PerPathIgnores maps a glob, relative to the config file's directory
	// ("archived_sessions/**", "**/rollout-2025-*.jsonl"), to the rules or
	// areas ignored in the files it matches.
	PerPathIgnores map[string][]string `yaml:"per-path-ignores"`
	FailOn         string              `yaml:"fail-on"`
	ShowSeverity   string              `yaml:"show-severity"`
	MaxLineBytes   *int64              `yaml:"max-line-bytes"`
	HandoffCap     *int64              `yaml:"handoff-cap"`
	// MaxFindingsPerRule is --max-findings-per-rule.
	MaxFindingsPerRule *int `yaml:"max-findings-per-rule"`
	// Format is the list of --format values; a FILE is relative to the
	// config file's directory.
	Format []string `yaml:"format"`
	// Baseline is --baseline, relative to the config file's directory.
	Baseline string `yaml:"baseline"`

	// Path is the file the config was read from; Dir its directory.
	Path string `yaml:"-"`
	Dir  string `yaml:"-"`
}

// Find looks for FileName in dir and its parents and returns its path, or
// "" when there is none.
func Find(dir string) (string, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for {
		p := filepath.Join(dir, FileName)
		fi, err := os.Stat(p)
		switch {
		case err == nil && !fi.IsDir():
			return p, nil
		case err != nil && !errors.Is(err, fs.ErrNotExist):
			return "", err
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", nil
		}
		dir = parent
	}
}

// Load reads and parses a config file.
func Load(p string) (*Config, error) {
	data, err := os.ReadFile(p)
	if err != nil {
		return nil, err
	}
	c, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return nil, err
	}
	c.Path, c.Dir = p, filepath.Dir(abs)
	return c, nil
}

// Parse decodes a config document. Unknown keys and values of the wrong
// type are errors with their line ("line 3: field selct not found").
func Parse(data []byte) (*Config, error) {
	c := &Config{}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	// An empty document (only comments) is an empty config.
	if err := dec.Decode(c); err != nil && !errors.Is(err, io.EOF) {
		var te *yaml.TypeError
		if errors.As(err, &te) {
			return nil, errors.New(strings.Join(te.Errors, "; "))
		}
		return nil, err
	}
	for glob := range c.PerPathIgnores {
		if _, err := path.Match(strings.ReplaceAll(glob, "**", "*"), ""); err != nil {
			return nil, fmt.Errorf("per-path-ignores: bad glob %q: %w", glob, err)
		}
	}
	return c, nil
}

// Resolve makes a path from the config relative to its directory; an
// absolute path, or "-", stays as it is.
func (c *Config) Resolve(p string) string {
	if p == "" || p == "-" || filepath.IsAbs(p) || c.Dir == "" {
		return p
	}
	return filepath.Join(c.Dir, p)
}

// IgnoredAt returns the rules and areas that per-path-ignores turns off for
// a file. The file's path is taken relative to the config file's directory;
// a file outside it matches no glob.
func (c *Config) IgnoredAt(file string) []string {
	if len(c.PerPathIgnores) == 0 {
		return nil
	}
	abs, err := filepath.Abs(file)
	if err != nil {
		return nil
	}
	rel, err := filepath.Rel(c.Dir, abs)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return nil
	}
	rel = filepath.ToSlash(rel)
	var out []string
	for glob, rules := range c.PerPathIgnores {
		if MatchGlob(glob, rel) {
			out = append(out, rules...)
		}
	}
	return out
}

// MatchGlob matches a slash-separated path against a glob in which "**" is
// any number of whole path segments (zero included) and every other segment
// follows path.Match ("*" does not cross "/"). A glob without "/" matches
// the file name at any depth, as in .gitignore.
func MatchGlob(glob, name string) bool {
	if !strings.Contains(glob, "/") {
		glob = "**/" + glob
	}
	return matchSegments(strings.Split(glob, "/"), strings.Split(name, "/"))
}

func matchSegments(glob, name []string) bool {
	for len(glob) > 0 {
		if glob[0] == "**" {
			for i := 0; i <= len(name); i++ {
				if matchSegments(glob[1:], name[i:]) {
					return true
				}
			}
			return false
		}
		if len(name) == 0 {
			return false
		}
		if ok, _ := path.Match(glob[0], name[0]); !ok {
			return false
		}
		glob, name = glob[1:], name[1:]
	}
	return len(name) == 0
}
